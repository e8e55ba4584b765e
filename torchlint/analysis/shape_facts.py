"""What a value's shape shows beyond its kind: a boolean mask, a tensor whose size the
data decides, a 0-d tensor the graph computes.

Rules read these facts (`x[mask]` has a data-dependent size; `t.max()` is one number in
the graph, not a Python value), and the kinds read the data-sized ones: the size of a
data-sized tensor is a number Dynamo captured, where it captures them.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from torchlint.parse.cst_walk import single_index
from torchlint.analysis.kind_vocabulary import PYTHON, SIZE, TENSOR, Kind
from torchlint.analysis.scopes import Scope, qualified_name
from torchlint.analysis.undo_journal import Changes, Journal, JournaledSet


class ShapeFacts:
    """The shape facts of one function's names, as its statements run in order.

    Mixed into ``KindEnv``, which gives ``kind_of``, the function's ``scope`` and whether
    Dynamo captures data-dependent output shapes there."""

    kind_of: Callable[[cst.BaseExpression], Kind]
    scope: Scope
    shapes_captured: bool

    def start_shape_facts(self, journal: Journal) -> None:
        # Names holding a boolean tensor (a mask): `m = x > 0`, `m = torch.isnan(x)`.
        self.masks = JournaledSet(journal)
        # Names holding a tensor whose size depends on the data, where Dynamo captures it.
        self.data_sized = JournaledSet(journal)
        # Names holding a 0-d tensor the graph computes: `top = scores.argmax()`.
        self.zero_dim = JournaledSet(journal)

    # True while a statement binds again in the up world (`open_kinds`): shape facts are the
    # base world's.
    _shapes_frozen = False

    def record_shape_facts(self, name: str, value: cst.BaseExpression) -> None:
        """What ``value``, just bound to ``name``, shows."""
        if self._shapes_frozen:
            return
        for found, names in (
            (self.is_mask(value), self.masks),
            (self.is_data_sized(value), self.data_sized),
            (self.is_zero_dim(value), self.zero_dim),
        ):
            if found:
                names.add(name)
            else:
                names.discard(name)

    def record_iteration(self, target: cst.BaseExpression, iterable: cst.BaseExpression) -> None:
        if self._shapes_frozen:
            return
        if isinstance(target, cst.Name) and self._is_vector(iterable):
            self.zero_dim.add(target.value)  # `for i in torch.arange(n)`

    def forget_shape_facts(self, name: str) -> None:
        """A name bound anew holds neither a mask, a data-sized nor a 0-d tensor until shown to."""
        if self._shapes_frozen:
            return
        self.masks.discard(name)
        self.data_sized.discard(name)
        self.zero_dim.discard(name)

    def join_shape_facts(self, name: str, outcomes: list[Changes], bound: list[bool]) -> None:
        """The facts about ``name`` after an `if`: ``outcomes`` are the changes of each branch
        that goes on, ``bound`` whether it bound the name."""
        _set_membership(self.masks, name, _left_by_every_branch(self.masks.left_by(outcomes, name), bound))
        _set_membership(self.zero_dim, name, _left_by_every_branch(self.zero_dim.left_by(outcomes, name), bound))
        _set_membership(self.data_sized, name, any(self.data_sized.left_by(outcomes, name)))

    # -- data-dependent sizes -------------------------------------------------------

    def is_data_sized(self, node: cst.BaseExpression) -> bool:
        """A tensor whose size depends on the data and that Dynamo keeps in the graph."""
        if not self.shapes_captured:
            return False
        if isinstance(node, cst.Name):
            return node.value in self.data_sized
        if isinstance(node, cst.Subscript):
            indices = [e.slice.value for e in node.slice if isinstance(e.slice, cst.Index)]
            return any(self.is_mask(index) for index in indices) or self.is_data_sized(node.value)
        if isinstance(node, cst.Call):
            name = qualified_name(node.func, self.scope)
            if name in _DATA_SIZED_FUNCTIONS:
                return True
            func = node.func
            if isinstance(func, cst.Attribute) and self.kind_of(func.value) is TENSOR:
                return func.attr.value in _DATA_SIZED_METHODS or (
                    func.attr.value in _LAYOUT_METHODS and self.is_data_sized(func.value)
                )
        return False

    # -- 0-d tensors --------------------------------------------------------------------
    # (Node types are compared exactly: libcst's classes are final, and an ABC `isinstance`
    # costs several times as much on these hot paths.)

    def is_zero_dim(self, node: cst.BaseExpression) -> bool:
        """A 0-d tensor the graph computes: a full reduction (`t.max()`, `torch.sum(t)`), an
        element of a 1-d tensor (`m.nonzero(as_tuple=True)[0][0]`), or arithmetic on one
        with plain numbers (`index + 1`). A parameter is not one: it may be a graph input."""
        if type(node) is cst.Name:
            return node.value in self.zero_dim
        if type(node) is cst.BinaryOperation:
            sides = (node.left, node.right)
            return any(self.is_zero_dim(side) for side in sides) and all(
                self.is_zero_dim(side) or self.kind_of(side) in (PYTHON, SIZE) for side in sides
            )
        if type(node) is cst.UnaryOperation and type(node.operator) in (cst.Minus, cst.Plus):
            return self.is_zero_dim(node.expression)
        if type(node) is cst.Subscript:
            return self._is_vector(node.value) and self._single_number_index(node)
        if type(node) is cst.Call:
            func = node.func
            if type(func) is cst.Attribute and func.attr.value in _FULL_REDUCTIONS and not node.args:
                if self.kind_of(func.value) is TENSOR:
                    return True
            name = qualified_name(func, self.scope)
            return (
                name is not None
                and name.startswith("torch.")
                and name[len("torch."):] in _FULL_REDUCTIONS
                and len(node.args) == 1
                and node.args[0].keyword is None
                and self.kind_of(node.args[0].value) is TENSOR
            )
        return False

    def _single_number_index(self, node: cst.Subscript) -> bool:
        index = single_index(node)
        return index is not None and self.kind_of(index) in (PYTHON, SIZE)

    def _is_vector(self, node: cst.BaseExpression) -> bool:
        """A 1-d tensor: `torch.arange(n)`, `t.flatten()`, `t.view(-1)`, or one of the
        index tensors `nonzero(as_tuple=True)` or one-argument `torch.where` returns."""
        if isinstance(node, cst.Subscript) and self._single_number_index(node):
            call = node.value
            if not isinstance(call, cst.Call):
                return False
            name = qualified_name(call.func, self.scope)
            if name == "torch.where":
                return len(call.args) == 1
            as_tuple = any(
                arg.keyword is not None and arg.keyword.value == "as_tuple" and _is_true(arg.value) for arg in call.args
            )
            method = call.func.attr.value if isinstance(call.func, cst.Attribute) else None
            return as_tuple and (name == "torch.nonzero" or method == "nonzero")
        if not isinstance(node, cst.Call):
            return False
        if qualified_name(node.func, self.scope) == "torch.arange":
            return True
        func = node.func
        if not isinstance(func, cst.Attribute) or self.kind_of(func.value) is not TENSOR:
            return False
        args = [arg.value for arg in node.args]
        if func.attr.value in ("flatten", "ravel"):
            return not args
        if func.attr.value in ("view", "reshape"):
            return len(args) == 1 and _is_minus_one(args[0])
        return False

    # -- masks ----------------------------------------------------------------------

    def is_mask(self, node: cst.BaseExpression) -> bool:
        """A boolean tensor: a tensor comparison, a logical op of masks, `isnan(...)`, `.bool()`."""
        if type(node) is cst.Name:
            return node.value in self.masks
        if type(node) is cst.Comparison:
            return self.kind_of(node) is TENSOR and not any(
                type(c.operator) in (cst.In, cst.NotIn) for c in node.comparisons
            )
        if type(node) is cst.UnaryOperation and type(node.operator) is cst.BitInvert:
            return self.is_mask(node.expression)
        if type(node) is cst.Subscript:
            return self.is_mask(node.value)  # `mask[:, :, i]` is still boolean
        if type(node) is cst.BinaryOperation and type(node.operator) in (cst.BitAnd, cst.BitOr, cst.BitXor):
            return self.is_mask(node.left) or self.is_mask(node.right)
        if type(node) is cst.Call:
            name = qualified_name(node.func, self.scope)
            if name in _MASK_FUNCTIONS:
                return True
            func = node.func
            if type(func) is cst.Attribute and func.attr.value in _MASK_METHODS:
                return self.kind_of(node) is TENSOR  # `x.bool()` makes `x` one, whatever it was
            if type(func) is cst.Attribute and func.attr.value in _LAYOUT_METHODS:
                return self.is_mask(func.value)  # a reshaped mask is a mask
            if type(func) is cst.Attribute and func.attr.value in _MOVES and _device_only(node):
                return self.is_mask(func.value)  # `mask.to(x.device)` keeps its dtype
        return False


# Reductions that, called without a dim, give a 0-d tensor.
_FULL_REDUCTIONS = frozenset(
    {"sum", "mean", "max", "min", "amax", "amin", "prod", "argmax", "argmin", "median", "count_nonzero"}
)
# Ops whose output size is read from the data.
_DATA_SIZED_METHODS = frozenset({"nonzero", "argwhere", "unique", "unique_consecutive", "masked_select"})
_DATA_SIZED_FUNCTIONS = frozenset(f"torch.{name}" for name in _DATA_SIZED_METHODS)
_MASK_FUNCTIONS = frozenset(
    {"torch.isnan", "torch.isinf", "torch.isfinite", "torch.isneginf", "torch.isposinf", "torch.logical_and",
     "torch.logical_or", "torch.logical_not", "torch.logical_xor", "torch.isin", "torch.eq", "torch.ne",
     "torch.gt", "torch.lt", "torch.ge", "torch.le", "torch.isclose", "torch.signbit", "torch.all", "torch.any"}
)
_LAYOUT_METHODS = frozenset(
    {"view", "reshape", "flatten", "squeeze", "unsqueeze", "expand", "expand_as", "t", "transpose", "permute",
     "contiguous", "clone", "detach", "repeat", "tile", "flip", "roll", "movedim", "swapaxes", "swapdims",
     "narrow", "broadcast_to"}
)
# Methods that move a tensor, and change its dtype only when told one.
_MOVES = frozenset({"to", "cuda", "cpu"})


def _device_only(call: cst.Call) -> bool:
    """`.to(x.device)`, `.to(device=d, non_blocking=True)`, `.cuda()`: no dtype among the
    arguments, so a boolean tensor stays boolean."""
    for arg in call.args:
        keyword = arg.keyword.value if arg.keyword is not None else None
        if keyword in ("device", "non_blocking", "copy", "memory_format"):
            continue
        value = arg.value
        named = value.attr.value if type(value) is cst.Attribute else value.value if type(value) is cst.Name else None
        if keyword is None and named in ("device", "dev") or (type(value) is cst.SimpleString and keyword is None):
            continue
        return False
    return True
_MASK_METHODS = frozenset(
    {"bool", "eq", "ne", "gt", "lt", "ge", "le", "isnan", "isinf", "isfinite", "logical_and", "logical_or",
     "logical_not", "isclose", "signbit", "all", "any"}
)


def _set_membership(names: set[str], name: str, member: bool) -> None:
    # Only a change is journaled: a branch costs what it changes.
    if member != (name in names):
        if member:
            names.add(name)
        else:
            names.discard(name)


def _left_by_every_branch(held: list[bool], bound: list[bool]) -> bool:
    """A name holds a mask (a 0-d tensor) after an `if` only where every branch that binds
    it left one; ``held`` and ``bound`` say, branch by branch, whether it did."""
    return any(held) and all(was_held for was_held, was_bound in zip(held, bound) if was_bound)


def _is_true(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "True"


def _is_minus_one(node: cst.BaseExpression) -> bool:
    return (
        isinstance(node, cst.UnaryOperation)
        and isinstance(node.operator, cst.Minus)
        and isinstance(node.expression, cst.Integer)
        and node.expression.value == "1"
    )

