"""Which functions run under torch.compile, and why.

Entry points are the ``forward`` of ``nn.Module`` subclasses, functions decorated with
``torch.compile``, functions passed to ``torch.compile(...)`` and the configured
``entry-points``. From them, reachability follows the calls that resolve statically:
functions of the same module, ``self.method()``, ``super().method()``, submodules
assigned in ``__init__``, and functions handed to another call (``checkpoint(fn, x)``).
Functions under ``torch.compiler.disable`` are never traced.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import libcst as cst

from torchlint.semantic.scopes import Scope, lookup_scope, qualified_name
from torchlint.semantic.summary import ClassInfo, FileSummary, FunctionInfo

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


@dataclass
class Regions:
    # compiled function -> the reason, for `--show-regions` and messages
    compiled: dict[FunctionInfo, str] = field(default_factory=dict)
    disabled: set[FunctionInfo] = field(default_factory=set)


def _decorator_target(decorator: cst.BaseExpression, scope: Scope) -> str | None:
    """The qualified name a decorator applies: `@f` and `@f(...)` both give f."""
    if isinstance(decorator, cst.Call):
        decorator = decorator.func
    return qualified_name(decorator, scope)


class _Index:
    """Lookups over one file's summary."""

    def __init__(self, summary: FileSummary) -> None:
        self.summary = summary
        self.functions_by_scope: dict[tuple[int, str], FunctionInfo] = {}
        for function in summary.functions:
            self.functions_by_scope[(id(function.enclosing), function.name)] = function
        self.classes_by_scope: dict[tuple[int, str], ClassInfo] = {
            (id(info.enclosing), info.node.name.value): info for info in summary.classes.values()
        }
        self._is_module: dict[ClassInfo, bool] = {}

    def local_class(self, expr: cst.BaseExpression, scope: Scope) -> ClassInfo | None:
        if not isinstance(expr, cst.Name):
            return None
        owner = lookup_scope(scope, expr.value)
        if owner is None or expr.value in owner.imports:
            return None
        return self.classes_by_scope.get((id(owner), expr.value))

    def local_function(self, expr: cst.BaseExpression, scope: Scope) -> FunctionInfo | None:
        if not isinstance(expr, cst.Name):
            return None
        owner = lookup_scope(scope, expr.value)
        if owner is None or expr.value in owner.imports:
            return None
        return self.functions_by_scope.get((id(owner), expr.value))

    def local_bases(self, info: ClassInfo) -> list[ClassInfo]:
        found = []
        for base in info.bases:
            local = self.local_class(base, info.enclosing)
            if local is not None and local is not info:
                found.append(local)
        return found

    def find_method(self, info: ClassInfo, name: str, _seen: frozenset = frozenset()) -> FunctionInfo | None:
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

    def module_reason(self, info: ClassInfo) -> str | None:
        """Why ``info`` is taken for an ``nn.Module`` subclass, or None."""
        return self._module_reason(info, frozenset())

    def _module_reason(self, info: ClassInfo, seen: frozenset) -> str | None:
        if info in seen:
            return None
        unresolved = []
        for base in info.bases:
            local = self.local_class(base, info.enclosing)
            if local is not None:
                if self._module_reason(local, seen | {info}) is not None:
                    return f"subclass of {local.qualname}, an nn.Module"
                continue
            name = qualified_name(base, info.enclosing)
            if name is not None and (name == "torch.nn.Module" or name.startswith("torch.nn.")):
                return f"subclass of {name}"
            if name is None or not name.startswith(_NOT_MODULE_PREFIXES):
                unresolved.append(name or "?")
        # A base from another package that we cannot see, and a `forward` of its own:
        # nearly always an nn.Module in model code.
        if unresolved and "forward" in info.methods and not unresolved[0].startswith("torch."):
            return f"defines forward() and derives from {unresolved[0]}"
        return None

    def method_context(self, function: FunctionInfo) -> tuple[FunctionInfo, ClassInfo] | None:
        """The method whose ``self`` is visible in ``function`` (itself, or an enclosing one)."""
        current: FunctionInfo | None = function
        while current is not None:
            if current.owner_class is not None:
                return current, current.owner_class
            current = current.parent
        return None

    def callee(self, expr: cst.BaseExpression, function: FunctionInfo) -> FunctionInfo | None:
        """The function of this file that calling ``expr`` inside ``function`` runs."""
        if isinstance(expr, cst.Name):
            target = self.local_function(expr, function.scope)
            if target is not None:
                return target
            cls = self.local_class(expr, function.scope)
            if cls is not None and self.module_reason(cls) is None:
                return self.find_method(cls, "__init__")
            return None
        if not isinstance(expr, cst.Attribute):
            return None
        attr = expr.attr.value
        base = expr.value
        context = self.method_context(function)
        if context is not None:
            method, cls = context
            if isinstance(base, cst.Name) and base.value == method.self_name:
                found = self.find_method(cls, attr)
                if found is not None:
                    return found
                assigned = cls.attribute_values.get(attr)
                if isinstance(assigned, cst.Call):
                    sub = self.local_class(assigned.func, cls.enclosing)
                    if sub is not None:
                        return self.find_method(sub, "forward") or self.find_method(sub, "__call__")
                return None
            if isinstance(base, cst.Call) and isinstance(base.func, cst.Name) and base.func.value == "super":
                for parent in self.local_bases(cls):
                    found = self.find_method(parent, attr)
                    if found is not None:
                        return found
                return None
        cls = self.local_class(base, function.scope)
        if cls is not None:
            return self.find_method(cls, attr)
        return None


def _matches_entry_point(dotted: str, entry: str) -> bool:
    return dotted == entry or dotted.endswith("." + entry)


def _compile_site_target(
    call: cst.Call, scope: Scope, function: FunctionInfo | None, index: _Index
) -> FunctionInfo | None:
    if not call.args or call.args[0].keyword is not None:
        return None
    target = call.args[0].value
    if function is not None:
        return index.callee(target, function)
    found = index.local_function(target, scope)
    if found is not None:
        return found
    cls = index.local_class(target, scope)
    return index.find_method(cls, "forward") if cls is not None else None


def compiled_regions(summary: FileSummary, entry_points: tuple[str, ...] = ()) -> Regions:
    index = _Index(summary)
    regions = Regions()
    pending: deque[FunctionInfo] = deque()

    def add(function: FunctionInfo | None, reason: str) -> None:
        if function is None or function in regions.compiled or function in regions.disabled:
            return
        regions.compiled[function] = reason
        pending.append(function)

    for function in summary.functions:
        for decorator in function.node.decorators:
            name = _decorator_target(decorator.decorator, function.enclosing)
            if name in DISABLE_FUNCTIONS:
                regions.disabled.add(function)

    for function in summary.functions:
        for decorator in function.node.decorators:
            if _decorator_target(decorator.decorator, function.enclosing) in COMPILE_FUNCTIONS:
                add(function, "decorated with torch.compile")
        dotted = f"{summary.module_name}.{function.qualname}" if summary.module_name else function.qualname
        for entry in entry_points:
            if _matches_entry_point(dotted, entry):
                add(function, f"configured entry point `{entry}`")

    for info in summary.classes.values():
        reason = index.module_reason(info)
        if reason is not None:
            forward = info.methods.get("forward")
            add(forward, f"forward() of {info.qualname} ({reason})")
        dotted = f"{summary.module_name}.{info.qualname}" if summary.module_name else info.qualname
        if any(_matches_entry_point(dotted, entry) for entry in entry_points):
            add(index.find_method(info, "forward") or index.find_method(info, "__call__"),
                f"configured entry point `{info.qualname}`")

    for call, scope, function in summary.calls:
        if qualified_name(call.func, scope) in COMPILE_FUNCTIONS:
            target = _compile_site_target(call, scope, function, index)
            add(target, "passed to torch.compile()")

    nested_in: dict[FunctionInfo, list[FunctionInfo]] = {}
    for function in summary.functions:
        if function.parent is not None:
            nested_in.setdefault(function.parent, []).append(function)

    while pending:
        function = pending.popleft()
        for call in function.calls:
            add(index.callee(call.func, function), f"called from {function.qualname}")
            # Functions handed to another call are usually called by it (checkpoint, map, ...).
            for arg in call.args:
                if isinstance(arg.value, (cst.Name, cst.Attribute)):
                    add(index.callee(arg.value, function), f"passed to a call in {function.qualname}")
        for nested in nested_in.get(function, ()):
            add(nested, f"defined inside {function.qualname}")
    return regions
