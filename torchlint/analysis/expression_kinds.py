"""The kind of an expression: what a name holds, what a call, an attribute, an operator
or a comparison gives.

A call into the project takes what its callee returns, an open kind the project's solve
decides (`open_kinds`); `self.<attr>` takes the kind the class's assignments give it; a side
a guard rules out while compiling counts for nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import libcst as cst

from torchlint.parse.cst_walk import comparison_operands
from torchlint.analysis.conditions import HeldTensor, ReturnsCaptured, ReturnsTensor
from torchlint.analysis.kind_vocabulary import (
    ARRAY_ONLY_METHODS,
    CAPTURED,
    MATH_PREFIX,
    META,
    META_ATTRIBUTES,
    MODULE,
    NN_FUNCTIONAL,
    PYTHON,
    SIZE,
    SIZE_ATTRIBUTES,
    TENSOR,
    TENSOR_ATTRIBUTES,
    TENSOR_METHOD_KINDS,
    TORCH_DTYPES,
    TORCH_NON_TENSOR,
    TORCH_NON_TENSOR_PREFIXES,
    TORCH_SCALAR_MATH,
    UNKNOWN,
    Kind,
    arithmetic_kind,
    is_constant,
    join_kinds,
)
from torchlint.analysis.scopes import Scope, qualified_name

if TYPE_CHECKING:
    from torchlint.analysis.file_kinds import FileKinds
    from torchlint.analysis.guards import RuledOut
    from torchlint.analysis.open_kinds import World
    from torchlint.analysis.summary import ClassInfo, FunctionInfo

class ExpressionKinds:
    """The kinds of one function's expressions, from what its names hold so far.

    Mixed into ``KindEnv``, which keeps the names' kinds and the facts about the function
    read here; ``is_data_sized`` comes from ``ShapeFacts``."""

    file_kinds: FileKinds
    function: FunctionInfo
    scope: Scope
    world: World
    held_kind: Callable[[str], Kind | None]
    self_name: str | None  # `self`, where the function is a method that has one
    owner: ClassInfo | None  # the class whose `self` is visible here
    scalars_captured: bool
    ruled_out: RuledOut
    is_data_sized: Callable[[cst.BaseExpression], bool]

    def kind_of(self, node: cst.BaseExpression) -> Kind:
        method: Callable[[cst.BaseExpression], Kind] | None = getattr(self, f"_kind_{type(node).__name__}", None)
        return method(node) if method is not None else UNKNOWN

    def _kind_Name(self, node: cst.Name) -> Kind:
        if node.value in ("True", "False", "None"):
            return PYTHON
        held = self.held_kind(node.value)
        if held is not None:
            return held
        module = self.file_kinds.summary.scope
        value = module.assignments.get(node.value)
        if value is not None and node.value not in self.scope.bindings and is_constant(value):
            return PYTHON
        return UNKNOWN

    def _constant(self, node: cst.CSTNode) -> Kind:
        return PYTHON

    _kind_Integer = _kind_Float = _kind_Imaginary = _kind_SimpleString = _constant
    _kind_ConcatenatedString = _kind_FormattedString = _kind_Lambda = _constant
    _kind_Dict = _kind_Set = _kind_DictComp = _kind_SetComp = _constant

    def _kind_Tuple(self, node: cst.Tuple | cst.List) -> Kind:
        kinds = {self.kind_of(e.value) for e in node.elements if not isinstance(e, cst.StarredElement)}
        # `tuple(x.shape)`-like literals of sizes are sizes.
        return SIZE if kinds == {SIZE} else PYTHON

    _kind_List = _kind_Tuple

    def _kind_ListComp(self, node: cst.ListComp) -> Kind:
        return PYTHON

    def _kind_NamedExpr(self, node: cst.NamedExpr) -> Kind:
        return self.kind_of(node.value)

    def _kind_Attribute(self, node: cst.Attribute) -> Kind:
        attribute = node.attr.value
        if attribute in SIZE_ATTRIBUTES:
            return CAPTURED if attribute == "shape" and self.is_data_sized(node.value) else SIZE
        if attribute in META_ATTRIBUTES:
            return META
        base = node.value
        if isinstance(base, cst.Name) and base.value == self.self_name:
            return self._self_attribute(attribute)
        name = qualified_name(node, self.scope)
        if name is not None and name.startswith("torch."):
            return META if attribute in TORCH_DTYPES else UNKNOWN
        if self._held_member(node):
            return TENSOR
        base_kind = self.kind_of(base)
        if base_kind is TENSOR and attribute in TENSOR_ATTRIBUTES:
            return TENSOR
        if base_kind is PYTHON:
            return PYTHON  # `self.config.hidden_size`
        return UNKNOWN

    def _self_attribute(self, attribute: str) -> Kind:
        if attribute == "training":
            return META
        if self.owner is None:
            return UNKNOWN
        return self.file_kinds.members.attribute_kind(self.owner, attribute)

    def _held_member(self, node: cst.Attribute) -> bool:
        """`self.scheduler.timesteps`, where `self.scheduler` keeps an object given to `__init__`
        whose class sets `timesteps` to a tensor: the project's constructions tell."""
        holder = node.value
        if not (
            isinstance(holder, cst.Attribute)
            and isinstance(holder.value, cst.Name)
            and holder.value.value == self.self_name
            and self.owner is not None
            and self.file_kinds.index.keeps_argument(self.owner, holder.attr.value)
        ):
            return False
        fact = HeldTensor(self.owner.qualname, holder.attr.value, node.attr.value)
        return self.world.fact(fact, TENSOR, UNKNOWN) is TENSOR

    def _kind_Subscript(self, node: cst.Subscript) -> Kind:
        base = self.kind_of(node.value)
        if base in (TENSOR, SIZE, MODULE, CAPTURED):
            return base
        return UNKNOWN

    def _kind_BinaryOperation(self, node: cst.BinaryOperation) -> Kind:
        return arithmetic_kind([self.kind_of(node.left), self.kind_of(node.right)])

    def _kind_UnaryOperation(self, node: cst.UnaryOperation) -> Kind:
        kind = self.kind_of(node.expression)
        if isinstance(node.operator, cst.Not):
            # `not t` asks for the tensor's truth value: the kind stays a tensor so that
            # conditions see it.
            return kind if kind in (TENSOR, CAPTURED, UNKNOWN) else PYTHON
        return kind

    def _kind_BooleanOperation(self, node: cst.BooleanOperation) -> Kind:
        if node.right in self.ruled_out:
            return self.kind_of(node.left)  # a guard short-circuits: the right side never runs
        kinds = [self.kind_of(node.left), self.kind_of(node.right)]
        if TENSOR in kinds:
            return TENSOR
        if CAPTURED in kinds:
            return CAPTURED
        return UNKNOWN if UNKNOWN in kinds else PYTHON

    def _kind_Comparison(self, node: cst.Comparison) -> Kind:
        operators = [target.operator for target in node.comparisons]
        if any(isinstance(op, (cst.Is, cst.IsNot)) for op in operators):
            return PYTHON
        operands = comparison_operands(node)
        if any(isinstance(op, (cst.In, cst.NotIn)) for op in operators):
            # `x in t` looks into the tensor's data; `k in dict` does not.
            return TENSOR if self.kind_of(operands[-1]) is TENSOR else PYTHON
        kinds = [self.kind_of(operand) for operand in operands]
        if TENSOR in kinds:
            return TENSOR
        if CAPTURED in kinds:
            return CAPTURED
        if UNKNOWN in kinds and not all(k in (UNKNOWN, PYTHON) for k in kinds if k is not UNKNOWN):
            return UNKNOWN
        return PYTHON if UNKNOWN not in kinds else UNKNOWN

    def _kind_IfExp(self, node: cst.IfExp) -> Kind:
        # Where a guard decides the test, only the side Dynamo evaluates counts.
        if node.body in self.ruled_out:
            return self.kind_of(node.orelse)
        if node.orelse in self.ruled_out:
            return self.kind_of(node.body)
        return join_kinds([self.kind_of(node.body), self.kind_of(node.orelse)])

    def _kind_Call(self, node: cst.Call) -> Kind:
        func = node.func
        name = qualified_name(func, self.scope)
        if name is not None:
            known = self._named_call(name, node)
            if known is not None:
                return known
        if isinstance(func, cst.Attribute):
            return self._method_call(func, node)
        if isinstance(func, cst.Name):
            held = self.held_kind(func.value)
            if held is MODULE:
                return TENSOR
            if held is None:
                return self._returned(node)
        if isinstance(func, cst.Subscript) and self.kind_of(func.value) is MODULE:
            return TENSOR  # self.layers[i](x)
        return UNKNOWN

    def _returned(self, call: cst.Call) -> Kind:
        """What a call of the project's code returns: a tensor where its callee returns one."""
        targets = self.file_kinds.returning_targets(call, self.function)
        world = self.world
        if any(world.fact(ReturnsTensor(target), TENSOR, UNKNOWN) is TENSOR for target in targets):
            return TENSOR
        if any(world.fact(ReturnsCaptured(target), CAPTURED, UNKNOWN) is CAPTURED for target in targets):
            return CAPTURED
        return UNKNOWN

    def _named_call(self, name: str, node: cst.Call) -> Kind | None:
        if name.startswith("torch."):
            if name in TORCH_NON_TENSOR:
                return TORCH_NON_TENSOR[name]
            if name in TORCH_SCALAR_MATH:
                # `torch.div(seq_len, 2, rounding_mode="trunc")` on sizes stays a size under Dynamo.
                kinds = {self.kind_of(arg.value) for arg in node.args if arg.keyword is None}
                if kinds and TENSOR not in kinds:
                    if SIZE in kinds:
                        return SIZE
                    return PYTHON if kinds == {PYTHON} else UNKNOWN
            if name.startswith(TORCH_NON_TENSOR_PREFIXES):
                return UNKNOWN
            if name.rpartition(".")[2].startswith("is_") and name != "torch.is_nonzero":
                return PYTHON  # `torch.npu.is_available()`, `torch.is_floating_point(x)`: a Python bool
            if name == "torch.nn.Parameter" or name.startswith(NN_FUNCTIONAL) or not name.startswith("torch.nn."):
                return TENSOR
            return MODULE  # nn.Linear(...) and friends
        if name.startswith(MATH_PREFIX):
            captured = any(self.kind_of(arg.value) is CAPTURED for arg in node.args)
            return CAPTURED if captured else PYTHON
        if name.startswith("builtins."):
            return self._builtin_call(name[len("builtins."):], node)
        return None

    def _builtin_call(self, name: str, node: cst.Call) -> Kind:
        args = [arg.value for arg in node.args if not arg.star]
        if name == "len":
            if args and self.is_data_sized(args[0]):
                return CAPTURED
            return SIZE if args and self.kind_of(args[0]) in (TENSOR, SIZE) else PYTHON
        if name in ("int", "float", "bool") and self.scalars_captured and args and self.kind_of(args[0]) is TENSOR:
            return CAPTURED
        if name in ("int", "float", "bool", "str", "repr", "isinstance", "issubclass", "hasattr",
                    "callable", "id", "hash", "range", "format", "type", "dict", "set", "frozenset"):
            return PYTHON
        if name in ("min", "max", "abs", "sum", "round", "pow", "divmod"):
            return arithmetic_kind(self.kind_of(arg) for arg in args) if args else UNKNOWN
        if name in ("tuple", "list"):
            return SIZE if args and self.kind_of(args[0]) is SIZE else PYTHON
        return UNKNOWN

    def _method_call(self, func: cst.Attribute, node: cst.Call) -> Kind:
        method = func.attr.value
        receiver = func.value
        if isinstance(receiver, cst.Name) and receiver.value == self.self_name:
            if self.owner is not None and method in self.owner.methods:
                return self._returned(node)
            kind = self._self_attribute(method)
            return TENSOR if kind is MODULE else self._returned(node)
        if isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Name) and receiver.func.value == "super":
            return UNKNOWN
        kind = self.kind_of(receiver)
        if kind is TENSOR:
            if method == "item" and self.scalars_captured:
                return CAPTURED
            if method in ("size", "numel") and self.is_data_sized(receiver):
                return CAPTURED
            return TENSOR_METHOD_KINDS.get(method, TENSOR)
        if kind is MODULE:
            return TENSOR if method in ("forward", "__call__") else UNKNOWN
        if kind is UNKNOWN and method in ARRAY_ONLY_METHODS:
            # Lists and numbers have no `.any()` or `.unsqueeze()`; what has one (a tensor,
            # an array) holds data.
            return TENSOR
        if kind is SIZE:
            return SIZE
        if kind is UNKNOWN and isinstance(receiver, (cst.Name, cst.Attribute)):
            return self._returned(node)  # `utils.helper(x)`, `self.block.encode(x)`
        return UNKNOWN
