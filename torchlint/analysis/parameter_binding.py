"""The kinds a function's parameters hold when it starts.

An annotation says what a parameter holds; a constant default makes it plain Python; an
unannotated parameter the body uses as only a tensor can be used (`x.view(...)`) is a
tensor. The others are open: what the project's callers pass decides them, and a tensor any
caller passes overrides a scalar annotation (`timestep: int` that a loop over a tensor fills
is a tensor while Dynamo traces). An open parameter is a tensor where its ``ParamTensor``
fact holds (`open_kinds`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

import libcst as cst

from torchlint.parse.cst_walk import comparison_operands, conjuncts, walk
from torchlint.analysis.conditions import ParamTensor
from torchlint.analysis.kind_vocabulary import (
    MODULE,
    PYTHON,
    TENSOR,
    UNKNOWN,
    Kind,
    annotation_kind,
    is_constant,
    is_container_annotation,
    is_tensor_type,
    takes_a_tensor_first,
)
from torchlint.analysis.scopes import Scope, dotted_name, qualified_name
from torchlint.analysis.open_kinds import Held, OpenKind
from torchlint.analysis.summary import ClassInfo, FileSummary, FunctionInfo, target_names

# Attribute or method use on an unannotated parameter that only a tensor supports.
_TENSOR_EVIDENCE = frozenset(
    {"shape", "dtype", "device", "view", "reshape", "size", "dim", "unsqueeze", "squeeze", "transpose",
     "permute", "contiguous", "float", "half", "bfloat16", "masked_fill", "masked_fill_", "softmax",
     "matmul", "expand", "expand_as", "flatten", "chunk", "narrow", "new_zeros", "new_ones", "new_full",
     "new_empty", "type_as", "detach", "numel", "ndim", "is_cuda", "clamp", "view_as", "unbind",
     "requires_grad", "to", "sum", "mean", "repeat", "split", "transpose_", "mul_", "add_", "div_", "any",
     "all", "bool", "long", "masked_select", "nonzero", "argmax", "softmax", "unsqueeze_", "numpy", "cpu", "cuda",
     "abs", "exp", "log", "sqrt", "pow", "norm", "max", "min", "argsort", "topk", "gather", "index_select",
     "masked_fill", "float", "clamp_", "sigmoid", "tanh", "relu", "cumsum", "flip", "roll", "squeeze_"}
)
# Tensor attributes that are values, not methods: calling one means the object is no tensor.
_NOT_CALLABLE_ON_TENSORS = frozenset({"shape", "dtype", "device", "ndim", "is_cuda", "requires_grad", "T", "data"})


class BoundParameters(NamedTuple):
    kinds: dict[str, Held]
    # The parameter that is the method's `self`; None in a function, a static method, or
    # for a classmethod's `cls`.
    self_name: str | None
    # The parameters the body itself shows to be tensors (`x.view(...)`): a caller that hands
    # one of its own parameters over hands a tensor.
    evidence: frozenset[str]


def bind_parameters(function: FunctionInfo, owner: ClassInfo | None, summary: FileSummary) -> BoundParameters:
    """The kinds ``function``'s parameters hold as it starts, and which one is its `self`.

    ``owner``: the class whose `self` is visible in ``function``."""
    node = function.node
    kinds: dict[str, Kind] = {}
    params = [*node.params.posonly_params, *node.params.params, *node.params.kwonly_params]
    self_name = function.self_name
    decorators = {qualified_name(d.decorator, function.enclosing) for d in node.decorators}
    if "builtins.staticmethod" in decorators:
        self_name = None  # the first parameter is an ordinary argument
    elif "builtins.classmethod" in decorators and self_name is not None:
        kinds[self_name] = UNKNOWN
        self_name = None
    unannotated = set()
    # Parameters a caller's tensor overrides.
    scalars = set()
    for param in params:
        name = param.name.value
        if name in kinds:
            continue
        if name == self_name:
            # Every method of a class with a `forward` is taken for a module method.
            kinds[name] = MODULE if owner is not None and "forward" in owner.methods else UNKNOWN
        elif param.annotation is not None:
            annotation = param.annotation.annotation
            kind = annotation_kind(annotation, function.enclosing)
            if kind is UNKNOWN and _names_module_class(annotation, function, summary):
                kind = MODULE
            kinds[name] = kind
            # A scalar a caller's tensor may stand in for; a container stays one.
            if kind in (PYTHON, UNKNOWN) and not is_container_annotation(annotation, function.enclosing):
                scalars.add(name)
        elif param.default is not None and is_constant(param.default) and not (
            isinstance(param.default, cst.Name) and param.default.value == "None"
        ):
            kinds[name] = PYTHON
            scalars.add(name)
        else:
            unannotated.add(name)
            kinds[name] = UNKNOWN
    if self_name is not None:
        unannotated.discard(self_name)
    evidence = _parameter_evidence(node, unannotated, function.enclosing) if unannotated else set()
    for name in evidence:
        kinds[name] = TENSOR
        unannotated.discard(name)
    first = _module_input(function, self_name, kinds)
    if first is not None and first in unannotated and not _used_as_size(node, first):
        kinds[first] = TENSOR
        unannotated.discard(first)
    held: dict[str, Held] = dict(kinds)
    for name in unannotated | scalars:
        held[name] = OpenKind(kinds[name], TENSOR, frozenset({ParamTensor(function.qualname, name)}))
    for star in (node.params.star_arg, node.params.star_kwarg):
        if isinstance(star, cst.Param):
            held[star.name.value] = PYTHON
    return BoundParameters(held, self_name, frozenset(evidence))


def _module_input(function: FunctionInfo, self_name: str | None, kinds: Mapping[str, Kind]) -> str | None:
    """The first parameter after `self` of a module's `forward`, without a default: what a
    module is called with, a tensor unless something says otherwise."""
    if function.name != "forward" or self_name is None or kinds.get(self_name) is not MODULE:
        return None
    params = function.node.params.params
    if len(params) < 2 or params[1].default is not None:
        return None
    return params[1].name.value


# Calls whose arguments are sizes or counts (`arange(j - i, j)`, `range(n)`).
_SIZE_TAKERS = frozenset({"range", "arange", "zeros", "ones", "empty", "full", "randn", "rand", "randint", "eye"})


def _used_as_size(function: cst.FunctionDef, name: str) -> bool:
    """Whether the body uses ``name`` as a size: a slice bound, an argument of `range` or
    `arange`, or compared with a shape (`n <= x.shape[-1]`)."""
    found = False

    def mentions(node: cst.CSTNode | None) -> bool:
        hit = False

        def visit(inner: cst.CSTNode) -> bool | None:
            nonlocal hit
            hit = hit or (type(inner) is cst.Name and inner.value == name)
            return None

        if node is not None:
            walk(node, visit)
        return hit

    def visit(node: cst.CSTNode) -> bool | None:
        nonlocal found
        if type(node) is cst.Slice:
            found = found or mentions(node.lower) or mentions(node.upper)
        elif type(node) is cst.Call:
            callee = dotted_name(node.func) or ""
            if callee.rpartition(".")[2] in _SIZE_TAKERS:
                found = found or any(mentions(arg.value) for arg in node.args if arg.keyword is None)
        elif type(node) is cst.Comparison:
            sides = comparison_operands(node)
            if any(mentions(side) for side in sides) and any(_reads_shape(side) for side in sides):
                found = True
        return True if found else None

    walk(function.body, visit)
    return found


def _reads_shape(node: cst.CSTNode) -> bool:
    """`x.shape[...]`, `x.size(...)`, `len(x)`."""
    if type(node) is cst.Subscript:
        node = node.value
    if type(node) is cst.Attribute:
        return node.attr.value == "shape"
    if type(node) is cst.Call:
        func = node.func
        return (type(func) is cst.Attribute and func.attr.value == "size") or (
            type(func) is cst.Name and func.value == "len"
        )
    return False


def _names_module_class(annotation: cst.BaseExpression, function: FunctionInfo, summary: FileSummary) -> bool:
    """`model: nn.Module`, or a class of this file with a `forward`."""
    name = qualified_name(annotation, function.enclosing)
    if name is not None:
        return name.startswith("torch.nn.") and name.rsplit(".", 1)[-1][:1].isupper()
    info = summary.classes.get(dotted_name(annotation) or "")
    return info is not None and "forward" in info.methods


def _parameter_evidence(function: cst.FunctionDef, names: set[str], scope: Scope) -> set[str]:
    """Unannotated parameters the body uses the way only a tensor can be used: a tensor-only
    attribute or method; the input of a torch function that takes only a tensor there
    (`torch.topk(x, k)`, `F.softmax(x)`); a comparison with a method called on its result
    (`(x > 0).sum()`: a Python bool has none); an assertion that it is one.

    Calling what a tensor only has as data (`backend.shape(x)`) shows a namespace or a
    backend object, whatever else it is asked for.
    """
    found: set[str] = set()
    not_tensors: set[str] = set()
    scaled = _scaled_copies(function, names)
    names = names | set(scaled)

    # Exact types: libcst's classes are final, and far cheaper to compare than an ABC check.
    def visit(node: cst.CSTNode) -> bool | None:
        if type(node) is cst.Attribute:
            value = node.value
            if type(value) is cst.Name and value.value in names and node.attr.value in _TENSOR_EVIDENCE:
                found.add(value.value)
            elif type(value) is cst.Comparison:
                found.update(_compared(value, names))
        elif type(node) is cst.Call:
            func = node.func
            if type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value in names:
                if func.attr.value in _NOT_CALLABLE_ON_TENSORS:
                    not_tensors.add(func.value.value)
            elif node.args and type(first := node.args[0].value) is cst.Name and first.value in names:
                arg = node.args[0]
                if arg.keyword is None and not arg.star and takes_a_tensor_first(func, scope):
                    found.add(first.value)
        elif type(node) is cst.Assert:
            found.update(name for name in _asserted_tensors(node.test, scope) if name in names)
        return None

    walk(function.body, visit)
    return {scaled.get(name, name) for name in found - not_tensors} - {
        scaled.get(name, name) for name in not_tensors
    }


# Statements that bind one target, other than `=`.
_SINGLE_TARGET = (cst.AugAssign, cst.AnnAssign, cst.For)


def _scaled_copies(function: cst.FunctionDef, names: set[str]) -> dict[str, str]:
    """Locals bound once to one parameter and number literals (`y = x * 2`, `z = -x / 255.0`),
    each to its parameter: what only a tensor supports on the local, the parameter supports
    too, as a number times a number is a number."""
    bound: dict[str, list[cst.BaseExpression | None]] = {}

    def visit(node: cst.CSTNode) -> bool | None:
        if type(node) is cst.Assign:
            for target in node.targets:
                value = node.value if type(target.target) is cst.Name else None
                for name in target_names(target.target):
                    bound.setdefault(name, []).append(value)
        elif type(node) in _SINGLE_TARGET:
            assert isinstance(node, _SINGLE_TARGET)
            for name in target_names(node.target):
                bound.setdefault(name, []).append(None)
        return None

    walk(function.body, visit)
    copies = {}
    for local, values in bound.items():
        source = _scaled_parameter(values[0], names) if len(values) == 1 and local not in names else None
        if source is not None:
            copies[local] = source
    return copies


_NUMBERS = (cst.Integer, cst.Float)


def _scaled_parameter(value: cst.BaseExpression | None, names: set[str]) -> str | None:
    """The parameter ``value`` is arithmetic on, when the rest of it is number literals."""
    if type(value) is cst.Name:
        return value.value if value.value in names else None
    if type(value) is cst.UnaryOperation and type(value.operator) is cst.Minus:
        return _scaled_parameter(value.expression, names)
    if type(value) is cst.BinaryOperation:
        left, right = value.left, value.right
        if type(right) in _NUMBERS:
            return _scaled_parameter(left, names)
        if type(left) in _NUMBERS:
            return _scaled_parameter(right, names)
    return None


def _compared(comparison: cst.Comparison, names: set[str]) -> list[str]:
    """The parameters an element-wise comparison holds (`==`, `<`, ...; not `in` or `is`)."""
    if any(type(c.operator) in (cst.In, cst.NotIn, cst.Is, cst.IsNot) for c in comparison.comparisons):
        return []
    sides = comparison_operands(comparison)
    return [side.value for side in sides if type(side) is cst.Name and side.value in names]


def _asserted_tensors(test: cst.BaseExpression, scope: Scope) -> list[str]:
    """`assert isinstance(t, torch.Tensor)`, `assert torch.is_tensor(t)`, joined by `and`."""
    return [name for condition in conjuncts(test) if (name := _asserted_tensor(condition, scope)) is not None]


def _asserted_tensor(test: cst.BaseExpression, scope: Scope) -> str | None:
    if not isinstance(test, cst.Call) or not test.args or not isinstance(test.args[0].value, cst.Name):
        return None
    name = qualified_name(test.func, scope)
    if name == "torch.is_tensor" and len(test.args) == 1:
        return test.args[0].value.value
    if name == "builtins.isinstance" and len(test.args) == 2 and is_tensor_type(test.args[1].value, scope):
        return test.args[0].value.value
    return None

