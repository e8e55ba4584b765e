"""The kinds of value the linter tells apart, how they combine, and what torch gives.

Data-dependent rules fire only on TENSOR. A shape, a dtype or `self.training` is known
while tracing, so branching on it is free; a tensor's contents are not. Without evidence
a value stays UNKNOWN, and UNKNOWN is silent.

The tables say what torch's functions, tensor attributes and tensor methods give where
that is not a tensor, so that every part of the inference reads them from one place.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from typing import final

import libcst as cst

from torchlint.analysis.scopes import Scope, qualified_name


# Final, as an enum with members is: `type(x) is Kind` then tells a Kind from anything else.
@final
class Kind(enum.Enum):
    TENSOR = "tensor"
    SIZE = "size"  # shapes and sizes: static or symbolic, never data-dependent
    META = "meta"  # dtype, device, requires_grad, self.training
    PYTHON = "python"  # numbers, strings, None, containers, bools decided at trace time
    MODULE = "module"  # nn.Module instances: calling one gives a tensor
    # A data-dependent number Dynamo captured into the graph: `.item()` under
    # `capture_scalar_outputs`, a nonzero's size under `capture_dynamic_output_shape_ops`.
    # Arithmetic and sizes take it; Python branching on it still breaks.
    CAPTURED = "captured"
    UNKNOWN = "unknown"


TENSOR, SIZE, META, PYTHON, MODULE, CAPTURED, UNKNOWN = (
    Kind.TENSOR, Kind.SIZE, Kind.META, Kind.PYTHON, Kind.MODULE, Kind.CAPTURED, Kind.UNKNOWN,
)

_TENSOR_TYPES = frozenset(
    {"torch.Tensor", "torch.FloatTensor", "torch.LongTensor", "torch.BoolTensor", "torch.nn.Parameter",
     "torch.HalfTensor", "torch.DoubleTensor", "torch.IntTensor", "torch.ByteTensor", "torch.BFloat16Tensor"}
)
_PYTHON_TYPES = frozenset({"builtins.int", "builtins.float", "builtins.bool", "builtins.str", "builtins.bytes"})
# Containers: a value annotated as one is no tensor, whatever it holds.
CONTAINER_NAMES = frozenset(
    {"dict", "list", "tuple", "set", "frozenset", "Dict", "List", "Tuple", "Set", "FrozenSet", "Sequence",
     "Mapping", "MutableMapping", "MutableSequence", "Iterable", "Iterator", "Collection", "OrderedDict",
     "DefaultDict", "Deque", "deque", "defaultdict", "NamedTuple", "Callable"}
)
# What `isinstance(x, T)` may test for besides those: once it holds, `x` is a plain value.
_NUMBER_TYPES = frozenset(
    {"builtins.complex", "numbers.Number", "numbers.Real", "numbers.Integral", "numbers.Complex",
     "numbers.Rational", "builtins.list", "builtins.tuple", "builtins.dict", "builtins.set"}
)
SIZE_ATTRIBUTES = frozenset({"shape", "ndim"})
META_ATTRIBUTES = frozenset(
    {"dtype", "device", "is_cuda", "is_cpu", "requires_grad", "layout", "is_sparse", "is_quantized",
     "is_meta", "is_leaf", "is_mps", "is_nested"}
)
TENSOR_ATTRIBUTES = frozenset({"T", "mT", "H", "mH", "real", "imag", "data", "grad"})
_SIZE_METHODS = frozenset({"size", "dim", "numel", "ndimension", "nelement", "stride", "storage_offset"})
_META_METHODS = frozenset(
    {"is_inference", "is_contiguous", "is_floating_point", "is_complex", "get_device", "element_size", "is_pinned",
     "is_signed", "has_names"}
)
# Tensor methods whose result is a Python value pulled out of the data.
_PYTHON_METHODS = frozenset({"item", "tolist", "data_ptr", "numpy", "__len__", "__repr__", "__str__"})
# torch functions that do not return a tensor.
TORCH_NON_TENSOR = {
    "torch.is_tensor": PYTHON,
    "torch.is_inference": META,
    "torch.is_floating_point": META,
    "torch.is_complex": META,
    "torch.is_grad_enabled": PYTHON,
    "torch.is_autocast_enabled": PYTHON,
    "torch.is_inference_mode_enabled": PYTHON,
    "torch.equal": PYTHON,
    "torch.allclose": PYTHON,
    "torch.numel": SIZE,
    "torch.get_default_dtype": META,
    "torch.finfo": PYTHON,
    "torch.iinfo": PYTHON,
    "torch.Size": SIZE,
    "torch.device": META,
    "torch.dtype": META,
    "torch.promote_types": META,
    "torch.result_type": META,
    "torch.get_autocast_gpu_dtype": META,
    "torch.get_autocast_dtype": META,
    "torch.broadcast_shapes": SIZE,
    "torch.manual_seed": PYTHON,
    "torch.set_grad_enabled": PYTHON,
    "torch.no_grad": PYTHON,
    "torch.enable_grad": PYTHON,
    "torch.inference_mode": PYTHON,
    "torch.autocast": PYTHON,
    "torch.Generator": PYTHON,
    "torch.cuda.is_available": PYTHON,
    "torch.cuda.device_count": PYTHON,
    "torch.cuda.current_device": PYTHON,
    "torch.cuda.get_device_capability": PYTHON,
    "torch.distributed.is_initialized": PYTHON,
    "torch.distributed.is_available": PYTHON,
    "torch.distributed.get_rank": PYTHON,
    "torch.distributed.get_world_size": PYTHON,
    "torch.jit.is_scripting": PYTHON,
    "torch.jit.is_tracing": PYTHON,
    "torch.compiler.is_compiling": PYTHON,
    "torch.compiler.is_dynamo_compiling": PYTHON,
    "torch._dynamo.is_compiling": PYTHON,
    "torch.nn.functional.scaled_dot_product_attention": TENSOR,
}
# Prefixes of torch namespaces whose calls give no tensor.
TORCH_NON_TENSOR_PREFIXES = (
    "torch.cuda.", "torch.backends.", "torch.distributed.", "torch.jit.", "torch.compiler.", "torch._dynamo.",
    "torch.utils.", "torch.autograd.profiler.", "torch.profiler.", "torch.testing.", "torch.library.",
    "torch.fx.", "torch.onnx.", "torch.overrides.", "torch.types.", "torch._C.", "torch.hub.",
)
NN_FUNCTIONAL = "torch.nn.functional."
MATH_PREFIX = "math."
# What a tensor method gives when it gives no tensor.
TENSOR_METHOD_KINDS = {
    **{name: SIZE for name in _SIZE_METHODS},
    **{name: META for name in _META_METHODS},
    **{name: PYTHON for name in _PYTHON_METHODS},
}
# Methods only tensors and arrays have: what one is called on holds data, and so does its
# result. Names other objects share are left out (`expand` and `mask` of distributions,
# `to`, `float` and `cuda` of modules, `split` of strings, `sample`, `copy`).
ARRAY_ONLY_METHODS = frozenset(
    {"any", "all", "unsqueeze", "squeeze", "view", "view_as", "permute", "contiguous", "masked_fill",
     "expand_as", "bool", "new_zeros", "new_ones", "new_full", "new_empty", "type_as", "detach", "unbind",
     "narrow", "index_select", "masked_select", "long", "int", "short", "byte", "dot"}
)
# Attributes of `torch` that are dtypes (`torch.float16`).
TORCH_DTYPES = frozenset(
    {"float16", "float32", "float64", "bfloat16", "half", "float", "double", "int8", "int16", "int32", "int64",
     "long", "int", "short", "uint8", "bool", "complex64", "complex128", "cfloat", "float8_e4m3fn", "float8_e5m2"}
)
# torch functions that keep sizes sizes (`torch.div(seq_len, 2, rounding_mode="trunc")`).
TORCH_SCALAR_MATH = frozenset(
    {"torch.div", "torch.floor_divide", "torch.remainder", "torch.fmod", "torch.true_divide", "torch.add",
     "torch.sub", "torch.mul", "torch.sym_int", "torch.sym_float", "torch.sym_max", "torch.sym_min"}
)

# torch namespaces whose functions take a tensor as their first argument, and torch functions
# that take one there and nothing else (a Python number raises `TypeError`).
_TENSOR_FIRST_PREFIXES = (NN_FUNCTIONAL, "torch.linalg.", "torch.special.", "torch.fft.")
_TENSOR_FIRST = frozenset(
    f"torch.{name}"
    for name in (
        "abs", "exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "sign", "isfinite", "isnan", "isinf", "sum",
        "mean", "prod", "max", "min", "amax", "amin", "all", "any", "norm", "clamp", "clip", "where",
        "sigmoid", "tanh", "relu", "softmax", "log_softmax", "logsumexp", "matmul", "mm", "bmm", "sort",
        "argsort", "argmax", "argmin", "topk", "cumsum", "cumprod", "flatten", "reshape", "squeeze",
        "unsqueeze", "transpose", "permute", "flip", "roll", "gather", "index_select", "masked_fill",
        "diff", "floor", "ceil", "round", "trunc", "frac", "sin", "cos", "square", "var", "std",
        "nonzero", "count_nonzero", "unique", "diagonal", "tril", "triu", "chunk", "split", "narrow",
        "zeros_like", "ones_like", "full_like", "empty_like", "rand_like", "randn_like", "nan_to_num",
        "logical_not", "isclose", "bucketize", "repeat_interleave", "masked_select", "argwhere",
    )
)


def takes_a_tensor_first(func: cst.BaseExpression, scope: Scope) -> bool:
    """Whether the torch function ``func`` names takes only a tensor as its first argument."""
    name = qualified_name(func, scope)
    return name is not None and (name in _TENSOR_FIRST or name.startswith(_TENSOR_FIRST_PREFIXES))


def is_tensor_type(node: cst.BaseExpression, scope: Scope) -> bool:
    """`torch.Tensor` (or one of its legacy subclasses), as in `isinstance(x, torch.Tensor)`."""
    return qualified_name(node, scope) in _TENSOR_TYPES


def is_tensor(kind: Kind) -> bool:
    return kind is TENSOR


def is_data_dependent(kind: Kind) -> bool:
    """Python needs the value of the data to decide on it: a tensor, or a captured number."""
    return kind is TENSOR or kind is CAPTURED


def arithmetic_kind(kinds: Iterable[Kind]) -> Kind:
    """The kind of `a + b`, `max(a, b)`, ...: a tensor wins, then unknown, then a size."""
    kinds = set(kinds)
    if TENSOR in kinds:
        return TENSOR
    if CAPTURED in kinds:
        return CAPTURED
    if UNKNOWN in kinds or MODULE in kinds:
        return UNKNOWN
    if SIZE in kinds:
        return SIZE
    return PYTHON


def join_kinds(kinds: Iterable[Kind]) -> Kind:
    """One kind for values that may each be the one: equal kinds agree, else unknown.

    A tensor next to plain Python or an unknown value (`return None` beside `return t`,
    `prev = torch.tensor(-1)` on one branch and `prev = step - 1` on another) is taken for
    a tensor: on the path where it is one, using its value breaks the graph.
    """
    kinds = set(kinds)
    if len(kinds) == 1:
        return kinds.pop()
    if TENSOR in kinds and kinds <= {TENSOR, PYTHON, UNKNOWN}:
        return TENSOR
    if CAPTURED in kinds and kinds <= {CAPTURED, PYTHON, SIZE, UNKNOWN}:
        return CAPTURED
    return UNKNOWN


def annotation_kind(annotation: cst.BaseExpression, scope: Scope) -> Kind:
    """What a type annotation promises: `torch.Tensor`, `Optional[Tensor]`, `int`, ..."""
    if isinstance(annotation, (cst.SimpleString, cst.ConcatenatedString)):
        text = annotation.evaluated_value if isinstance(annotation, cst.SimpleString) else None
        if isinstance(text, str) and text.replace(" ", "").removeprefix("torch.").split("|")[0] == "Tensor":
            return TENSOR
        return UNKNOWN
    if isinstance(annotation, cst.BinaryOperation) and isinstance(annotation.operator, cst.BitOr):
        # `Tensor | None`
        return _optional_kind([annotation.left, annotation.right], scope)
    if isinstance(annotation, cst.Name) and annotation.value == "None":
        return PYTHON
    if isinstance(annotation, cst.Subscript):
        name = (qualified_name(annotation.value, scope) or "").rsplit(".", 1)[-1]
        members = [element.slice.value for element in annotation.slice if isinstance(element.slice, cst.Index)]
        if name == "Optional" and len(annotation.slice) == 1 and members:
            return annotation_kind(members[0], scope)
        if name == "Union" and len(members) == len(annotation.slice):
            return _optional_kind(members, scope)  # `Union[torch.Tensor, None]`
        return PYTHON if name in CONTAINER_NAMES else UNKNOWN
    qualified = qualified_name(annotation, scope)
    if qualified in _TENSOR_TYPES:
        return TENSOR
    if qualified in _PYTHON_TYPES or (qualified or "").rsplit(".", 1)[-1] in CONTAINER_NAMES:
        return PYTHON
    return UNKNOWN


def is_container_annotation(annotation: cst.BaseExpression, scope: Scope) -> bool:
    """`Dict[str, Tensor]`, `list`, `Optional[Tuple[int, int]]`: a container, never a tensor."""
    if isinstance(annotation, cst.Subscript):
        name = (qualified_name(annotation.value, scope) or "").rsplit(".", 1)[-1]
        if name == "Optional" and len(annotation.slice) == 1 and isinstance(annotation.slice[0].slice, cst.Index):
            return is_container_annotation(annotation.slice[0].slice.value, scope)
        return name in CONTAINER_NAMES
    return (qualified_name(annotation, scope) or "").rsplit(".", 1)[-1] in CONTAINER_NAMES


def isinstance_kind(types: cst.BaseExpression, scope: Scope) -> Kind:
    """What `isinstance(x, types)` holding makes of `x`: a tensor for tensor types, a plain
    value for numbers, strings and containers; UNKNOWN for anything else or a mix."""
    members = [element.value for element in types.elements] if isinstance(types, cst.Tuple) else [types]
    names = [qualified_name(member, scope) for member in members]
    if names and all(name in _TENSOR_TYPES for name in names):
        return TENSOR
    if names and all(name in _PYTHON_TYPES or name in _NUMBER_TYPES for name in names):
        return PYTHON
    return UNKNOWN


def _optional_kind(members: list[cst.BaseExpression], scope: Scope) -> Kind:
    """A tensor, or None: a tensor wherever it is used as one."""
    kinds = [annotation_kind(member, scope) for member in members]
    others = [member for member, kind in zip(members, kinds) if kind is not TENSOR]
    if TENSOR in kinds and all(isinstance(m, cst.Name) and m.value == "None" for m in others):
        return TENSOR
    return UNKNOWN


def is_constant(node: cst.BaseExpression) -> bool:
    """A literal (`3`, `"x"`, `None`, `-1`): plain Python, whatever it is used for."""
    if isinstance(node, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString)):
        return True
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return True
    if isinstance(node, cst.UnaryOperation):
        return is_constant(node.expression)
    return False
