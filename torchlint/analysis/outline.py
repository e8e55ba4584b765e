"""A file's outline: what the project's solve needs from it, small and picklable.

Worker processes analyse each file once and send back its outline (names, bases, calls,
entry points, what each function's calls pass and what it returns, where it breaks; no
syntax trees), so the project-wide solve works on little data and never parses.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


from torchlint.analysis.checker import FunctionKinds
from torchlint.analysis.conditions import Condition
from torchlint.analysis.kind_vocabulary import TENSOR, annotation_kind
from torchlint.analysis.member_kinds import MemberKinds
from torchlint.analysis.regions import ANY_METHOD, FileGraph, ModuleReason, Ref, arguments, is_factory
from torchlint.analysis.scopes import absolute, package_of
from torchlint.analysis.summary import ClassInfo, FileSummary, FunctionInfo
from torchlint.analysis.typed_dicts import has_optional_keys

# An edge's target: a function of the same file (its qualified name), or a Ref whose
# relative names are made absolute.
Target = str | Ref
# A class: (True, qualname) for one of this file, (False, absolute dotted name) otherwise.
ClassName = tuple[bool, str]


@dataclass(frozen=True, slots=True)
class OutlineEntry:
    target: Target
    reason: str | None
    explicit: bool
    fullgraph: bool
    # For the presumed forward of a class: the class (the project decides if it is a module).
    module_class: str | None = None


@dataclass(frozen=True, slots=True)
class ClassOutline:
    bases: tuple[ClassName, ...]
    # method name -> the qualified name of the function it is (`forward = _impl` names another)
    methods: dict[str, str]
    # why this file alone shows it is an nn.Module, or None
    module_reason: ModuleReason | None
    # the parameters of its own __init__ that positional arguments fill, `self` left out
    init_params: tuple[str, ...] = ()
    # (attribute, __init__ parameter): `self.<attribute> = <parameter>` in __init__
    held: tuple[tuple[str, str], ...] = ()
    # attributes its methods set to tensors
    tensor_members: frozenset[str] = frozenset()
    # classmethods that return an object of the class (`from_dict`)
    factories: frozenset[str] = frozenset()
    # a TypedDict with an optional key, by its own body and its bases in the file
    optional_keys: bool = False


@dataclass(frozen=True, slots=True)
class ParameterNames:
    positional: tuple[str, ...]  # what positional arguments fill, `self` left out
    open: frozenset[str]  # those not annotated as tensors: a caller's tensor tells more

    def named(self, slot: int | str) -> str | None:
        if isinstance(slot, str):
            return slot
        return self.positional[slot] if slot < len(self.positional) else None


@dataclass(frozen=True, slots=True)
class Construction:
    """`Loop(UNet(), scheduler=DDPMScheduler())`: one argument whose class is known."""

    built: ClassName
    slot: int | str  # position or keyword
    given: ClassName
    site: str  # the function (dotted) or module it is in


@dataclass
class FileOutline:
    path: str
    module: str
    # what relative imports start from: the module itself for a package's __init__
    package: str
    # False: the text test showed nothing to trace, so the file was not parsed
    parsed: bool = True
    imports: dict[str, str] = field(default_factory=dict)  # module-level name -> dotted name
    # modules whose public names `from <module> import *` brings in, absolute
    stars: tuple[str, ...] = ()
    functions: dict[str, tuple[tuple[Target, str], ...]] = field(default_factory=dict)
    classes: dict[str, ClassOutline] = field(default_factory=dict)
    entries: tuple[OutlineEntry, ...] = ()
    # the configured `entry-points` that name a function of this file
    entry_points_matched: frozenset[str] = frozenset()
    constructions: tuple[Construction, ...] = ()
    disabled: frozenset[str] = frozenset()
    # `disable(recursive=False)`: not traced itself, what it calls is
    passes_through: frozenset[str] = frozenset()
    # qualified name -> its parameters, for the kinds other files pass
    parameters: dict[str, ParameterNames] = field(default_factory=dict)
    # qualified name -> what its walk found of kinds (returns, calls and what they pass)
    kinds: dict[str, FunctionKinds] = field(default_factory=dict)
    # qualified name -> where a graph break of its own holds (its break findings' conditions)
    breaking: dict[str, Condition] = field(default_factory=dict)
    # qualified name -> the row its name is on, for `--show-regions`
    rows: dict[str, int] = field(default_factory=dict)


def unparsed_outline(path: str, module: str, is_package: bool) -> FileOutline:
    return FileOutline(path, module, package_of(module, is_package), parsed=False)


def outline_of(
    summary: FileSummary,
    graph: FileGraph,
    path: str,
    is_package: bool,
    kinds: Mapping[str, FunctionKinds] = {},
    breaking: Mapping[str, Condition] = {},
    rows: Mapping[str, int] = {},
) -> FileOutline:
    """``kinds``: what each function's walk found of kinds (the checker's); ``breaking``: where
    each function's own graph breaks hold (from the rules' findings)."""
    package = package_of(summary.module_name, is_package)

    def target(node: FunctionInfo | Ref) -> Target | None:
        if isinstance(node, FunctionInfo):
            return node.qualname
        if node.local or node.kind == ANY_METHOD:
            return node
        name = absolute(node.name, package)
        return node._replace(name=name) if name else None

    functions: dict[str, tuple[tuple[Target, str], ...]] = {}
    for function in summary.functions:
        edges = []
        for node, how in graph.edges(function):
            resolved = target(node)
            if resolved is not None:
                edges.append((resolved, how))
        functions[function.qualname] = functions.get(function.qualname, ()) + tuple(edges)

    def class_name(cls: ClassInfo | str | None) -> ClassName | None:
        if isinstance(cls, ClassInfo):
            return (True, cls.qualname)
        name = absolute(cls, package) if cls else None
        return (False, name) if name else None

    classes = {}
    index = graph.index
    members = MemberKinds()
    for qualname, info in summary.classes.items():
        bases = []
        for base in info.bases:
            local = index.local_class(base, info.enclosing)
            name = class_name(local or index.project_name(base, info.enclosing))
            if name is not None:
                bases.append(name)
        init = info.methods.get("__init__")
        classes[qualname] = ClassOutline(
            tuple(bases),
            {name: method.qualname for name, method in info.methods.items()},
            index.module_reason(info),
            tuple(param.name.value for param in init.positional) if init is not None else (),
            tuple(info.held.items()),
            members.tensor_members(info),
            frozenset(name for name, method in info.methods.items() if is_factory(method, info)),
            has_optional_keys(info, index.local_bases),
        )

    constructions = []
    for built, call, scope, caller in index.constructions():
        built_name = class_name(built)
        if built_name is None:
            continue
        for slot, value in arguments(call):
            given = class_name(index.instance_class(value, caller, scope))
            if given is not None:
                constructions.append(Construction(built_name, slot, given, index.site(caller)))

    entries = []
    for entry in graph.entries(candidates=True):
        resolved = target(entry.target)
        if resolved is not None:
            module_class = entry.module_class.qualname if entry.module_class is not None else None
            entries.append(OutlineEntry(resolved, entry.reason, entry.explicit, entry.fullgraph, module_class))

    imports = {}
    for local_name, dotted in summary.scope.imports.items():
        resolved_name = absolute(dotted, package)
        if resolved_name:
            imports[local_name] = resolved_name

    stars = (absolute(name, package) for name in summary.scope.star_imports)
    return FileOutline(
        path=path,
        module=summary.module_name,
        package=package,
        imports=imports,
        stars=tuple(name for name in stars if name),
        functions=functions,
        classes=classes,
        entries=tuple(entries),
        entry_points_matched=graph.matched_entry_points(),
        constructions=tuple(constructions),
        disabled=frozenset(function.qualname for function in graph.disabled),
        passes_through=frozenset(function.qualname for function in graph.passes_through),
        parameters={function.qualname: _parameter_names(function) for function in summary.functions},
        kinds=dict(kinds),
        breaking=dict(breaking),
        rows=dict(rows),
    )


def _parameter_names(function: FunctionInfo) -> ParameterNames:
    named = [*function.positional, *function.node.params.kwonly_params]
    tensors = {
        param.name.value
        for param in named
        if param.annotation is not None and annotation_kind(param.annotation.annotation, function.enclosing) is TENSOR
    }
    return ParameterNames(
        tuple(param.name.value for param in function.positional),
        frozenset(param.name.value for param in named) - tensors,
    )
