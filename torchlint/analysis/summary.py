"""One pass over a module that records its structure: scopes, functions, classes, calls.

Everything later stages need to decide what is compiled, and to resolve names, comes
from here, so the tree is walked in full only once before the rules run.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import libcst as cst

from torchlint.parse.cst_walk import walk
from torchlint.analysis.scopes import Scope, ScopeKind, dotted_name, lookup_scope, package_of, qualified_name

# What Python names a lambda. A lambda assigned to a name in a module or class body takes
# that name, as a def would; the others after the first in a scope are numbered
# (`<lambda#2>`), so that each function's qualified name is its own.
LAMBDA = "<lambda>"


@dataclass(eq=False)
class ClassInfo:
    qualname: str
    node: cst.ClassDef
    scope: Scope  # the class body
    enclosing: Scope  # where the class statement is, for resolving its bases
    methods: dict[str, FunctionInfo] = field(default_factory=dict)
    # `self.<attr> = <expr>` anywhere in the class's methods
    attribute_values: dict[str, cst.BaseExpression] = field(default_factory=dict)
    # every `self.<attr> = <expr>` of the class, with the scope of the method it is in
    attribute_history: dict[str, list[tuple[cst.BaseExpression, Scope]]] = field(default_factory=dict)
    # `self.<attr> = <param>` in `__init__`: the attribute keeps what the constructor was given
    held: dict[str, str] = field(default_factory=dict)

    @property
    def bases(self) -> list[cst.BaseExpression]:
        return [arg.value for arg in self.node.bases if arg.keyword is None]


@dataclass(eq=False)
class FunctionInfo:
    qualname: str
    # A lambda's is the def it stands for, `def f(<params>): return <body>`: made of the
    # lambda's own nodes, so what is found in it has a place in the module.
    node: cst.FunctionDef
    scope: Scope  # the function body
    enclosing: Scope  # where the def statement is, for resolving decorators
    owner_class: ClassInfo | None = None
    parent: FunctionInfo | None = None
    calls: list[cst.Call] = field(default_factory=list)
    lambda_node: cst.Lambda | None = None

    @property
    def name(self) -> str:
        return self.qualname.rpartition(".")[2]

    @property
    def name_node(self) -> cst.CSTNode:
        """Where the function is named: its def's name, or the lambda."""
        return self.lambda_node or self.node.name

    @property
    def self_name(self) -> str | None:
        """The first parameter of a method (conventionally ``self``)."""
        if self.owner_class is None or not self.node.params.params:
            return None
        return self.node.params.params[0].name.value

    @property
    def method(self) -> FunctionInfo | None:
        """The method whose ``self`` is visible here: this function, or the nearest enclosing one."""
        function: FunctionInfo | None = self
        while function is not None and function.owner_class is None:
            function = function.parent
        return function

    @property
    def is_static(self) -> bool:
        return any(
            qualified_name(d.decorator, self.enclosing) == "builtins.staticmethod" for d in self.node.decorators
        )

    @property
    def positional(self) -> list[cst.Param]:
        """The parameters a positional argument can fill, ``self`` (or ``cls``) left out for a
        method called through an object or its class."""
        params = [*self.node.params.posonly_params, *self.node.params.params]
        return params[1:] if self.owner_class is not None and not self.is_static else params

    def parameter(self, name: str) -> cst.Param | None:
        params = self.node.params
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            if param.name.value == name:
                return param
        return None


@dataclass(eq=False)
class FileSummary:
    module: cst.Module
    scope: Scope
    module_name: str
    # what relative imports start from: the module itself for a package's `__init__`
    package: str = ""
    functions: list[FunctionInfo] = field(default_factory=list)
    classes: dict[str, ClassInfo] = field(default_factory=dict)
    # every call with the scope it is in, for finding `torch.compile(...)` sites
    calls: list[tuple[cst.Call, Scope, FunctionInfo | None]] = field(default_factory=list)
    # id of a lambda node -> its function, for the lambdas that are functions of their own
    lambdas: dict[int, FunctionInfo] = field(default_factory=dict)
    # (id of the scope that binds it, name) -> function
    functions_by_scope: dict[tuple[int, str], FunctionInfo] = field(default_factory=dict)

    def local_function(self, name: str, scope: Scope) -> FunctionInfo | None:
        """The function of this file that ``name`` refers to in ``scope``, if any."""
        owner = lookup_scope(scope, name)
        if owner is None or name in owner.imports:
            return None
        return self.functions_by_scope.get((id(owner), name))


def target_names(target: cst.BaseExpression) -> Iterator[str]:
    """The names an assignment target binds: `a`, `a, (b, *c)`; none for `x.attr` or `x[i]`."""
    if isinstance(target, cst.Name):
        yield target.value
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from target_names(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from target_names(target.value)


def _pairs(
    target: cst.BaseExpression, value: cst.BaseExpression
) -> Iterator[tuple[cst.BaseExpression, cst.BaseExpression]]:
    """(target, value) pairs of an assignment, `a, b = x, y` taken element by element."""
    if (
        isinstance(target, (cst.Tuple, cst.List))
        and isinstance(value, (cst.Tuple, cst.List))
        and len(target.elements) == len(value.elements)
        and not any(isinstance(e, cst.StarredElement) for e in (*target.elements, *value.elements))
    ):
        for left, right in zip(target.elements, value.elements):
            yield from _pairs(left.value, right.value)
    else:
        yield target, value


def _is_compile_call(call: cst.Call) -> bool:
    """`torch.compile(...)`, `compile(...)`, `model.compile(...)`: told apart later, by name."""
    func = call.func
    name = func.attr if isinstance(func, cst.Attribute) else func
    return isinstance(name, cst.Name) and name.value == "compile"


def _import_module_name(node: cst.ImportFrom) -> str:
    dots = "." * len(node.relative)
    if node.module is None:
        return dots
    return dots + (dotted_name(node.module) or "")


# The node types the summary reads; every other node is only walked through. libcst's node
# classes are final, so a type lookup is exact, and much cheaper than a chain of
# `isinstance` checks against its ABC-based classes.
_SUMMARIZED = frozenset({
    cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.Call, cst.Assign, cst.AnnAssign, cst.AugAssign,
    cst.For, cst.CompFor, cst.AsName, cst.NamedExpr, cst.Import, cst.ImportFrom, cst.Global, cst.Nonlocal,
})


class _Summarizer:
    def __init__(self, summary: FileSummary) -> None:
        self.summary = summary
        # id of a lambda -> the name a module or class body assigns it to
        self.lambda_names: dict[int, str] = {}
        # ids of the lambdas handed to a compile call: inside a function, the only lambdas
        # that are functions of their own
        self.compiled_lambdas: set[int] = set()
        # prefix -> how many lambdas without a name it holds so far
        self.unnamed: dict[str, int] = {}

    def scan(
        self,
        root: cst.CSTNode,
        scope: Scope,
        function: FunctionInfo | None,
        owner_class: ClassInfo | None,
        prefix: str,
    ) -> None:
        summary = self.summary

        def visit(node: cst.CSTNode) -> bool | None:
            if type(node) not in _SUMMARIZED:
                return None
            if type(node) is cst.FunctionDef:
                self._function(node, scope, function, owner_class, prefix)
                return True
            if type(node) is cst.ClassDef:
                self._class(node, scope, prefix)
                return True
            # A lambda inside a function is part of it (it sees the function's names), unless
            # it is compiled on its own.
            if type(node) is cst.Lambda and (function is None or id(node) in self.compiled_lambdas):
                self._lambda(node, scope, function, owner_class, prefix)
                return True
            if type(node) is cst.Call:
                summary.calls.append((node, scope, function))
                if function is not None:
                    function.calls.append(node)
                if _is_compile_call(node) and node.args and isinstance(node.args[0].value, cst.Lambda):
                    self.compiled_lambdas.add(id(node.args[0].value))
            elif type(node) is cst.Assign:
                if function is None and len(node.targets) == 1 and type(node.value) is cst.Lambda:
                    named = node.targets[0].target
                    if type(named) is cst.Name:
                        self.lambda_names[id(node.value)] = named.value
                for target in node.targets:
                    self._bind_target(target.target, node.value, scope, function, single=len(node.targets) == 1)
                    if function is not None and function.name == "__init__" and function.owner_class is not None:
                        self._hold_arguments(target.target, node.value, function, function.owner_class)
            elif type(node) is cst.AnnAssign:
                self._bind_target(node.target, node.value, scope, function, single=node.value is not None)
            elif type(node) is cst.AugAssign:
                for name in target_names(node.target):
                    scope.bind(name)
            elif isinstance(node, (cst.For, cst.CompFor)):
                for name in target_names(node.target):
                    scope.bind(name)
            elif type(node) is cst.AsName:
                if isinstance(node.name, (cst.Name, cst.Tuple, cst.List)):
                    for name in target_names(node.name):
                        scope.bind(name)
            elif type(node) is cst.NamedExpr:
                for name in target_names(node.target):
                    scope.bind(name)
            elif type(node) is cst.Import:
                for alias in node.names:
                    full = alias.evaluated_name
                    as_name = alias.evaluated_alias  # None without `as`
                    if as_name is not None:
                        scope.imports[as_name] = full
                    else:
                        head = full.split(".", 1)[0]
                        scope.imports[head] = head
                return True
            elif type(node) is cst.ImportFrom:
                module = _import_module_name(node)
                if isinstance(node.names, cst.ImportStar):
                    scope.star_imports.append(module)
                    return True
                separator = "" if module.endswith(".") else "."
                for alias in node.names:
                    local = alias.evaluated_alias or alias.evaluated_name
                    scope.imports[local] = f"{module}{separator}{alias.evaluated_name}"
                return True
            elif isinstance(node, (cst.Global, cst.Nonlocal)):
                for item in node.names:
                    scope.declared_elsewhere.add(item.name.value)
            return None

        walk(root, visit)

    def _bind_target(
        self,
        target: cst.BaseExpression,
        value: cst.BaseExpression | None,
        scope: Scope,
        function: FunctionInfo | None,
        single: bool,
    ) -> None:
        if isinstance(target, cst.Name):
            scope.bind(target.value)
            if single and value is not None:
                scope.assignments[target.value] = value
            return
        if (
            isinstance(target, cst.Attribute)
            and function is not None
            and function.owner_class is not None
            and isinstance(target.value, cst.Name)
            and target.value.value == function.self_name
            and value is not None
        ):
            function.owner_class.attribute_values[target.attr.value] = value
            function.owner_class.attribute_history.setdefault(target.attr.value, []).append((value, scope))
            return
        for name in target_names(target):
            scope.bind(name)

    def _hold_arguments(
        self, target: cst.BaseExpression, value: cst.BaseExpression, init: FunctionInfo, owner: ClassInfo
    ) -> None:
        """`self.unet, self.scheduler = unet, scheduler`: what the constructor's callers pass
        for those parameters is what the attributes hold."""
        for left, right in _pairs(target, value):
            if (
                isinstance(right, cst.Name)
                and isinstance(left, cst.Attribute)
                and self._is_self(left.value, init)
                and init.parameter(right.value) is not None
            ):
                owner.held[left.attr.value] = right.value

    @staticmethod
    def _is_self(node: cst.BaseExpression, function: FunctionInfo | None) -> bool:
        return (
            function is not None
            and function.owner_class is not None
            and isinstance(node, cst.Name)
            and node.value == function.self_name
        )

    def _function(
        self,
        node: cst.FunctionDef,
        enclosing: Scope,
        parent: FunctionInfo | None,
        owner_class: ClassInfo | None,
        prefix: str,
        lambda_node: cst.Lambda | None = None,
    ) -> FunctionInfo:
        name = node.name.value if lambda_node is None else self._lambda_name(lambda_node, prefix)
        named = not name.startswith("<")
        qualname = f"{prefix}{name}"
        scope = Scope(ScopeKind.FUNCTION, parent=enclosing)
        # A method's owner is the class whose body holds the def; a def nested in a
        # method belongs to no class of its own, but still sees the method's `self`.
        direct_owner = owner_class if enclosing.kind is ScopeKind.CLASS and named else None
        info = FunctionInfo(qualname, node, scope, enclosing, direct_owner, parent, lambda_node=lambda_node)
        if named:
            enclosing.bind(name)
        if direct_owner is not None:
            direct_owner.methods[name] = info
        self.summary.functions.append(info)
        params = node.params
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            scope.bind(param.name.value)
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                scope.bind(star.name.value)
        # Decorators and defaults run in the enclosing scope.
        for decorator in node.decorators:
            self.scan(decorator.decorator, enclosing, parent, owner_class, prefix)
        self.scan(node.body, scope, info, None, qualname + ".")
        return info

    def _lambda(
        self,
        node: cst.Lambda,
        enclosing: Scope,
        parent: FunctionInfo | None,
        owner_class: ClassInfo | None,
        prefix: str,
    ) -> None:
        # The def's name is only there to make a valid node: FunctionInfo.name comes from
        # the qualified name.
        body = cst.IndentedBlock(body=[cst.SimpleStatementLine(body=[cst.Return(value=node.body)])])
        as_def = cst.FunctionDef(name=cst.Name("lambda_"), params=node.params, body=body)
        self.summary.lambdas[id(node)] = self._function(as_def, enclosing, parent, owner_class, prefix, node)

    def _lambda_name(self, node: cst.Lambda, prefix: str) -> str:
        name = self.lambda_names.get(id(node))
        if name is not None:
            return name
        count = self.unnamed[prefix] = self.unnamed.get(prefix, 0) + 1
        return LAMBDA if count == 1 else f"<lambda#{count}>"

    def _class(self, node: cst.ClassDef, enclosing: Scope, prefix: str) -> None:
        enclosing.bind(node.name.value)
        qualname = f"{prefix}{node.name.value}"
        scope = Scope(ScopeKind.CLASS, parent=enclosing)
        info = ClassInfo(qualname, node, scope, enclosing)
        self.summary.classes[qualname] = info
        for base in node.bases:
            self.scan(base.value, enclosing, None, None, prefix)
        self.scan(node.body, scope, None, info, qualname + ".")


def _method_aliases(summary: FileSummary) -> None:
    """`forward = _impl` in a class body: the class's `forward` is that function."""
    for info in summary.classes.values():
        for name, value in info.scope.assignments.items():
            if name not in info.methods and isinstance(value, cst.Name):
                function = summary.local_function(value.value, info.scope)
                if function is not None:
                    info.methods[name] = function


def summarize(module: cst.Module, module_name: str = "", is_package: bool = False) -> FileSummary:
    scope = Scope(ScopeKind.MODULE)
    summary = FileSummary(module, scope, module_name, package_of(module_name, is_package))
    _Summarizer(summary).scan(module, scope, None, None, "")
    summary.functions_by_scope = {(id(function.enclosing), function.name): function for function in summary.functions}
    _method_aliases(summary)
    return summary
