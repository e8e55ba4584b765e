"""A file's outline: what the project index needs from it, small and picklable.

Worker processes lint each file and send back its outline (names, bases, calls, entry
points; no syntax trees), so the project-wide step works on little data and never parses.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from torchlint.semantic.regions import FileGraph, Ref, Regions
from torchlint.semantic.scopes import qualified_name
from torchlint.semantic.summary import FileSummary, FunctionInfo

# An edge's target: a function of the same file (its qualified name), or a Ref whose
# relative names are made absolute.
Target = str | Ref


@dataclass(frozen=True)
class OutlineEntry:
    target: Target
    reason: str | None
    explicit: bool
    fullgraph: bool
    # For the presumed forward of a class: the class (the project decides if it is a module).
    module_class: str | None = None


@dataclass(frozen=True)
class ClassOutline:
    # (True, qualname) for a base in this file, (False, absolute dotted name) otherwise
    bases: tuple[tuple[bool, str], ...]
    methods: frozenset[str]
    # why this file alone shows it is an nn.Module, or None
    module_reason: str | None


@dataclass
class FileOutline:
    path: str
    module: str
    # what relative imports start from: the module itself for a package's __init__
    package: str
    # False: the text test showed nothing to trace, so the file was not parsed
    parsed: bool = True
    imports: dict[str, str] = field(default_factory=dict)  # module-level name -> dotted name
    functions: dict[str, tuple[tuple[Target, str], ...]] = field(default_factory=dict)
    classes: dict[str, ClassOutline] = field(default_factory=dict)
    entries: tuple[OutlineEntry, ...] = ()
    disabled: frozenset[str] = frozenset()
    # what linting the file on its own found
    compiled: frozenset[str] = frozenset()
    fullgraph: frozenset[str] = frozenset()
    dynamo_config: dict = field(default_factory=dict)


def package_of(module: str, is_package: bool) -> str:
    return module if is_package else module.rpartition(".")[0]


def absolute(name: str, package: str) -> str | None:
    """`.layers.helper` from package `pkg` is `pkg.layers.helper`; None above the top."""
    if not name.startswith("."):
        return name
    rest = name.lstrip(".")
    levels = len(name) - len(rest)
    parts = package.split(".") if package else []
    if levels - 1 > len(parts):
        return None
    base = parts[: len(parts) - (levels - 1)]
    joined = ".".join(base + ([rest] if rest else []))
    return joined or None


def unparsed_outline(path: str, module: str, is_package: bool) -> FileOutline:
    return FileOutline(path, module, package_of(module, is_package), parsed=False)


def outline_of(
    summary: FileSummary, graph: FileGraph, regions: Regions, path: str, is_package: bool
) -> FileOutline:
    package = package_of(summary.module_name, is_package)

    def target(node: FunctionInfo | Ref) -> Target | None:
        if isinstance(node, FunctionInfo):
            return node.qualname
        if node.local:
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

    classes = {}
    index = graph.index
    for qualname, info in summary.classes.items():
        bases = []
        for base in info.bases:
            local = index.local_class(base, info.enclosing)
            if local is not None:
                bases.append((True, local.qualname))
                continue
            name = qualified_name(base, info.enclosing)
            name = absolute(name, package) if name else None
            if name:
                bases.append((False, name))
        classes[qualname] = ClassOutline(tuple(bases), frozenset(info.methods), index.module_reason(info))

    entries = []
    for entry in graph.entries(candidates=True):
        resolved = target(entry.target)
        if resolved is not None:
            module_class = entry.module_class.qualname if entry.module_class is not None else None
            entries.append(OutlineEntry(resolved, entry.reason, entry.explicit, entry.fullgraph, module_class))

    imports = {}
    for local_name, name in summary.scope.imports.items():
        resolved_name = absolute(name, package)
        if resolved_name:
            imports[local_name] = resolved_name

    return FileOutline(
        path=path,
        module=summary.module_name,
        package=package,
        imports=imports,
        functions=functions,
        classes=classes,
        entries=tuple(entries),
        disabled=frozenset(function.qualname for function in graph.disabled),
        compiled=frozenset(function.qualname for function in regions.compiled),
        fullgraph=frozenset(function.qualname for function in regions.fullgraph),
        dynamo_config=dict(summary.dynamo_config),
    )
