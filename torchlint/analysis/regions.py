"""Which functions run under torch.compile, and why.

Entry points are the ``forward`` of ``nn.Module`` subclasses, functions decorated with
``torch.compile``, functions, lambdas and modules passed to ``torch.compile(...)``, modules
whose ``.compile()`` is called, and the configured ``entry-points``; with `compiled =
"reachable"` a module's ``forward`` is not one by itself, only where those reach it (code bases
that compile a few of their modules). A class attribute bound to a function (`forward =
_impl`, `forward = lambda self, x: ...`) is a method of the class. From them, reachability
follows the calls that resolve statically: functions of the same module, ``self.method()``,
``super().method()``, submodules assigned in ``__init__``, and functions handed to another
call (``checkpoint(fn, x)``). Functions under
``torch.compiler.disable`` are never traced, and a call made where an ``is_compiling()``
guard rules the code out while compiling (``if not is_compiling(): report(x)``) is not
followed.

An object handed to a constructor and kept (`self.scheduler = scheduler` in `__init__`)
is followed too: `self.scheduler.step(...)` runs the `step` of every class a construction
site passes for that parameter, and of the class the parameter is annotated with.

A call that leads out of the file (an imported function, a method a base class from
another file defines, an attribute that constructions in other files may fill) is kept as
a ``Ref``: the project index resolves it across the analysed files.
"""

from __future__ import annotations

import re
import sys
from collections import deque
from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass
from typing import Final, Literal, NamedTuple, TypeGuard, TypeVar

import libcst as cst

from torchlint.analysis.guards import GuardedFile, GuardEvaluator
from torchlint.analysis.scopes import Scope, absolute, assigned_value, dotted_name, lookup_scope, qualified_name
from torchlint.analysis.summary import ClassInfo, FileSummary, FunctionInfo

COMPILE_FUNCTIONS = frozenset({"torch.compile", "torch._dynamo.optimize"})
DISABLE_FUNCTIONS = frozenset(
    {
        "torch.compiler.disable",
        "torch._dynamo.disable",
        "torch._dynamo.eval_frame.disable",
        "torch._disable_dynamo",
    }
)
# Bases that are plainly not modules, so a `forward` on them proves nothing.
_NOT_MODULE_PREFIXES = ("builtins.", "typing.", "abc.", "enum.", "collections.", "dataclasses.")
# Top-level packages that are never project code: calls into them are not followed.
_OUTSIDE_PROJECT = frozenset({"torch", "builtins", "__future__"}) | frozenset(sys.stdlib_module_names)
# `model.to(device).compile()` still compiles `model`.
_RETURNS_SELF = frozenset({"to", "cuda", "cpu", "eval", "train", "half", "float", "double", "bfloat16", "requires_grad_"})
# Builtins that run a method of their argument's class: `hash(config)` runs `config.__hash__()`.
_DUNDER_BUILTINS = {"hash": "__hash__"}


def is_factory(method: FunctionInfo, cls: ClassInfo) -> bool:
    """A classmethod that says it returns an object of its class: `def from_dict(cls, d) -> "Config"`."""
    node = method.node
    if node.returns is None or not any(
        qualified_name(d.decorator, method.enclosing) == "builtins.classmethod" for d in node.decorators
    ):
        return False
    returned = node.returns.annotation
    name: str | bytes | None
    if isinstance(returned, cst.SimpleString):
        name = returned.evaluated_value
    else:
        name = qualified_name(returned, method.enclosing) or dotted_name(returned)
    if not isinstance(name, str):
        return False
    return name == cls.node.name.value or name.rsplit(".", 1)[-1] == "Self"

# The last part of every attribute call that can compile: torch.compile, optimize, .compile
_COMPILE_ATTRIBUTES = frozenset({"compile", "optimize"})

# How a function reaches another, for the reasons shown by `--show-regions`.
CALLED = "called from"
PASSED = "passed to a call in"
NESTED = "defined inside"


class Ref(NamedTuple):
    """A call whose target lies outside this file, or leaves it through a base class.

    ``name`` is a dotted name as imported (relative ones keep their dots), or the
    qualified name of a class of this file when ``local`` is true.
    """

    kind: RefKind
    name: str
    attr: str = ""
    local: bool = False


# Ref kinds: what calling the referenced thing runs.
RefKind = Literal["name", "compiled", "construct", "method", "super", "instance", "held", "any-method", "overrides"]
NAME: Final = "name"  # an imported function (or class: its __init__, or a method: `L.Block.run`)
COMPILED: Final = "compiled"  # handed to torch.compile: a function, or a class's forward
CONSTRUCT: Final = "construct"  # a class called: its __init__ unless it is an nn.Module
METHOD: Final = "method"  # `attr` looked up through the class and its bases
SUPER: Final = "super"  # `attr` looked up through the bases of the class only
INSTANCE: Final = "instance"  # an instance called: forward, else __call__ (none if it defines `attr`)
# What `self.<attr>` of the class keeps from its constructor: called (`attr` "unet"), or a
# method of it called (`attr` "scheduler.step").
HELD: Final = "held"
# `obj.attr(...)` on an object whose class is not known: the project's methods named `attr`,
# when only a few classes define one.
ANY_METHOD: Final = "any-method"
# `self.attr(...)` in a method of the class: the `attr` of each subclass that defines its own,
# since `self` may be any of them (`integrate` of a base solver runs the subclass's `_advance`).
OVERRIDES: Final = "overrides"
# Method names too common to tell a class by: those of Python's own types and of arrays.
_COMMON_METHODS = frozenset(
    name for kind in (dict, list, str, set, tuple, bytes, int, float, object) for name in dir(kind)
) | frozenset(
    {"view", "reshape", "sum", "mean", "max", "min", "abs", "exp", "log", "sqrt", "pow", "float", "half", "long",
     "int", "bool", "to", "cpu", "cuda", "numpy", "item", "tolist", "size", "dim", "numel", "detach", "clone",
     "contiguous", "permute", "transpose", "squeeze", "unsqueeze", "expand", "flatten", "chunk", "split", "any",
     "all", "norm", "clamp", "softmax", "matmul", "apply", "forward", "train", "eval", "parameters",
     "named_parameters", "modules", "children", "state_dict", "load_state_dict", "zero_grad", "step", "close",
     "read", "write", "open", "run", "start", "stop", "reset", "update", "get", "set", "add", "append", "call"}
)


@dataclass(frozen=True, slots=True)
class ModuleReason:
    """Why a class is taken for an nn.Module subclass, as `--show-regions` says it."""

    text: str
    # taken for one because this file cannot see its bases (the project may know better)
    guessed: bool = False

    def __str__(self) -> str:
        return self.text
# Calls that take a function or class only to look at it, never calling it.
_INSPECTING_CALLS = frozenset(
    f"builtins.{name}"
    for name in ("isinstance", "issubclass", "hasattr", "getattr", "setattr", "type", "id", "callable", "vars", "repr", "str")
) | {"typing.cast", "typing_extensions.cast"}


def through(how: str, note: str) -> str:
    """`called from` with a note: `called through self.scheduler (...) from`."""
    if not note:
        return how
    verb, rest = how.split(" ", 1)
    return f"{verb} through {note} {rest}"


def held_note(attr: str, cls: str, where: str) -> str:
    """`self.scheduler (a DDPMScheduler given to Loop() in pkg.train.main)`."""
    return f"self.{attr} (a {cls} {where})"


def overrides_note(attr: str, subclass: str) -> str:
    """`self._advance of subclass Dopri5Solver`."""
    return f"self.{attr} of subclass {subclass}"


def dotted_in(module: str, qualname: str) -> str:
    """`pkg.model.Net.forward`: a function's name as reasons show it."""
    return f"{module}.{qualname}" if module and module.replace(".", "").isidentifier() else qualname


def arguments(call: cst.Call) -> Iterator[tuple[int | str, cst.BaseExpression]]:
    """Each argument with the position or keyword that decides its parameter; positions
    after a `*args` are unknown, so those arguments are left out."""
    position: int | None = 0
    for arg in call.args:
        if arg.keyword is not None:
            yield arg.keyword.value, arg.value
        elif arg.star:
            position = None
        elif position is not None:
            yield position, arg.value
            position += 1


def argument_for(call: cst.Call, function: FunctionInfo, name: str) -> cst.BaseExpression | None:
    """What ``call`` passes for the parameter ``name`` of ``function``."""
    positional = [param.name.value for param in function.positional]
    for slot, value in arguments(call):
        if slot == name or (isinstance(slot, int) and slot < len(positional) and positional[slot] == name):
            return value
    return None


def _name_pattern(template: cst.FormattedString) -> re.Pattern[str]:
    """`f"_step_{kind}"` as the names it can spell: `_step_` and then anything."""
    pieces = [
        re.escape(part.value) if isinstance(part, cst.FormattedStringText) else ".+"
        for part in template.parts
    ]
    return re.compile("".join(pieces))


def _is_none(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"


def may_be_project(name: str | None) -> TypeGuard[str]:
    """Whether a qualified name could lead into the linted project (not torch, not stdlib)."""
    if not name:
        return False
    if name.startswith("."):
        return True
    return name.split(".", 1)[0] not in _OUTSIDE_PROJECT


@dataclass
class Entry:
    """A function Dynamo starts tracing at."""

    target: FunctionInfo | Ref
    reason: str | None
    # False for the forward of a module: presumed compiled, not seen compiled.
    explicit: bool = True
    fullgraph: bool = False
    # For a presumed forward: its class (the project decides whether it is a module).
    module_class: ClassInfo | None = None


@dataclass(frozen=True)
class RegionLine:
    """One row of `--show-regions`."""

    row: int
    qualname: str
    status: str  # "compiled", "fullgraph" or "disabled"
    reason: str


def _decorator_target(decorator: cst.BaseExpression, scope: Scope) -> str | None:
    """The qualified name a decorator applies: `@f` and `@f(...)` both give f."""
    if isinstance(decorator, cst.Call):
        decorator = decorator.func
    return qualified_name(decorator, scope)


def is_fullgraph(call: cst.Call) -> bool:
    """`torch.compile(..., fullgraph=True)`, or `optimize(..., nopython=True)`."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in ("fullgraph", "nopython"):
            return isinstance(arg.value, cst.Name) and arg.value.value == "True"
    return False


def _decorator_suffix(fullgraph: bool, call: cst.Call | None) -> str:
    if fullgraph:
        return "(fullgraph=True)"
    return "(...)" if call is not None and call.args else ""


class _Index:
    """Lookups over one file's summary: the file's call resolver, which the region graph,
    kind inference and rules all use. What the file cannot know (an import, a base class,
    an object kept from another file, a re-export) it hands on as a ``Ref``, which the
    project index resolves (`ProjectIndex._ref`)."""

    def __init__(self, summary: FileSummary) -> None:
        self.summary = summary
        self.classes_by_scope: dict[tuple[int, str], ClassInfo] = {
            (id(info.enclosing), info.node.name.value): info for info in summary.classes.values()
        }
        self.functions_by_body = {id(function.scope): function for function in summary.functions}
        self._constructions: list[tuple[ClassInfo | str, cst.Call, Scope, FunctionInfo | None]] | None = None
        self._held: dict[tuple[ClassInfo, str], list[tuple[ClassInfo | str, str]]] = {}
        self._module_reasons: dict[ClassInfo, ModuleReason | None] = {}
        self._foreign: dict[ClassInfo, bool] = {}
        self._subclasses: dict[ClassInfo, list[ClassInfo]] | None = None

    # Node types are compared exactly on these paths, which run for every call: libcst's
    # classes are final, and an ABC `isinstance` costs several times as much.

    def local_class(self, expr: cst.BaseExpression, scope: Scope) -> ClassInfo | None:
        if type(expr) is not cst.Name:
            return None
        owner = lookup_scope(scope, expr.value)
        if owner is None or expr.value in owner.imports:
            return None
        return self.classes_by_scope.get((id(owner), expr.value))

    def local_function(self, expr: cst.BaseExpression, scope: Scope) -> FunctionInfo | None:
        """The function of this file ``expr`` names: a def, or a lambda (written there, or
        assigned to the name)."""
        if isinstance(expr, cst.Lambda):
            return self.summary.lambdas.get(id(expr))
        return self.summary.local_function(expr.value, scope) if isinstance(expr, cst.Name) else None

    def local_bases(self, info: ClassInfo) -> list[ClassInfo]:
        found = []
        for base in info.bases:
            local = self.local_class(base, info.enclosing)
            if local is not None and local is not info:
                found.append(local)
        return found

    def local_subclasses(self, info: ClassInfo) -> list[ClassInfo]:
        """The classes of this file that derive from ``info``, directly or not."""
        if self._subclasses is None:
            self._subclasses = {}
            for cls in self.summary.classes.values():
                for base in self.local_bases(cls):
                    self._subclasses.setdefault(base, []).append(cls)
        subclasses = self._subclasses
        return descendants(info, lambda cls: subclasses.get(cls, ()))

    def has_foreign_base(self, info: ClassInfo, _seen: frozenset[ClassInfo] = frozenset()) -> bool:
        """Whether a base of ``info`` (or of its bases here) may come from another project file."""
        known = self._foreign.get(info)
        if known is not None:
            return known
        foreign = False
        for base in info.bases:
            local = self.local_class(base, info.enclosing)
            if local is not None:
                foreign = local not in _seen and self.has_foreign_base(local, _seen | {info})
            else:
                foreign = may_be_project(self.project_name(base, info.enclosing))
            if foreign:
                break
        self._foreign[info] = foreign
        return foreign

    def find_method(
        self, info: ClassInfo, name: str, _seen: frozenset[ClassInfo] = frozenset()
    ) -> FunctionInfo | None:
        if info in _seen:
            return None
        method = info.methods.get(name)
        if method is not None:
            return method
        for base in self.local_bases(info):
            method = self.find_method(base, name, _seen | {info})
            if method is not None:
                return method
        return None

    def method(self, info: ClassInfo, name: str) -> FunctionInfo | Ref | None:
        """``info.name``: found here, or left to the project when a base lives elsewhere."""
        found = self.find_method(info, name)
        if found is None and self.has_foreign_base(info):
            return Ref(METHOD, info.qualname, name, local=True)
        return found

    def instance_call(self, cls: ClassInfo | str) -> FunctionInfo | Ref | None:
        """What calling an instance of ``cls`` runs: its forward, else its __call__."""
        if isinstance(cls, str):
            return Ref(INSTANCE, cls)
        found = self.find_method(cls, "forward") or self.find_method(cls, "__call__")
        if found is None and self.has_foreign_base(cls):
            return Ref(INSTANCE, cls.qualname, local=True)
        return found

    def construct(self, cls: ClassInfo) -> FunctionInfo | Ref | None:
        """What calling a class runs under Dynamo: its __init__ (an nn.Module's too: a module
        built in compiled code is built by the trace)."""
        found = self.find_method(cls, "__init__")
        if found is None and self.has_foreign_base(cls):
            return Ref(CONSTRUCT, cls.qualname, local=True)  # __init__ may come from the other file
        return found

    def module_reason(self, info: ClassInfo) -> ModuleReason | None:
        """Why ``info`` is taken for an ``nn.Module`` subclass, or None."""
        if info not in self._module_reasons:
            self._module_reasons[info] = self._module_reason(info, frozenset())
        return self._module_reasons[info]

    def _module_reason(self, info: ClassInfo, seen: frozenset[ClassInfo]) -> ModuleReason | None:
        if info in seen:
            return None
        for base in info.bases:
            local = self.local_class(base, info.enclosing)
            if local is not None:
                if self._module_reason(local, seen | {info}) is not None:
                    return ModuleReason(f"subclass of {local.qualname}, an nn.Module")
                continue
            name = self.project_name(base, info.enclosing)
            if name is not None and (name == "torch.nn.Module" or name.startswith("torch.nn.")):
                return ModuleReason(f"subclass of {name}")
        # A base from another package that we cannot see, directly or through a base here
        # (`LlamaModel(LlamaPreTrainedModel)`, `LlamaPreTrainedModel(PreTrainedModel)`), and
        # a `forward` of its own: nearly always an nn.Module in model code.
        unresolved = self._unseen_bases(info, seen)
        if unresolved and "forward" in info.methods and not unresolved[0].startswith("torch."):
            return ModuleReason(f"defines forward() and derives from {unresolved[0]}", guessed=True)
        return None

    def _unseen_bases(self, info: ClassInfo, seen: frozenset[ClassInfo]) -> list[str]:
        """The bases of ``info`` and of its bases here that this file cannot resolve, minus
        those known not to be modules."""
        found = []
        for base in info.bases:
            local = self.local_class(base, info.enclosing)
            if local is not None:
                if local not in seen:
                    found.extend(self._unseen_bases(local, seen | {info}))
                continue
            name = self.project_name(base, info.enclosing)
            if name is None or not name.startswith(_NOT_MODULE_PREFIXES):
                found.append(name or "?")
        return found

    def method_context(self, function: FunctionInfo) -> tuple[FunctionInfo, ClassInfo] | None:
        """The method whose ``self`` is visible in ``function`` (itself, or an enclosing one)."""
        method = function.method
        if method is None:
            return None
        assert method.owner_class is not None  # what makes it the method
        return method, method.owner_class

    def project_name(self, expr: cst.BaseExpression, scope: Scope) -> str | None:
        """The dotted name ``expr`` refers to (`qualified_name`). A name that only a star
        import can have bound is named through this module (`pkg.a.helper` for `helper`
        after `from .b import *` in `pkg/a.py`): the project index looks it up through the
        stars, as it does for a name another file imports from here."""
        name = qualified_name(expr, scope)
        module = self.summary.module_name
        if name is not None and name.startswith("."):
            return absolute(name, self.summary.package)  # a relative import: named from the project's top
        if name is not None or not self.summary.scope.star_imports or not module:
            return name
        dotted = dotted_name(expr)
        if dotted is None or lookup_scope(scope, dotted.split(".", 1)[0]) is not None:
            return None  # a local value
        return f"{module}.{dotted}"

    def class_of(self, expr: cst.BaseExpression, scope: Scope) -> ClassInfo | str | None:
        """The class ``expr`` names: one of this file, or the dotted name of an imported one."""
        local = self.local_class(expr, scope)
        if local is not None:
            return local
        name = self.project_name(expr, scope)
        return name if may_be_project(name) else None

    def instance_class(
        self, expr: cst.BaseExpression, function: FunctionInfo | None, scope: Scope, _depth: int = 0
    ) -> ClassInfo | str | None:
        """The class of the object ``expr`` evaluates to, where a constructor call shows it."""
        if _depth > 4:  # `y = y.float()` refers to itself
            return None
        # `Net().to(device).eval()` is still the Net
        while (
            type(expr) is cst.Call
            and type(expr.func) is cst.Attribute
            and expr.func.attr.value in _RETURNS_SELF
        ):
            expr = expr.func.value
        if type(expr) is cst.Call:
            func = expr.func
            if type(func) is cst.Attribute:
                # `GenerationConfig.from_model_config(config)`: an alternative constructor
                owner = self.local_class(func.value, scope)
                if owner is not None:
                    factory = owner.methods.get(func.attr.value)
                    if factory is not None and is_factory(factory, owner):
                        return owner
            return self.class_of(func, scope)
        if type(expr) is cst.Name:
            value = assigned_value(expr, scope)
            if type(value) is cst.Call:
                return self.instance_class(value, None, scope, _depth + 1)
            return self.parameter_class(expr.value, scope) if value is None else None
        if type(expr) is cst.Attribute and type(expr.value) is cst.Name and function is not None:
            context = self.method_context(function)
            if context is not None and expr.value.value == context[0].self_name:
                for value, value_scope in reversed(context[1].attribute_history.get(expr.attr.value, ())):
                    if type(value) is cst.Name:  # `config = Config.from_dict(d); self.config = config`
                        value = assigned_value(value, value_scope)
                    if type(value) is cst.Call:
                        found = self.instance_class(value, None, value_scope, _depth + 1)
                        if found is not None:
                            return found
        return None

    def parameter_class(self, name: str, scope: Scope) -> ClassInfo | str | None:
        """The class a parameter is annotated with (`scheduler: DDPMScheduler`, `Optional[...]`, `... | None`)."""
        owner = lookup_scope(scope, name)
        if owner is None:
            return None
        function = self.functions_by_body.get(id(owner))
        if function is None or name in owner.assignments:
            return None
        param = function.parameter(name)
        if param is None or param.annotation is None:
            return None
        return self._annotated_class(param.annotation.annotation, function.enclosing)

    def _annotated_class(self, annotation: cst.BaseExpression, scope: Scope) -> ClassInfo | str | None:
        if isinstance(annotation, cst.Subscript):
            optional = (qualified_name(annotation.value, scope) or "").endswith("Optional")
            inner = annotation.slice[0].slice if optional and len(annotation.slice) == 1 else None
            return self._annotated_class(inner.value, scope) if isinstance(inner, cst.Index) else None
        if isinstance(annotation, cst.BinaryOperation) and isinstance(annotation.operator, cst.BitOr):
            sides = [side for side in (annotation.left, annotation.right) if not _is_none(side)]
            return self._annotated_class(sides[0], scope) if len(sides) == 1 else None
        if isinstance(annotation, (cst.Name, cst.Attribute)):
            return self.class_of(annotation, scope)
        return None

    def site(self, function: FunctionInfo | None) -> str:
        """Where code runs, for reasons: a function's dotted name, or the module."""
        if function is not None:
            return dotted_in(self.summary.module_name, function.qualname)
        return self.summary.module_name or "the module"

    def constructions(self) -> list[tuple[ClassInfo | str, cst.Call, Scope, FunctionInfo | None]]:
        """Every call of a class of this file, or of an imported name that may be a class."""
        if self._constructions is None:
            self._constructions = [
                (cls, call, scope, function)
                for call, scope, function in self.summary.calls
                if isinstance(call.func, (cst.Name, cst.Attribute))
                and (cls := self.class_of(call.func, scope)) is not None
            ]
        return self._constructions

    def held_classes(self, cls: ClassInfo, attr: str) -> list[tuple[ClassInfo | str, str]]:
        """What ``self.<attr>`` may hold where it keeps an argument of ``cls.__init__``: the
        class the parameter is annotated with, and the class of what each construction in
        this file passes. Each with where it was seen."""
        key = (cls, attr)
        if key not in self._held:
            self._held[key] = self._held_classes(cls, attr)
        return self._held[key]

    def _held_classes(self, cls: ClassInfo, attr: str) -> list[tuple[ClassInfo | str, str]]:
        init = cls.methods.get("__init__")
        param = cls.held.get(attr)
        if init is None or param is None:
            return []
        found: list[tuple[ClassInfo | str, str]] = []
        annotated = self.parameter_class(param, init.scope)
        if annotated is not None:
            found.append((annotated, f"as annotated in {self.site(init)}"))
        for built, call, scope, function in self.constructions():
            if isinstance(built, ClassInfo) and self.find_method(built, "__init__") is init:
                value = argument_for(call, init, param)
                given = self.instance_class(value, function, scope) if value is not None else None
                if given is not None:
                    found.append((given, f"given to {built.qualname}() in {self.site(function)}"))
        return found

    def keeps_argument(self, cls: ClassInfo, attr: str) -> bool:
        """Whether ``self.<attr>`` keeps nothing but an argument of `__init__`: an attribute
        set again elsewhere may hold anything."""
        param = cls.held.get(attr)
        return param is not None and self._only_held(cls, attr, param) and self.find_method(cls, attr) is None

    def held_targets(
        self, expr: cst.BaseExpression, function: FunctionInfo
    ) -> list[tuple[FunctionInfo | Ref, str]] | None:
        """`self.unet(...)` or `self.scheduler.step(...)` where the attribute keeps an argument
        of `__init__`: what may run, each with a note on where its class was seen, then a
        HELD Ref for the constructions in other files. None for any other call."""
        method = ""
        if type(expr) is cst.Attribute and type(expr.value) is cst.Attribute:
            method, expr = expr.attr.value, expr.value
        if not (type(expr) is cst.Attribute and type(expr.value) is cst.Name):
            return None
        context = self.method_context(function)
        if context is None or expr.value.value != context[0].self_name:
            return None
        cls, attr = context[1], expr.attr.value
        if not self.keeps_argument(cls, attr):
            return None
        found: list[tuple[FunctionInfo | Ref, str]] = []
        for held, where in self.held_classes(cls, attr):
            if not method:
                target = self.instance_call(held)
            elif isinstance(held, ClassInfo):
                target = self.method(held, method)
            else:
                target = Ref(METHOD, held, method)
            if target is not None:
                shown = held.qualname if isinstance(held, ClassInfo) else held.rsplit(".", 1)[-1]
                found.append((target, held_note(attr, shown, where)))
        found.append((Ref(HELD, cls.qualname, f"{attr}.{method}" if method else attr, local=True), ""))
        return found

    @staticmethod
    def _only_held(cls: ClassInfo, attr: str, param: str) -> bool:
        """Whether ``self.<attr>`` is set nowhere but from ``param`` in ``__init__``: an
        attribute set again elsewhere may hold anything."""
        init_scope = cls.methods["__init__"].scope
        return all(
            isinstance(value, cst.Name) and value.value == param and scope is init_scope
            for value, scope in cls.attribute_history.get(attr, ())
        )

    def callees(self, expr: cst.BaseExpression, function: FunctionInfo) -> list[tuple[FunctionInfo | Ref, str]]:
        """What calling ``expr`` inside ``function`` may run, each with a note on how its
        class was found ("" for a plain call). Several where an attribute holds objects of
        several classes."""
        looked_up = self._getattr_on_self(expr, function)
        if looked_up is not None:
            found: list[tuple[FunctionInfo | Ref, str]] = []
            for attribute in looked_up:
                found.extend(self.callees(attribute, function))
            return found
        held = self.held_targets(expr, function)
        if held is not None and len(held) > 1:
            return held
        dispatched = self.dispatched(expr, function)
        if dispatched is not None:
            return dispatched
        target = self._callee(expr, function)
        found = [(target, "")] if target is not None else []
        return found + self._overrides(expr, function) + (held or [])

    def _getattr_on_self(self, expr: cst.BaseExpression, function: FunctionInfo) -> list[cst.Attribute] | None:
        """`getattr(self, "step")` as `self.step`; `getattr(self, f"_step_{kind}")` as each method of
        the class whose name fits the pattern. None for any other expression."""
        if type(expr) is not cst.Call or len(expr.args) != 2 or any(arg.keyword or arg.star for arg in expr.args):
            return None
        context = self.method_context(function)
        owner, name = expr.args[0].value, expr.args[1].value
        if context is None or type(owner) is not cst.Name or owner.value != context[0].self_name:
            return None
        if qualified_name(expr.func, function.scope) != "builtins.getattr":
            return None
        if type(name) is cst.Name:
            name = assigned_value(name, function.scope) or name
        if type(name) is cst.SimpleString:
            names = [name.evaluated_value] if isinstance(name.evaluated_value, str) else []
        elif type(name) is cst.FormattedString:
            pattern = _name_pattern(name)
            names = sorted(n for n in self._method_names(context[1]) if pattern.fullmatch(n))
        else:
            return None
        return [cst.Attribute(value=owner, attr=cst.Name(n)) for n in names if n.isidentifier()]

    def _method_names(self, info: ClassInfo, _seen: frozenset[ClassInfo] = frozenset()) -> set[str]:
        """The methods ``info`` defines or inherits from this file's classes."""
        if info in _seen:
            return set()
        names = set(info.methods)
        for base in self.local_bases(info):
            names |= self._method_names(base, _seen | {info})
        return names

    def _overrides(self, expr: cst.BaseExpression, function: FunctionInfo) -> list[tuple[FunctionInfo | Ref, str]]:
        """`self.attr(...)`: the `attr` of this file's subclasses, and a Ref for the project's."""
        if type(expr) is not cst.Attribute or type(expr.value) is not cst.Name:
            return []
        context = self.method_context(function)
        if context is None or expr.value.value != context[0].self_name:
            return []
        cls, attr = context[1], expr.attr.value
        if attr in cls.attribute_values:
            return []  # an object kept on `self`, not a method
        found: list[tuple[FunctionInfo | Ref, str]] = []
        for subclass in self.local_subclasses(cls):
            method = subclass.methods.get(attr)
            if method is not None:
                found.append((method, overrides_note(attr, subclass.qualname)))
        found.append((Ref(OVERRIDES, cls.qualname, attr, local=True), ""))
        return found

    def dispatched(
        self, expr: cst.BaseExpression, function: FunctionInfo
    ) -> list[tuple[FunctionInfo | Ref, str]] | None:
        """`SOLVERS[method](...)`, and `solver.integrate(t)` after `solver = SOLVERS[method](...)`,
        where `SOLVERS` is a dict, list or tuple literal of classes or functions: what each of
        its entries would run. None for any other call."""
        method = ""
        if type(expr) is cst.Attribute and type(expr.value) is cst.Name:
            method = expr.attr.value
            built = assigned_value(expr.value, function.scope)
            if type(built) is not cst.Call:
                return None
            expr = built.func
        if type(expr) is not cst.Subscript or type(expr.value) is not cst.Name:
            return None
        table = expr.value.value
        owner = lookup_scope(function.scope, table)
        if owner is None:
            return None
        entries = _literal_entries(owner.assignments.get(table))
        if not entries:
            return None
        found: list[tuple[FunctionInfo | Ref, str]] = []
        for entry in entries:
            target = self._entry_target(entry, owner, method)
            if target is not None:
                found.append((target, f"{table}[...] ({dotted_name(entry) or '?'})"))
        return found

    def _entry_target(self, entry: cst.BaseExpression, scope: Scope, method: str) -> FunctionInfo | Ref | None:
        """What one entry of a dispatch table runs: called (``method`` empty), or its ``method``."""
        cls = self.local_class(entry, scope)
        if cls is not None:
            return self.method(cls, method) if method else self.construct(cls)
        if method:
            name = self.project_name(entry, scope)
            return Ref(METHOD, name, method) if may_be_project(name) else None
        return self.local_function(entry, scope) or self._imported(entry, scope)

    def callee(self, expr: cst.BaseExpression, function: FunctionInfo) -> FunctionInfo | Ref | None:
        """What calling ``expr`` inside ``function`` runs: a function here, a Ref, or None
        (the first one, where several may)."""
        found = self.callees(expr, function)
        return found[0][0] if found else None

    def _imported(self, expr: cst.BaseExpression, scope: Scope) -> Ref | None:
        name = self.project_name(expr, scope)
        return Ref(NAME, name) if may_be_project(name) else None

    def _callee(self, expr: cst.BaseExpression, function: FunctionInfo) -> FunctionInfo | Ref | None:
        scope = function.scope
        if type(expr) is cst.Name:
            owner = lookup_scope(scope, expr.value)
            if owner is None or expr.value in owner.imports:  # imported, or brought by a star import
                return self._imported(expr, scope)
            target = self.summary.functions_by_scope.get((id(owner), expr.value))
            if target is not None:
                return target
            cls = self.classes_by_scope.get((id(owner), expr.value))
            if cls is not None:
                return self.construct(cls)
            instance = self.instance_class(expr, function, scope)
            return self._call_instance(instance)
        if type(expr) is not cst.Attribute:
            return None
        attr = expr.attr.value
        base = expr.value
        context = self.method_context(function)
        if context is not None:
            method, cls = context
            if type(base) is cst.Name and base.value == method.self_name:
                found = self.find_method(cls, attr)
                if found is not None:
                    return found
                assigned = cls.attribute_values.get(attr)
                if type(assigned) is cst.Call:
                    return self._call_instance(self.instance_class(assigned, None, cls.enclosing))
                if assigned is None and self.has_foreign_base(cls):
                    return Ref(METHOD, cls.qualname, attr, local=True)
                return None
            if type(base) is cst.Call and type(base.func) is cst.Name and base.func.value == "super":
                for parent in self.local_bases(cls):
                    found = self.find_method(parent, attr)
                    if found is not None:
                        return found
                if self.has_foreign_base(cls):
                    return Ref(SUPER, cls.qualname, attr, local=True)
                return None
        cls = self.local_class(base, scope)
        if cls is not None:
            return self.method(cls, attr)
        if isinstance(base, (cst.Name, cst.Attribute)):
            imported = self._imported(expr, scope)
            if imported is not None:
                return imported
        # `self.block.encode(x)`, `block = Block(); block.encode(x)`
        instance = self.instance_class(base, function, scope)
        if isinstance(instance, ClassInfo):
            return self.method(instance, attr)
        if instance is not None:
            return Ref(METHOD, instance, attr)
        return None

    def _call_instance(self, instance: ClassInfo | str | None) -> FunctionInfo | Ref | None:
        return None if instance is None else self.instance_call(instance)

    def compile_target(
        self, expr: cst.BaseExpression, function: FunctionInfo | None, scope: Scope
    ) -> FunctionInfo | Ref | None:
        """What `torch.compile(expr)` compiles: a function, or the forward of a module."""
        instance = self.instance_class(expr, function, scope)
        if instance is not None:
            return self.instance_call(instance)
        cls = self.local_class(expr, scope)
        if cls is not None:
            return self.instance_call(cls)
        found = self.local_function(expr, scope)
        if found is not None:
            return found
        name = self.project_name(expr, scope)  # only names bound by an import (or a star) have one
        if may_be_project(name):
            return Ref(COMPILED, name)
        if function is not None and isinstance(expr, cst.Attribute):
            return self.callee(expr, function)
        return None


def _literal_entries(value: cst.BaseExpression | None) -> list[cst.BaseExpression] | None:
    """The values of a dict, list or tuple literal of names (`{"euler": Euler, ...}`)."""
    if isinstance(value, cst.Dict):
        entries = [element.value for element in value.elements if isinstance(element, cst.DictElement)]
    elif isinstance(value, (cst.List, cst.Tuple)):
        entries = [element.value for element in value.elements if not isinstance(element, cst.StarredElement)]
    else:
        return None
    return entries if all(isinstance(entry, (cst.Name, cst.Attribute)) for entry in entries) else None


# What rules use to resolve a call to this file's functions (TL504).
CallIndex = _Index


def _rebound_to_disabled(function: FunctionInfo) -> cst.Call | None:
    """`helper = torch.compiler.disable(helper)` after `def helper`: callers get the wrapper."""
    value = function.enclosing.assignments.get(function.name)
    if (
        isinstance(value, cst.Call)
        and qualified_name(value.func, function.enclosing) in DISABLE_FUNCTIONS
        and bool(value.args)
        and isinstance(value.args[0].value, cst.Name)
        and value.args[0].value.value == function.name
    ):
        return value
    return None


def _not_recursive(disable: cst.BaseExpression) -> bool:
    """`disable(..., recursive=False)`."""
    return isinstance(disable, cst.Call) and any(
        arg.keyword is not None
        and arg.keyword.value == "recursive"
        and isinstance(arg.value, cst.Name)
        and arg.value.value == "False"
        for arg in disable.args
    )


def _matches_entry_point(dotted: str, entry: str) -> bool:
    """`entry-points` are dotted names matched by suffix: `Net.forward` names
    `pkg.model.Net.forward`. No globs: a `*` is a character like any other."""
    return dotted == entry or dotted.endswith("." + entry)


class FileGraph:
    """One file's entry points and calls, resolved as far as the file alone allows."""

    def __init__(
        self,
        summary: FileSummary,
        entry_points: tuple[str, ...] = (),
        guards: GuardEvaluator | None = None,
        presume_forwards: bool = True,
    ) -> None:
        """``guards``: the `is_compiling()`-style checks whose ruled-out branches add no
        edges (the built-in ones when not given). ``presume_forwards``: every module's
        `forward` is an entry point (`compiled = "forward"`); without, only compile sites and
        ``entry_points`` start compiled code (`compiled = "reachable"`)."""
        self.summary = summary
        self.entry_points = entry_points
        self.presume_forwards = presume_forwards
        self._matched_entry_points: set[str] = set()
        self.index = _Index(summary)
        self.guarded = GuardedFile(summary, guards if guards is not None else GuardEvaluator())
        self.disabled: set[FunctionInfo] = set()
        # `disable(recursive=False)`: the function runs eagerly, what it calls is compiled.
        self.passes_through: set[FunctionInfo] = set()
        self.nested_in: dict[FunctionInfo, list[FunctionInfo]] = {}
        for function in summary.functions:
            if function.parent is not None:
                self.nested_in.setdefault(function.parent, []).append(function)
            for decorator in function.node.decorators:
                if _decorator_target(decorator.decorator, function.enclosing) in DISABLE_FUNCTIONS:
                    self.disabled.add(function)
                    if _not_recursive(decorator.decorator):
                        self.passes_through.add(function)
            rebound = _rebound_to_disabled(function)
            if rebound is not None:
                self.disabled.add(function)
                if _not_recursive(rebound):
                    self.passes_through.add(function)
        self._edges: dict[FunctionInfo, list[tuple[FunctionInfo | Ref, str]]] = {}
        self._entries: list[Entry] | None = None

    def dotted(self, qualname: str) -> str:
        return dotted_in(self.summary.module_name, qualname)

    def entries(self, candidates: bool = False) -> list[Entry]:
        """Entry points in a fixed order; ``candidates`` adds the forward of every class
        (with its reason None where this file alone does not show an nn.Module), unless
        forwards are not presumed compiled."""
        if self._entries is None:
            self._entries = self._find_entries()
        if candidates:
            return self._entries
        return [entry for entry in self._entries if entry.reason is not None]

    def matched_entry_points(self) -> frozenset[str]:
        """The configured entry points that name a function of this file, or a class whose
        instances it can call: the project reports those that name nothing anywhere."""
        self.entries()
        return frozenset(self._matched_entry_points)

    def _find_entries(self) -> list[Entry]:
        summary, index = self.summary, self.index
        found: list[Entry] = []
        for function in summary.functions:
            for decorator in function.node.decorators:
                expr = decorator.decorator
                name = _decorator_target(expr, function.enclosing)
                if name in COMPILE_FUNCTIONS:
                    call = expr if isinstance(expr, cst.Call) else None
                    fullgraph = call is not None and is_fullgraph(call)
                    found.append(Entry(function, f"entry: @{name}{_decorator_suffix(fullgraph, call)}", fullgraph=fullgraph))
            dotted = self.dotted(function.qualname)
            for entry in self.entry_points:
                if _matches_entry_point(dotted, entry):
                    found.append(Entry(function, f"entry: config entry-points (`{entry}`)"))
                    self._matched_entry_points.add(entry)
        for info in summary.classes.values():
            forward = info.methods.get("forward")
            if forward is not None and self.presume_forwards:
                reason = index.module_reason(info)
                text = f"entry: forward of nn.Module subclass {info.qualname} ({reason})" if reason else None
                found.append(Entry(forward, text, explicit=False, module_class=info))
            dotted = self.dotted(info.qualname)
            for entry in self.entry_points:
                if _matches_entry_point(dotted, entry):
                    target = index.instance_call(info)
                    if target is not None:
                        found.append(Entry(target, f"entry: config entry-points (`{entry}`)"))
                        self._matched_entry_points.add(entry)
        for call, scope, caller in summary.calls:
            found.extend(self._compile_site(call, scope, caller))
        return found

    def _compile_site(self, call: cst.Call, scope: Scope, function: FunctionInfo | None) -> list[Entry]:
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value not in _COMPILE_ATTRIBUTES:
            return []  # the common case, `x.view(...)`, decided without resolving names
        name = qualified_name(func, scope)
        fullgraph = is_fullgraph(call)
        options = "fullgraph=True" if fullgraph else ""
        if name in COMPILE_FUNCTIONS:
            if not call.args or call.args[0].keyword is not None:
                return []
            target = self.index.compile_target(call.args[0].value, function, scope)
            return [Entry(target, f"entry: passed to {name}({options})", fullgraph=fullgraph)] if target else []
        if isinstance(func, cst.Attribute) and func.attr.value == "compile" and name is None:
            # `model.compile()`: nn.Module.compile compiles the module's forward in place.
            instance = self.index.instance_class(func.value, function, scope)
            if isinstance(instance, ClassInfo) and not self._compiles_as_module(instance):
                return []
            if instance is None:
                return []
            target = self.index.instance_call(instance)
            if isinstance(target, Ref):
                # The project checks that the class has no `compile` method of its own.
                target = target._replace(attr="compile")
            shown = instance.qualname if isinstance(instance, ClassInfo) else instance.rsplit(".", 1)[-1]
            return [Entry(target, f"entry: .compile({options}) of a {shown}", fullgraph=fullgraph)] if target else []
        return []

    def _compiles_as_module(self, info: ClassInfo) -> bool:
        """Whether `instance.compile()` is nn.Module.compile, not a method of the class's own."""
        index = self.index
        if index.find_method(info, "compile") is not None:
            return False
        return index.module_reason(info) is not None or index.has_foreign_base(info)

    def edges(self, function: FunctionInfo) -> list[tuple[FunctionInfo | Ref, str]]:
        """What ``function`` may run while compiling, each with how: CALLED, PASSED or NESTED."""
        found = self._edges.get(function)
        if found is not None:
            return found
        found = []
        callees = self.index.callees
        ruled_out = self.guarded.ruled_out(function).inside
        for call in function.calls:
            if id(call) in ruled_out:
                continue
            targets = callees(call.func, function) or self._any_method(call.func, function)
            found.extend((target, through(CALLED, note)) for target, note in targets)
            func = call.func
            builtin = func.value if isinstance(func, cst.Name) else None
            dunder = _DUNDER_BUILTINS.get(builtin) if builtin is not None else None
            if dunder and len(call.args) == 1 and not call.args[0].star and (
                qualified_name(func, function.scope) == f"builtins.{builtin}"
            ):
                method = cst.Attribute(value=call.args[0].value, attr=cst.Name(dunder))
                found.extend((target, through(CALLED, note)) for target, note in callees(method, function))
            # Functions handed to another call are usually called by it (checkpoint, map, ...);
            # not by a builtin that only looks at them (`isinstance(x, Decoder)`).
            handed = [arg.value for arg in call.args if isinstance(arg.value, (cst.Name, cst.Attribute))]
            if handed and qualified_name(func, function.scope) not in _INSPECTING_CALLS:
                for value in handed:
                    found.extend((target, through(PASSED, note)) for target, note in callees(value, function))
        for nested in self.nested_in.get(function, ()):
            if id(nested.lambda_node or nested.node) not in ruled_out:
                found.append((nested, NESTED))
        self._edges[function] = found
        return found

    def _any_method(self, func: cst.BaseExpression, function: FunctionInfo) -> list[tuple[Ref, str]]:
        """`solver.integrate(t)` where nothing tells the class of `solver`: left to the project,
        which knows every class that defines `integrate`. Not for a module, `self` or `super()`."""
        if type(func) is not cst.Attribute or func.attr.value in _COMMON_METHODS:
            return []
        base = func.value
        while type(base) is cst.Attribute:
            base = base.value
        if type(base) is cst.Call:
            base = base.func
        if type(base) is not cst.Name or base.value == "super":
            return []
        method = self.index.method_context(function)
        if method is not None and base.value == method[0].self_name and type(func.value) is cst.Name:
            return []  # `self.attr(...)`: the class is known, and it has no such method
        if self.index.project_name(base, function.scope) is not None:
            return []  # a module, or a class or function imported
        return [(Ref(ANY_METHOD, "", func.attr.value), f"any class's .{func.attr.value}")]

    def fullgraph_here(self) -> set[FunctionInfo]:
        """The functions that only this file's fullgraph=True compile sites reach, as far as
        the file alone shows."""
        entries = [(e.target, e.explicit, e.fullgraph) for e in self.entries() if isinstance(e.target, FunctionInfo)]
        return fullgraph_only(entries, self.local_edges, self.disabled)

    def local_edges(self, function: FunctionInfo) -> Iterator[tuple[FunctionInfo, str]]:
        """Edges within the file."""
        for target, how in self.edges(function):
            if isinstance(target, FunctionInfo):
                yield target, how


Node = TypeVar("Node", bound=Hashable)


def descendants(root: Node, children: Callable[[Node], Iterable[Node]]) -> list[Node]:
    """What ``children`` leads to from ``root``, at any depth, each once, ``root`` left out:
    a class's subclasses and theirs."""
    found: dict[Node, None] = {}  # ordered, and a class may have hundreds of subclasses
    pending = deque(children(root))
    while pending:
        node = pending.popleft()
        if node not in found and node != root:
            found[node] = None
            pending.extend(children(node))
    return list(found)


def reach(
    seeds: Iterable[tuple[Node, str]],
    edges: Callable[[Node], Iterable[tuple[Node, str]]],
    blocked: set[Node] | frozenset[Node],
    reason: Callable[[str, Node, Node], str],
    passes_through: set[Node] | frozenset[Node] = frozenset(),
) -> dict[Node, str]:
    """Everything reachable from ``seeds``, each with the reason it was first reached by.

    A blocked node is not entered, unless it passes through: it is not compiled itself,
    but what it calls is.
    """
    found: dict[Node, str] = {}
    crossed: set[Node] = set()
    pending: deque[Node] = deque()
    for node, why in seeds:
        if node not in found and node not in blocked:
            found[node] = why
            pending.append(node)
    while pending:
        node = pending.popleft()
        for target, how in edges(node):
            if target in found or target in crossed:
                continue
            if target not in blocked:
                found[target] = reason(how, node, target)
                pending.append(target)
            elif target in passes_through:
                crossed.add(target)
                pending.append(target)
    return found


def fullgraph_only(
    entries: list[tuple[Node, bool, bool]],
    edges: Callable[[Node], Iterable[tuple[Node, str]]],
    blocked: set[Node] | frozenset[Node],
) -> set[Node]:
    """The functions that only fullgraph=True entry points reach.

    ``entries`` holds (function, explicit, fullgraph). A presumed entry (the forward of a
    module) counts only where no explicit one reaches it: `torch.compile(Net(),
    fullgraph=True)` makes Net.forward fullgraph, though Net is also a module.
    """
    no_reason = lambda how, source, target: ""  # noqa: E731 - reasons are not needed here
    explicit = reach(((node, "") for node, is_explicit, _ in entries if is_explicit), edges, blocked, no_reason)
    counted = [
        (node, "")
        for node, is_explicit, fullgraph in entries
        if (is_explicit and not fullgraph) or (not is_explicit and node not in explicit)
    ]
    not_fullgraph = reach(counted, edges, blocked, no_reason)
    return {node for node in explicit if node not in not_fullgraph}
