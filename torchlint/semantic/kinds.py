"""What kind of value an expression holds: a tensor, a size, metadata, plain Python.

Data-dependent rules fire only on TENSOR. A shape, a dtype or `self.training` is known
while tracing, so branching on it is free; a tensor's contents are not. Kinds flow
through a function statement by statement (assignments, unpacking, augmented
assignment, `for` targets) and through calls into functions of the same file whose
return kind is known. Without evidence a value stays UNKNOWN, and UNKNOWN is silent.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Iterator
from typing import NamedTuple

import libcst as cst

from torchlint.cst_walk import nested_blocks, walk
from torchlint.semantic.guards import GuardedFile, GuardEvaluator, RuledOut, always_exits
from torchlint.semantic.scopes import Scope, dotted_name, qualified_name
from torchlint.semantic.summary import ClassInfo, FileSummary, FunctionInfo


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
_SIZE_ATTRIBUTES = frozenset({"shape", "ndim"})
_META_ATTRIBUTES = frozenset(
    {"dtype", "device", "is_cuda", "is_cpu", "requires_grad", "layout", "is_sparse", "is_quantized",
     "is_meta", "is_leaf", "is_mps", "is_nested"}
)
_TENSOR_ATTRIBUTES = frozenset({"T", "mT", "H", "mH", "real", "imag", "data", "grad"})
_SIZE_METHODS = frozenset({"size", "dim", "numel", "ndimension", "nelement", "stride", "storage_offset"})
_META_METHODS = frozenset(
    {"is_inference", "is_contiguous", "is_floating_point", "is_complex", "get_device", "element_size", "is_pinned",
     "is_signed", "has_names"}
)
# Tensor methods whose result is a Python value pulled out of the data.
_PYTHON_METHODS = frozenset({"item", "tolist", "data_ptr", "numpy", "__len__", "__repr__", "__str__"})
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
# torch functions that do not return a tensor.
_TORCH_NON_TENSOR = {
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
_TORCH_NON_TENSOR_PREFIXES = (
    "torch.cuda.", "torch.backends.", "torch.distributed.", "torch.jit.", "torch.compiler.", "torch._dynamo.",
    "torch.utils.", "torch.autograd.profiler.", "torch.profiler.", "torch.testing.", "torch.library.",
    "torch.fx.", "torch.onnx.", "torch.overrides.", "torch.types.", "torch._C.", "torch.hub.",
)
_NN_FUNCTIONAL = "torch.nn.functional."
_MATH_PREFIX = "math."
# How deep return kinds of project functions are followed.
_MAX_CALL_DEPTH = 3


def is_tensor(kind: Kind) -> bool:
    return kind is TENSOR


def is_data_dependent(kind: Kind) -> bool:
    """Python needs the value of the data to decide on it: a tensor, or a captured number."""
    return kind is TENSOR or kind is CAPTURED


def _arithmetic(kinds: Iterable[Kind]) -> Kind:
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


def _join(kinds: Iterable[Kind]) -> Kind:
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
        return UNKNOWN
    name = qualified_name(annotation, scope)
    if name in _TENSOR_TYPES:
        return TENSOR
    if name in _PYTHON_TYPES:
        return PYTHON
    return UNKNOWN


def _optional_kind(members: list[cst.BaseExpression], scope: Scope) -> Kind:
    """A tensor, or None: a tensor wherever it is used as one."""
    kinds = [annotation_kind(member, scope) for member in members]
    others = [member for member, kind in zip(members, kinds) if kind is not TENSOR]
    if TENSOR in kinds and all(isinstance(m, cst.Name) and m.value == "None" for m in others):
        return TENSOR
    return UNKNOWN


def _is_constant(node: cst.BaseExpression) -> bool:
    if isinstance(node, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString)):
        return True
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return True
    if isinstance(node, cst.UnaryOperation):
        return _is_constant(node.expression)
    return False


def _names_in(target: cst.BaseExpression) -> Iterator[cst.Name]:
    if isinstance(target, cst.Name):
        yield target
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _names_in(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from _names_in(target.value)


def _parameter_evidence(function: cst.FunctionDef, names: set[str]) -> set[str]:
    """Unannotated parameters the body uses the way only a tensor can be used.

    Calling what a tensor only has as data (`backend.shape(x)`) shows a namespace or a
    backend object, whatever else it is asked for.
    """
    found: set[str] = set()
    not_tensors: set[str] = set()

    def visit(node: cst.CSTNode) -> bool | None:
        if (
            isinstance(node, cst.Attribute)
            and isinstance(node.value, cst.Name)
            and node.value.value in names
            and node.attr.value in _TENSOR_EVIDENCE
        ):
            found.add(node.value.value)
        elif (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and isinstance(node.func.value, cst.Name)
            and node.func.value.value in names
            and node.func.attr.value in _NOT_CALLABLE_ON_TENSORS
        ):
            not_tensors.add(node.func.value.value)
        return None

    walk(function.body, visit)
    return found - not_tensors


# Tensor attributes that are values, not methods: calling one means the object is no tensor.
_NOT_CALLABLE_ON_TENSORS = frozenset({"shape", "dtype", "device", "ndim", "is_cuda", "requires_grad", "T", "data"})


class _Returns(NamedTuple):
    kind: Kind
    # per element, when every return is a tuple literal of one length
    elements: tuple[Kind, ...] | None = None


_UNKNOWN_RETURNS = _Returns(UNKNOWN)
# A call's argument kinds: the positional ones in order, the keyword ones by name.
_Arguments = tuple[list[Kind], dict[str, Kind]]


def _headers(statement: cst.CSTNode) -> list[cst.CSTNode]:
    """The expressions a compound statement evaluates itself, outside its blocks."""
    if isinstance(statement, cst.While):
        return [statement.test]
    if isinstance(statement, cst.For):
        return [statement.iter]
    if isinstance(statement, cst.With):
        return [item.item for item in statement.items]
    if isinstance(statement, cst.Match):
        return [statement.subject]
    return []


class Branches:
    """Kinds across an `if`: each branch starts from the kinds before it, and afterwards a
    name holds what any branch that goes on may have left in it.

    Each branch's changes are read from the environment's journal and undone, so an `if`
    costs what its branches change, not what the function holds."""

    def __init__(self, env: KindEnv | None) -> None:
        self.env = env
        self.mark = env.journal.mark() if env is not None else 0
        # What each branch that goes on changed: (container, name) -> the value it left.
        self.outcomes: list[dict[tuple[int, str], object]] = []

    def branch_done(self, exits: bool) -> None:
        if self.env is None:
            return
        if not exits:
            self.outcomes.append(self.env.journal.changes_since(self.mark))
        self.env.journal.undo_to(self.mark)

    def falls_through(self) -> None:
        if self.env is not None:
            self.outcomes.append({})

    def close(self) -> None:
        if self.env is not None and self.outcomes:
            self.env.merge(self.outcomes)


_ABSENT = object()


class _Journal:
    """The changes made to an environment's containers, oldest first, so that a branch
    can be read off and undone in the time its own changes take."""

    def __init__(self) -> None:
        self.containers: list[_JournaledDict | _JournaledSet] = []
        self._entries: list[tuple[int, str, object]] = []  # container, key, what it held before

    def add(self, container: _JournaledDict | _JournaledSet) -> int:
        self.containers.append(container)
        return len(self.containers) - 1

    def record(self, tag: int, key: str, before: object) -> None:
        self._entries.append((tag, key, before))

    def mark(self) -> int:
        return len(self._entries)

    def changes_since(self, mark: int) -> dict[tuple[int, str], object]:
        return {(tag, key): self.containers[tag].held(key) for tag, key, _ in self._entries[mark:]}

    def undo_to(self, mark: int) -> None:
        while len(self._entries) > mark:
            tag, key, before = self._entries.pop()
            self.containers[tag].put_back(key, before)


class _JournaledDict(dict):
    """A name -> kind dict whose every change is journaled."""

    def __init__(self, journal: _Journal) -> None:
        super().__init__()
        self.journal = journal
        self.tag = journal.add(self)

    def __setitem__(self, key: str, value) -> None:
        self.journal.record(self.tag, key, dict.get(self, key, _ABSENT))
        dict.__setitem__(self, key, value)

    def pop(self, key: str, *default):
        if key in self:
            self.journal.record(self.tag, key, dict.__getitem__(self, key))
        return dict.pop(self, key, *default)

    def update(self, other=(), **more) -> None:
        for key, value in dict(other, **more).items():
            self[key] = value

    def held(self, key: str) -> object:
        return dict.get(self, key, _ABSENT)

    def put_back(self, key: str, before: object) -> None:
        if before is _ABSENT:
            dict.pop(self, key, None)
        else:
            dict.__setitem__(self, key, before)


class _JournaledSet(set):
    """A set of names whose every change is journaled."""

    def __init__(self, journal: _Journal) -> None:
        super().__init__()
        self.journal = journal
        self.tag = journal.add(self)

    def add(self, key: str) -> None:
        self.journal.record(self.tag, key, key in self)
        set.add(self, key)

    def discard(self, key: str) -> None:
        self.journal.record(self.tag, key, key in self)
        set.discard(self, key)

    def held(self, key: str) -> bool:
        return key in self

    def put_back(self, key: str, before: object) -> None:
        if before:
            set.add(self, key)
        else:
            set.discard(self, key)


class Elsewhere(NamedTuple):
    """What code outside a function's own file tells its kinds."""

    # function -> {parameter: kind} that calls in other files pass
    parameters: Callable[[FunctionInfo], dict[str, Kind]] = lambda function: {}
    # (class, attribute) -> the tensor members of the objects `self.<attribute>` keeps
    held_tensors: Callable[[ClassInfo, str], frozenset[str]] = lambda owner, attribute: frozenset()
    # (call, caller) -> the function of this file `self.<attribute>.<method>(...)` runs on
    # an object `__init__` was given
    held_method: Callable[[cst.Call, FunctionInfo], FunctionInfo | None] = lambda call, caller: None


class FileKinds:
    """Return and parameter kinds of the file's functions, worked out on demand and remembered."""

    def __init__(
        self,
        summary: FileSummary,
        scalars_captured: Callable[[FunctionInfo], bool] = lambda function: False,
        shapes_captured: Callable[[FunctionInfo], bool] = lambda function: False,
        elsewhere: Elsewhere = Elsewhere(),
        guarded: GuardedFile | None = None,
    ) -> None:
        """``scalars_captured``/``shapes_captured``: whether Dynamo captures `.item()` / data-dependent
        output shapes in a function (the compile profile, or `fullgraph=True`). ``guarded``: what
        the file's guards rule out while compiling, shared with the checker and the region graph
        (the built-in guards' answer when not given)."""
        self.summary = summary
        self.guarded = guarded if guarded is not None else GuardedFile(summary, GuardEvaluator())
        self.scalars_captured = scalars_captured
        self.shapes_captured = shapes_captured
        self.elsewhere = elsewhere
        self._returns: dict[FunctionInfo, _Returns] = {}
        self._in_progress: set[FunctionInfo] = set()
        self._module_functions = {
            f.name: f for f in summary.functions if f.enclosing is summary.scope
        }
        self._buffers: dict[ClassInfo, set[str]] = {}
        self._call_sites: dict[FunctionInfo, list[tuple[FunctionInfo, cst.Call]]] | None = None
        # caller -> the ids of its calls that `call_sites` resolved
        self._resolved_calls: dict[FunctionInfo, set[int]] = {}
        self._arguments: dict[FunctionInfo, dict[int, _Arguments]] = {}
        self._parameters: dict[FunctionInfo, dict[str, Kind]] = {}
        self._binding: set[FunctionInfo] = set()
        # How often a cycle cut an answer short: answers worked out meanwhile are not kept.
        self._cuts = 0

    def env(self, function: FunctionInfo, depth: int = 0) -> KindEnv:
        return KindEnv(self, function, depth)

    def ruled_out(self, function: FunctionInfo) -> RuledOut:
        return self.guarded.ruled_out(function)

    def return_kind(self, function: FunctionInfo, depth: int) -> Kind:
        return self._returned(function, depth).kind

    def return_elements(self, function: FunctionInfo, depth: int) -> tuple[Kind, ...] | None:
        """The kind of each element when every return is a tuple of one length."""
        return self._returned(function, depth).elements

    def _returned(self, function: FunctionInfo, depth: int) -> _Returns:
        if function in self._returns:
            return self._returns[function]
        if depth > _MAX_CALL_DEPTH:
            return _UNKNOWN_RETURNS
        if function in self._in_progress:
            self._cuts += 1
            return _UNKNOWN_RETURNS
        cuts = self._cuts
        self._in_progress.add(function)
        try:
            returned = self.env(function, depth + 1).infer_returns()
        finally:
            self._in_progress.discard(function)
        if self._cuts == cuts:
            self._returns[function] = returned
        return returned

    # -- parameters from call sites ------------------------------------------------

    def parameter_kinds(self, function: FunctionInfo, depth: int) -> dict[str, Kind]:
        """What the file's calls of ``function`` pass to each parameter, joined over the calls.

        `self._attend(q, k, max_len)` with a tensor `max_len` makes that parameter a tensor
        even though it has no annotation.
        """
        if function in self._parameters:
            return self._parameters[function]
        sites = self.call_sites().get(function)
        if not sites:
            return {}
        if depth > _MAX_CALL_DEPTH:
            return {}
        if function in self._binding:
            self._cuts += 1
            return {}
        cuts = self._cuts
        self._binding.add(function)
        try:
            passed: dict[str, list[Kind]] = {}
            for caller, call in sites:
                arguments = self._arguments_in(caller, depth).get(id(call))
                if arguments is None:
                    continue
                positional, keywords = arguments
                names = [param.name.value for param in function.positional]
                for name, kind in [*zip(names, positional), *keywords.items()]:
                    passed.setdefault(name, []).append(kind)
        finally:
            self._binding.discard(function)
        kinds = {name: _join(found) for name, found in passed.items()}
        if self._cuts == cuts:
            self._parameters[function] = kinds
        return kinds

    def call_sites(self) -> dict[FunctionInfo, list[tuple[FunctionInfo, cst.Call]]]:
        """Calls of the file's own functions: `helper(x)` and `self.method(x)`. A call the
        guards rule out is never made while compiling, so it passes nothing."""
        if self._call_sites is None:
            self._call_sites = {}
            for caller in self.summary.functions:
                ruled_out = self.ruled_out(caller).inside
                for call in caller.calls:
                    if id(call) in ruled_out:
                        continue
                    callee = self.callee(call, caller)
                    if callee is not None and not any(arg.star for arg in call.args):
                        self._call_sites.setdefault(callee, []).append((caller, call))
                        self._resolved_calls.setdefault(caller, set()).add(id(call))
        return self._call_sites

    def called_through_held(self, function: FunctionInfo) -> bool:
        """Whether a call here runs ``function`` on an object a module keeps."""
        return any(
            isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Attribute)
            for _, call in self.call_sites().get(function, ())
        )

    def callee(self, call: cst.Call, caller: FunctionInfo) -> FunctionInfo | None:
        """The function of this file ``call`` runs, where its spelling alone shows it."""
        func = call.func
        if isinstance(func, cst.Name):
            if func.value in caller.scope.bindings:
                return None
            return self.module_function(func.value)
        if not isinstance(func, cst.Attribute):
            return None
        method = caller.method
        if method is None:
            return None
        if isinstance(func.value, cst.Name) and func.value.value == method.self_name:
            return method.owner_class.methods.get(func.attr.value)
        holder = func.value
        if (
            isinstance(holder, cst.Attribute)
            and isinstance(holder.value, cst.Name)
            and holder.value.value == method.self_name
            and holder.attr.value in method.owner_class.held
        ):
            return self.elsewhere.held_method(call, caller)
        return None

    def _arguments_in(self, caller: FunctionInfo, depth: int) -> dict[int, _Arguments]:
        """The kinds of the arguments of each call in ``caller`` that runs a function of this file."""
        if caller in self._arguments:
            return self._arguments[caller]
        if depth > _MAX_CALL_DEPTH:
            return {}
        if caller in self._in_progress:
            self._cuts += 1
            return {}
        cuts = self._cuts
        self.call_sites()
        wanted = self._resolved_calls.get(caller, set())
        found: dict[int, _Arguments] = {}
        if wanted:
            env = self.env(caller, depth + 1)

            def visit(node: cst.CSTNode) -> bool | None:
                if isinstance(node, cst.Call) and id(node) in wanted:
                    found[id(node)] = (
                        [env.kind_of(arg.value) for arg in node.args if arg.keyword is None],
                        {arg.keyword.value: env.kind_of(arg.value) for arg in node.args if arg.keyword is not None},
                    )
                return isinstance(node, (cst.Lambda, cst.FunctionDef, cst.ClassDef)) or None

            self._in_progress.add(caller)
            try:
                env.run(lambda node: walk(node, visit))
            finally:
                self._in_progress.discard(caller)
        if self._cuts == cuts:
            self._arguments[caller] = found
        return found

    def module_function(self, name: str) -> FunctionInfo | None:
        return self._module_functions.get(name)

    def attribute_kind(self, info: ClassInfo, attribute: str) -> Kind:
        """The kind of `self.<attribute>` in the methods of ``info``."""
        if attribute in self.buffers(info):
            return TENSOR
        if attribute in info.methods:
            return UNKNOWN
        history = info.attribute_history.get(attribute)
        if not history:
            return UNKNOWN
        # `self.x = self.x.to(device)` keeps what `self.x` was; the other assignments say what.
        kinds = [
            _attribute_value_kind(value, scope)
            for value, scope in history
            if not _refers_to_self_attribute(value, attribute)
        ]
        return _join(kinds) if kinds else UNKNOWN

    def tensor_members(self, info: ClassInfo) -> frozenset[str]:
        """The attributes of ``info``'s objects that hold tensors (`self.timesteps = torch.arange(n)`)."""
        names = self.buffers(info) | info.attribute_history.keys()
        return frozenset(name for name in names if self.attribute_kind(info, name) is TENSOR)

    def buffers(self, info: ClassInfo) -> set[str]:
        """Names registered with `self.register_buffer("name", ...)` / `register_parameter`."""
        found = self._buffers.get(info)
        if found is None:
            found = set()
            for method in info.methods.values():
                for call in method.calls:
                    func = call.func
                    if (
                        isinstance(func, cst.Attribute)
                        and func.attr.value in ("register_buffer", "register_parameter")
                        and call.args
                        and isinstance(call.args[0].value, cst.SimpleString)
                    ):
                        name = call.args[0].value.evaluated_value
                        if isinstance(name, str):
                            found.add(name)
            self._buffers[info] = found
        return found


class KindEnv:
    """The kinds of one function's local names, as its statements run in order."""

    def __init__(self, file_kinds: FileKinds, function: FunctionInfo, depth: int = 0) -> None:
        self.file_kinds = file_kinds
        self.function = function
        self.scope = function.scope
        self.depth = depth
        self.journal = _Journal()
        self.names: dict[str, Kind] = _JournaledDict(self.journal)
        # Names holding a boolean tensor (a mask): `m = x > 0`, `m = torch.isnan(x)`.
        self.masks: set[str] = _JournaledSet(self.journal)
        # Names holding a tensor whose size depends on the data, where Dynamo captures it.
        self.data_sized: set[str] = _JournaledSet(self.journal)
        # Names holding a 0-d tensor the graph computes: `top = scores.argmax()`.
        self.zero_dim: set[str] = _JournaledSet(self.journal)
        self.scalars_captured = file_kinds.scalars_captured(function)
        self.shapes_captured = file_kinds.shapes_captured(function)
        # What Dynamo never traces here: `run` skips it, and no value comes from it.
        self.ruled_out = file_kinds.ruled_out(function)
        self._bind_parameters()

    # -- parameters ---------------------------------------------------------------

    def _bind_parameters(self) -> None:
        node = self.function.node
        params = [*node.params.posonly_params, *node.params.params, *node.params.kwonly_params]
        self_name = self.function.self_name
        decorators = {qualified_name(d.decorator, self.function.enclosing) for d in node.decorators}
        if "builtins.staticmethod" in decorators:
            self_name = None  # the first parameter is an ordinary argument
        elif "builtins.classmethod" in decorators and self_name is not None:
            self.names[self_name] = UNKNOWN
            self_name = None
        self._self_name = self_name
        unannotated = set()
        # Parameters a caller's tensor overrides: `timestep: int` that a loop over a
        # tensor fills is a tensor while Dynamo traces.
        scalars = set()
        for param in params:
            name = param.name.value
            if name in self.names:
                continue
            if name == self_name:
                self.names[name] = MODULE if self._owner_is_module() else UNKNOWN
            elif param.annotation is not None:
                annotation = param.annotation.annotation
                kind = annotation_kind(annotation, self.function.enclosing)
                self.names[name] = MODULE if kind is UNKNOWN and self._names_module_class(annotation) else kind
                if self.names[name] in (PYTHON, UNKNOWN):
                    scalars.add(name)
            elif param.default is not None and _is_constant(param.default) and not (
                isinstance(param.default, cst.Name) and param.default.value == "None"
            ):
                self.names[name] = PYTHON
                scalars.add(name)
            else:
                unannotated.add(name)
                self.names[name] = UNKNOWN
        unannotated.discard(self_name)
        for name in _parameter_evidence(node, unannotated) if unannotated else ():
            self.names[name] = TENSOR
            unannotated.discard(name)
        open_names = unannotated | scalars
        if open_names:
            self._bind_passed(unannotated, open_names)
        self._bind_stars(node)

    def _bind_passed(self, unannotated: set[str], open_names: set[str]) -> None:
        """What calls pass: an unannotated parameter takes the joined kind of this file's
        calls. A tensor passed from another file, or through an object a module keeps
        (`self.scheduler.step(out, t, x)`), makes any open parameter one; the file's own
        direct calls are taken to follow its annotations."""
        passed = [self.file_kinds.elsewhere.parameters(self.function)]
        if unannotated or self.file_kinds.called_through_held(self.function):
            passed.append(self.file_kinds.parameter_kinds(self.function, self.depth))
        for kinds in passed:
            for name, kind in kinds.items():
                if name in unannotated and kind is not UNKNOWN or name in open_names and kind is TENSOR:
                    self.names[name] = kind

    def _bind_stars(self, node: cst.FunctionDef) -> None:
        for star in (node.params.star_arg, node.params.star_kwarg):
            if isinstance(star, cst.Param):
                self.names[star.name.value] = PYTHON

    def _names_module_class(self, annotation: cst.BaseExpression) -> bool:
        """`model: nn.Module`, or a class of this file with a `forward`."""
        name = qualified_name(annotation, self.function.enclosing)
        if name is not None:
            return name.startswith("torch.nn.") and name.rsplit(".", 1)[-1][:1].isupper()
        info = self.file_kinds.summary.classes.get(dotted_name(annotation) or "")
        return info is not None and "forward" in info.methods

    def _owner_is_module(self) -> bool:
        # Every method of a class with a `forward` is taken for a module method.
        owner = self._owner_class()
        return owner is not None and "forward" in owner.methods

    def _owner_class(self) -> ClassInfo | None:
        method = self.function.method
        return method.owner_class if method is not None else None

    # -- statements ---------------------------------------------------------------

    def after_statement(self, statement: cst.CSTNode) -> None:
        """Record what a simple statement binds."""
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                self._small_statement(small)

    def _small_statement(self, small: cst.BaseSmallStatement) -> None:
        if isinstance(small, cst.Assign):
            for target in small.targets:
                self.bind(target.target, small.value)
        elif isinstance(small, cst.AnnAssign):
            if small.value is not None:
                self.bind(small.target, small.value)
            elif isinstance(small.target, cst.Name):
                self.names[small.target.value] = annotation_kind(small.annotation.annotation, self.scope)
        elif isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name):
            name = small.target.value
            self.names[name] = _arithmetic([self.names.get(name, UNKNOWN), self.kind_of(small.value)])
            self._forget(name)
        elif isinstance(small, cst.Del):
            for name in _names_in(small.target):
                self.names.pop(name.value, None)

    def bind(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            self.names[target.value] = self.kind_of(value)
            for found, names in (
                (self.is_mask(value), self.masks),
                (self.is_data_sized(value), self.data_sized),
                (self.is_zero_dim(value), self.zero_dim),
            ):
                if found:
                    names.add(target.value)
                else:
                    names.discard(target.value)
            return
        if not isinstance(target, (cst.Tuple, cst.List)):
            return
        elements = [element.value for element in target.elements]
        if isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == len(elements) and not any(
            isinstance(e, cst.StarredElement) for e in value.elements
        ):
            for element, element_value in zip(elements, value.elements):
                self.bind(element, element_value.value)
            return
        returned = self._returned_elements(value)
        if returned is not None and len(returned) == len(elements):
            # `count, index = self._global_indices(mask)` where the helper returns a tuple
            for element, kind in zip(elements, returned):
                for name in _names_in(element):
                    self.names[name.value] = kind if isinstance(element, cst.Name) else UNKNOWN
                    self._forget(name.value)
            return
        kind = self.kind_of(value)
        # Unpacking a tensor (`chunk`, `topk`) gives tensors; unpacking a shape gives sizes. A
        # module's tuple leads with a tensor, but what follows may be sizes
        # (`hidden, height, width = embed(x)`), so only the first is taken for one.
        each = kind if kind in (TENSOR, SIZE) else UNKNOWN
        module_output = isinstance(value, cst.Call) and self.kind_of(value.func) is MODULE
        for position, element in enumerate(elements):
            for name in _names_in(element):
                self.names[name.value] = UNKNOWN if module_output and position > 0 else each
                self._forget(name.value)

    def _returned_elements(self, value: cst.BaseExpression) -> tuple[Kind, ...] | None:
        if not isinstance(value, cst.Call):
            return None
        callee = self.file_kinds.callee(value, self.function)
        return self.file_kinds.return_elements(callee, self.depth) if callee is not None else None

    def enter_for(self, statement: cst.For) -> None:
        self.bind_iteration(statement.target, statement.iter)

    def bind_iteration(self, target: cst.BaseExpression, iterable: cst.BaseExpression) -> None:
        for name, kind in self._iteration_kinds(target, iterable):
            self.names[name] = kind
            self._forget(name)
        if isinstance(target, cst.Name) and self._is_vector(iterable):
            self.zero_dim.add(target.value)  # `for i in torch.arange(n)`

    def _iteration_kinds(self, target: cst.BaseExpression, iterable: cst.BaseExpression) -> Iterator[tuple[str, Kind]]:
        call_name = qualified_name(iterable.func, self.scope) if isinstance(iterable, cst.Call) else None
        if call_name == "builtins.range":
            for name in _names_in(target):
                yield name.value, PYTHON
            return
        if call_name in ("builtins.enumerate", "builtins.zip") and isinstance(target, (cst.Tuple, cst.List)):
            sources = [arg.value for arg in iterable.args]
            if call_name == "builtins.enumerate" and sources:
                sources = [None, sources[0]]  # the counter, then the items
            if len(sources) == len(target.elements):
                for element, source in zip(target.elements, sources):
                    if source is None:
                        yield from ((n.value, PYTHON) for n in _names_in(element.value))
                    else:
                        yield from self._iteration_kinds(element.value, source)
                return
        kind = self.kind_of(iterable)
        each = {TENSOR: TENSOR, MODULE: MODULE, SIZE: SIZE}.get(kind, UNKNOWN)
        for name in _names_in(target):
            yield name.value, each

    def infer_returns(self) -> _Returns:
        """What the function returns: its statements run in order, its returns joined."""
        kinds: list[Kind] = []
        tuples: list[list[Kind]] = []

        def record(node: cst.CSTNode) -> None:
            if not isinstance(node, cst.SimpleStatementLine):
                return
            for small in node.body:
                if not isinstance(small, cst.Return):
                    continue
                value = small.value
                kinds.append(PYTHON if value is None else self.kind_of(value))
                if isinstance(value, cst.Tuple) and not any(isinstance(e, cst.StarredElement) for e in value.elements):
                    tuples.append([self.kind_of(e.value) for e in value.elements])

        self.run(record)
        if not kinds:
            return _Returns(PYTHON)
        elements = None
        if len(tuples) == len(kinds) and len({len(t) for t in tuples}) == 1:
            elements = tuple(_join(column) for column in zip(*tuples))
        return _Returns(_join(kinds), elements)

    def run(self, visit: Callable[[cst.CSTNode], object]) -> None:
        """Run through the body as Dynamo traces it, calling ``visit`` on each simple statement
        line and each compound statement's header expressions before what they bind is
        recorded. What the guards rule out is skipped, as the checker skips it."""
        self._run_suite(self.function.node.body, visit)

    def _run_suite(self, suite: cst.BaseSuite, visit: Callable[[cst.CSTNode], object]) -> None:
        body = suite.body if isinstance(suite, cst.IndentedBlock) else [cst.SimpleStatementLine(body=suite.body)]
        for statement in body:
            if statement in self.ruled_out:
                break  # after a branch that always exits while compiling
            if isinstance(statement, cst.SimpleStatementLine):
                visit(statement)
                self.after_statement(statement)
            elif isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
                continue
            elif isinstance(statement, cst.If):
                self._run_if(statement, visit)
            else:
                for header in _headers(statement):
                    visit(header)
                if isinstance(statement, cst.For):
                    self.enter_for(statement)
                for block in nested_blocks(statement):
                    self._run_suite(block, visit)

    def _run_if(self, statement: cst.If, visit: Callable[[cst.CSTNode], object]) -> None:
        visit(statement.test)
        branches = self.branches()
        if statement.body not in self.ruled_out:
            self._run_suite(statement.body, visit)
            branches.branch_done(always_exits(statement.body))
        orelse = statement.orelse
        if orelse is not None and orelse not in self.ruled_out:
            if isinstance(orelse, cst.If):
                self._run_if(orelse, visit)
                branches.branch_done(always_exits(cst.IndentedBlock(body=[orelse])))
            else:
                self._run_suite(orelse.body, visit)
                branches.branch_done(always_exits(orelse.body))
        elif orelse is None and self.ruled_out.verdict(statement) is not True:
            branches.falls_through()
        branches.close()

    # -- branches -----------------------------------------------------------------

    def branches(self) -> Branches:
        return Branches(self)

    def merge(self, outcomes: list[dict[tuple[int, str], object]]) -> None:
        """Join what the branches that go on left (``outcomes``: each one's changes, over
        the kinds before the `if`, which are in place). A name no branch changed keeps
        its kind, so only the changed ones are joined."""
        for name in {name for outcome in outcomes for _, name in outcome}:

            def left(container, name: str = name) -> list:
                before = container.held(name)
                return [outcome.get((container.tag, name), before) for outcome in outcomes]

            kinds = left(self.names)
            bound = [kind is not _ABSENT for kind in kinds]
            joined = [kind for kind in kinds if kind is not _ABSENT]
            if joined:
                self.names[name] = _join(joined)
            else:
                self.names.pop(name, None)
            self._set_membership(self.masks, name, _left_by_every_branch(left(self.masks), bound))
            self._set_membership(self.zero_dim, name, _left_by_every_branch(left(self.zero_dim), bound))
            self._set_membership(self.data_sized, name, any(left(self.data_sized)))

    @staticmethod
    def _set_membership(names: set[str], name: str, member: bool) -> None:
        if member != (name in names):
            if member:
                names.add(name)
            else:
                names.discard(name)

    # -- expressions --------------------------------------------------------------

    def kind_of(self, node: cst.BaseExpression) -> Kind:
        method = getattr(self, f"_kind_{type(node).__name__}", None)
        return method(node) if method is not None else UNKNOWN

    def _kind_Name(self, node: cst.Name) -> Kind:
        if node.value in ("True", "False", "None"):
            return PYTHON
        if node.value in self.names:
            return self.names[node.value]
        module = self.file_kinds.summary.scope
        value = module.assignments.get(node.value)
        if value is not None and node.value not in self.scope.bindings and _is_constant(value):
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
        if attribute in _SIZE_ATTRIBUTES:
            return CAPTURED if attribute == "shape" and self.is_data_sized(node.value) else SIZE
        if attribute in _META_ATTRIBUTES:
            return META
        base = node.value
        if isinstance(base, cst.Name) and base.value == self._self_name:
            return self._self_attribute(attribute)
        name = qualified_name(node, self.scope)
        if name is not None and name.startswith("torch."):
            return META if attribute in _TORCH_DTYPES else UNKNOWN
        if self._held_member(node):
            return TENSOR
        base_kind = self.kind_of(base)
        if base_kind is TENSOR and attribute in _TENSOR_ATTRIBUTES:
            return TENSOR
        if base_kind is PYTHON:
            return PYTHON  # `self.config.hidden_size`
        return UNKNOWN

    def _self_attribute(self, attribute: str) -> Kind:
        if attribute == "training":
            return META
        owner = self._owner_class()
        return self.file_kinds.attribute_kind(owner, attribute) if owner is not None else UNKNOWN

    def _held_member(self, node: cst.Attribute) -> bool:
        """`self.scheduler.timesteps`, where `self.scheduler` keeps an object given to `__init__`
        whose class sets `timesteps` to a tensor."""
        holder = node.value
        if not (
            isinstance(holder, cst.Attribute)
            and isinstance(holder.value, cst.Name)
            and holder.value.value == self._self_name
        ):
            return False
        owner = self._owner_class()
        return owner is not None and node.attr.value in self.file_kinds.elsewhere.held_tensors(
            owner, holder.attr.value
        )

    def _kind_Subscript(self, node: cst.Subscript) -> Kind:
        base = self.kind_of(node.value)
        if base in (TENSOR, SIZE, MODULE, CAPTURED):
            return base
        return UNKNOWN

    def _kind_BinaryOperation(self, node: cst.BinaryOperation) -> Kind:
        return _arithmetic([self.kind_of(node.left), self.kind_of(node.right)])

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
        operands = [node.left, *(target.comparator for target in node.comparisons)]
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
        return _join([self.kind_of(node.body), self.kind_of(node.orelse)])

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
            local = self.names.get(func.value)
            if local is MODULE:
                return TENSOR
            project = self.file_kinds.module_function(func.value)
            if project is not None and func.value not in self.names:
                return self.file_kinds.return_kind(project, self.depth)
        if isinstance(func, cst.Subscript) and self.kind_of(func.value) is MODULE:
            return TENSOR  # self.layers[i](x)
        return UNKNOWN

    def _named_call(self, name: str, node: cst.Call) -> Kind | None:
        if name.startswith("torch."):
            if name in _TORCH_NON_TENSOR:
                return _TORCH_NON_TENSOR[name]
            if name in _TORCH_SCALAR_MATH:
                # `torch.div(seq_len, 2, rounding_mode="trunc")` on sizes stays a size under Dynamo.
                kinds = {self.kind_of(arg.value) for arg in node.args if arg.keyword is None}
                if kinds and TENSOR not in kinds:
                    if SIZE in kinds:
                        return SIZE
                    return PYTHON if kinds == {PYTHON} else UNKNOWN
            if name.startswith(_TORCH_NON_TENSOR_PREFIXES):
                return UNKNOWN
            if name == "torch.nn.Parameter" or name.startswith(_NN_FUNCTIONAL) or not name.startswith("torch.nn."):
                return TENSOR
            return MODULE  # nn.Linear(...) and friends
        if name.startswith(_MATH_PREFIX):
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
            return _arithmetic(self.kind_of(arg) for arg in args) if args else UNKNOWN
        if name in ("tuple", "list"):
            return SIZE if args and self.kind_of(args[0]) is SIZE else PYTHON
        return UNKNOWN

    def _method_call(self, func: cst.Attribute, node: cst.Call) -> Kind:
        method = func.attr.value
        receiver = func.value
        if isinstance(receiver, cst.Name) and receiver.value == self._self_name:
            owner = self._owner_class()
            if owner is not None and method in owner.methods:
                return self.file_kinds.return_kind(owner.methods[method], self.depth)
            kind = self._self_attribute(method)
            return TENSOR if kind is MODULE else UNKNOWN
        if isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Name) and receiver.func.value == "super":
            return UNKNOWN
        kind = self.kind_of(receiver)
        if kind is TENSOR:
            if method == "item" and self.scalars_captured:
                return CAPTURED
            if method in ("size", "numel") and self.is_data_sized(receiver):
                return CAPTURED
            return _TENSOR_METHOD_KINDS.get(method, TENSOR)
        if kind is MODULE:
            return TENSOR if method in ("forward", "__call__") else UNKNOWN
        if kind is UNKNOWN and method in _REDUCTIONS_TO_BOOL:
            # Lists have no `.any()`; what has one (a tensor, an array) holds data.
            return TENSOR
        if kind is SIZE:
            return SIZE
        return UNKNOWN

    # -- data-dependent sizes -------------------------------------------------------

    def _forget(self, name: str) -> None:
        """A name bound anew holds neither a mask, a data-sized nor a 0-d tensor until shown to."""
        self.masks.discard(name)
        self.data_sized.discard(name)
        self.zero_dim.discard(name)

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

    def is_zero_dim(self, node: cst.BaseExpression) -> bool:
        """A 0-d tensor the graph computes: a full reduction (`t.max()`, `torch.sum(t)`), an
        element of a 1-d tensor (`m.nonzero(as_tuple=True)[0][0]`), or arithmetic on one
        with plain numbers (`index + 1`). A parameter is not one: it may be a graph input."""
        if isinstance(node, cst.Name):
            return node.value in self.zero_dim
        if isinstance(node, cst.BinaryOperation):
            sides = (node.left, node.right)
            return any(self.is_zero_dim(side) for side in sides) and all(
                self.is_zero_dim(side) or self.kind_of(side) in (PYTHON, SIZE) for side in sides
            )
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
            return self.is_zero_dim(node.expression)
        if isinstance(node, cst.Subscript):
            return self._is_vector(node.value) and self._single_number_index(node)
        if isinstance(node, cst.Call):
            func = node.func
            if isinstance(func, cst.Attribute) and func.attr.value in _FULL_REDUCTIONS and not node.args:
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
        if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
            return False
        return self.kind_of(node.slice[0].slice.value) in (PYTHON, SIZE)

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
        if isinstance(node, cst.Name):
            return node.value in self.masks
        if isinstance(node, cst.Comparison):
            return self.kind_of(node) is TENSOR and not any(
                isinstance(c.operator, (cst.In, cst.NotIn)) for c in node.comparisons
            )
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.BitInvert):
            return self.is_mask(node.expression)
        if isinstance(node, cst.Subscript):
            return self.is_mask(node.value)  # `mask[:, :, i]` is still boolean
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.BitAnd, cst.BitOr, cst.BitXor)):
            return self.is_mask(node.left) or self.is_mask(node.right)
        if isinstance(node, cst.Call):
            name = qualified_name(node.func, self.scope)
            if name in _MASK_FUNCTIONS:
                return True
            func = node.func
            if isinstance(func, cst.Attribute) and func.attr.value in _MASK_METHODS:
                return self.kind_of(func.value) is TENSOR
            if isinstance(func, cst.Attribute) and func.attr.value in _LAYOUT_METHODS:
                return self.is_mask(func.value)  # a reshaped mask is a mask
        return False


_TORCH_SCALAR_MATH = frozenset(
    {"torch.div", "torch.floor_divide", "torch.remainder", "torch.fmod", "torch.true_divide", "torch.add",
     "torch.sub", "torch.mul", "torch.sym_int", "torch.sym_float", "torch.sym_max", "torch.sym_min"}
)
_REDUCTIONS_TO_BOOL = frozenset({"any", "all"})
# Reductions that, called without a dim, give a 0-d tensor.
_FULL_REDUCTIONS = frozenset(
    {"sum", "mean", "max", "min", "amax", "amin", "prod", "argmax", "argmin", "median", "count_nonzero"}
)
# Ops whose output size is read from the data.
_DATA_SIZED_METHODS = frozenset({"nonzero", "argwhere", "unique", "unique_consecutive", "masked_select"})
_DATA_SIZED_FUNCTIONS = frozenset(f"torch.{name}" for name in _DATA_SIZED_METHODS)
# What a tensor method gives when it gives no tensor.
_TENSOR_METHOD_KINDS = {
    **{name: SIZE for name in _SIZE_METHODS},
    **{name: META for name in _META_METHODS},
    **{name: PYTHON for name in _PYTHON_METHODS},
}
_TORCH_DTYPES = frozenset(
    {"float16", "float32", "float64", "bfloat16", "half", "float", "double", "int8", "int16", "int32", "int64",
     "long", "int", "short", "uint8", "bool", "complex64", "complex128", "cfloat", "float8_e4m3fn", "float8_e5m2"}
)
_MASK_FUNCTIONS = frozenset(
    {"torch.isnan", "torch.isinf", "torch.isfinite", "torch.isneginf", "torch.isposinf", "torch.logical_and",
     "torch.logical_or", "torch.logical_not", "torch.logical_xor", "torch.isin", "torch.eq", "torch.ne",
     "torch.gt", "torch.lt", "torch.ge", "torch.le", "torch.isclose", "torch.signbit"}
)
_LAYOUT_METHODS = frozenset(
    {"view", "reshape", "flatten", "squeeze", "unsqueeze", "expand", "expand_as", "t", "transpose", "permute",
     "contiguous", "clone", "detach"}
)
_MASK_METHODS = frozenset(
    {"bool", "eq", "ne", "gt", "lt", "ge", "le", "isnan", "isinf", "isfinite", "logical_and", "logical_or",
     "logical_not", "isclose", "signbit"}
)


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


def _refers_to_self_attribute(value: cst.BaseExpression, attribute: str) -> bool:
    """`self.<attribute>.to(...)`, `self.<attribute> * 2`: a value made from the attribute itself."""
    while True:
        if isinstance(value, cst.Call):
            value = value.func
        elif isinstance(value, (cst.Attribute, cst.Subscript)):
            if (
                isinstance(value, cst.Attribute)
                and value.attr.value == attribute
                and isinstance(value.value, cst.Name)
            ):
                return True
            value = value.value
        elif isinstance(value, cst.BinaryOperation):
            return _refers_to_self_attribute(value.left, attribute) or _refers_to_self_attribute(value.right, attribute)
        else:
            return False


def _attribute_value_kind(value: cst.BaseExpression, scope: Scope, depth: int = 0) -> Kind:
    """The kind of `self.<attr>` from what a method assigned to it."""
    if _is_constant(value):
        return PYTHON
    if depth > 4:
        return UNKNOWN
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and not isinstance(
        value.func.value, (cst.Name, cst.Attribute)
    ):
        # `torch.from_numpy(t).to(device)`: a method of what the inner call made.
        receiver = _attribute_value_kind(value.func.value, scope, depth + 1)
        if receiver is TENSOR:
            return _TENSOR_METHOD_KINDS.get(value.func.attr.value, TENSOR)
        return UNKNOWN
    if isinstance(value, cst.BinaryOperation):
        return _arithmetic(
            [_attribute_value_kind(value.left, scope, depth + 1), _attribute_value_kind(value.right, scope, depth + 1)]
        )
    if isinstance(value, cst.Call):
        # A class of this file has no qualified name; its spelling still shows it is a class.
        name = qualified_name(value.func, scope) or dotted_name(value.func) or ""
        if name == "torch.nn.Parameter" or name.startswith("torch.") and not name.startswith("torch.nn."):
            return TENSOR if name not in _TORCH_NON_TENSOR else _TORCH_NON_TENSOR[name]
        if name.startswith("torch.nn."):
            return MODULE
        # A call of a project class or another package's class: most often a submodule.
        if name and name.rsplit(".", 1)[-1][:1].isupper():
            return MODULE
        return UNKNOWN
    if isinstance(value, cst.Name):
        # `self.heads = heads`: configuration handed to `__init__`.
        return PYTHON
    if isinstance(value, cst.Attribute):
        return PYTHON if not (qualified_name(value, scope) or "").startswith("torch.") else UNKNOWN
    if isinstance(value, (cst.Tuple, cst.List, cst.Dict)):
        return PYTHON
    return UNKNOWN


