"""The project's one resolver and symbol table: names, classes, calls and compiled regions
across the outlines of every file.

Each file was analysed on its own; here an import names a function or class of another
file, a base class lives in another file, a module is compiled in a script, a script builds
a module around an object of another file's class. The work is graph search over small
records, no parsing: which functions are compiled, and why (`solve`), and what each call of
a file runs (`callees`), for the kinds and breaks that `torchlint.project.solution` works out.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable

from torchlint.analysis.outline import ClassName, FileOutline, OutlineEntry, Target
from torchlint.analysis.regions import (
    ANY_METHOD,
    COMPILED,
    CONSTRUCT,
    HELD,
    INSTANCE,
    METHOD,
    ModuleReason,
    NAME,
    OVERRIDES,
    SUPER,
    Ref,
    descendants,
    fullgraph_only,
    held_note,
    overrides_note,
    reach,
    through,
)

# A function of the project: (path, qualified name).
Node = tuple[str, str]
# A class of the project: (path, qualified name).
ClassKey = tuple[str, str]
# How many of the project's classes may define a method for a call on an object of unknown
# class to run each of them. Measured on the development half of the real-code benchmark:
# up to 3 found nothing more, 4 and 5 found 5 more sites with no false positive, 8 found 2
# more sites and 2 false positives. Measured again once the bench lints whole folders: 5 finds
# 5 more sites than 0, still with no false positive.
MAX_CLASSES_BY_METHOD = 5

_MAX_ALIAS_DEPTH = 8  # re-exports of re-exports; cycles must end


class ProjectIndex:
    def __init__(self, outlines: Iterable[FileOutline], display: Callable[[str], str] = str) -> None:
        """``display`` names files in reasons."""
        self.files: dict[str, FileOutline] = {o.path: o for o in sorted(outlines, key=lambda o: o.path)}
        self.display = display
        # the configured entry points that name a function of some file
        self.entry_points_matched: frozenset[str] = frozenset().union(
            *(outline.entry_points_matched for outline in self.files.values())
        )
        self.modules: dict[str, str] = {}
        suffixes: dict[str, str | None] = {}
        for path, outline in self.files.items():
            self.modules.setdefault(outline.module, path)
            parts = outline.module.split(".")
            # `src/pkg/layers.py` is imported as `pkg.layers`; a lone stdlib name is not ours.
            for start in range(1, len(parts)):
                suffix = ".".join(parts[start:])
                if start == len(parts) - 1 and suffix in sys.stdlib_module_names:
                    continue
                suffixes[suffix] = path if suffix not in suffixes else None
        self._suffixes = {name: path for name, path in suffixes.items() if path is not None}
        # files the text test skipped that compiled code leads into: parse them and rebuild
        self.unparsed_needed: set[str] = set()
        # classes whose constructions decide what compiled code calls (it calls an object
        # they keep): files the text test skipped that name one must be parsed too
        self.constructions_needed: set[str] = set()
        self._module_reasons: dict[ClassKey, ModuleReason | None] = {}
        self._through_stars: dict[tuple[str, tuple[str, ...]], tuple[str, str, str] | None] = {}
        self._methods_by_name: dict[str, list[tuple[Node, str]]] | None = None
        self._classes_by_base_name: dict[str, list[ClassKey]] | None = None
        self._subclasses: dict[ClassKey, list[ClassKey]] = {}
        self._descendants: dict[ClassKey, list[ClassKey]] = {}
        self._optional_key_classes: dict[ClassKey, bool] = {}
        self._constructions: dict[tuple[ClassKey, str], list[tuple[str, ClassName, str]]] | None = None
        self._edges: dict[Node, list[tuple[Node, str]]] = {}

    # Names ----------------------------------------------------------------------

    def _module_path(self, name: str) -> str | None:
        return self.modules.get(name) or self._suffixes.get(name)

    def resolve(self, dotted: str, depth: int = 0) -> tuple[str, str, str] | None:
        """What a dotted name is: ("function", path, qualname), ("class", path, qualname)
        or ("method", path, "Class\\0attr")."""
        if depth > _MAX_ALIAS_DEPTH:
            return None
        parts = dotted.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            path = self._module_path(".".join(parts[:cut]))
            if path is not None:
                return self._member(path, parts[cut:], depth)
        return None

    def _member(self, path: str, rest: list[str], depth: int) -> tuple[str, str, str] | None:
        outline = self.files[path]
        if not outline.parsed:
            self.unparsed_needed.add(path)
            return None
        for cut in range(len(rest), 0, -1):
            qualname = ".".join(rest[:cut])
            if qualname in outline.classes:
                remaining = rest[cut:]
                if not remaining:
                    return ("class", path, qualname)
                if len(remaining) == 1:
                    return ("method", path, f"{qualname}\0{remaining[0]}")
                return None
        if len(rest) == 1 and rest[0] in outline.functions:
            return ("function", path, rest[0])
        alias = outline.imports.get(rest[0])
        if alias is not None:
            return self.resolve(".".join([alias, *rest[1:]]), depth + 1)
        if outline.stars and not rest[0].startswith("_") and depth < _MAX_ALIAS_DEPTH:
            key = (path, tuple(rest))
            if key not in self._through_stars:
                self._through_stars[key] = self._star_member(outline, rest, depth)
            return self._through_stars[key]
        return None

    def _star_member(self, outline: FileOutline, rest: list[str], depth: int) -> tuple[str, str, str] | None:
        """A public name that `from .models import *` brings in (transformers re-exports
        this way). Only modules linted themselves are looked into, and each name once:
        packages star-import dozens of modules each."""
        for star in outline.stars:
            path = self._module_path(star)
            found = self._member(path, rest, depth + 1) if path is not None and path != outline.path else None
            if found is not None:
                return found
        return None

    def class_key(self, path: str, name: str, local: bool) -> ClassKey | None:
        if local:
            return (path, name) if name in self.files[path].classes else None
        found = self.resolve(name)
        if found is not None and found[0] == "method":
            # `Config.from_dict(...)` made the object: a classmethod that returns its class
            cls, attr = found[2].split("\0")
            return (found[1], cls) if attr in self.files[found[1]].classes[cls].factories else None
        return (found[1], found[2]) if found is not None and found[0] == "class" else None

    # Classes --------------------------------------------------------------------

    def _bases(self, key: ClassKey) -> list[ClassKey]:
        path, qualname = key
        found = []
        for is_local, name in self.files[path].classes[qualname].bases:
            base = self.class_key(path, name, is_local)
            if base is not None and base != key:
                found.append(base)
        return found

    def module_reason(self, key: ClassKey, _seen: frozenset[ClassKey] = frozenset()) -> ModuleReason | None:
        """Why a class is an nn.Module, its bases in other files included."""
        if key in self._module_reasons:
            return self._module_reasons[key]
        if key in _seen:
            return None
        path, qualname = key
        own = self.files[path].classes[qualname].module_reason
        reason = own if own is not None and not own.guessed else None
        if reason is None:
            for base in self._bases(key):
                if self.module_reason(base, _seen | {key}) is not None:
                    if base[0] == path:
                        reason = ModuleReason(f"subclass of {base[1]}, an nn.Module")
                    else:
                        reason = ModuleReason(
                            f"subclass of {self._dotted(base)}, an nn.Module in {self.display(base[0])}"
                        )
                    break
        if reason is None and own is not None and not self._plain_bases_only(key, _seen):
            reason = own  # a base the project cannot see: the file's guess stands
        if not _seen:
            self._module_reasons[key] = reason
        return reason

    def _plain_bases_only(self, key: ClassKey, seen: frozenset[ClassKey]) -> bool:
        """Every base of the class, and of its bases, is a class of the project or of the
        standard library (`abc.ABC`), and none is an nn.Module: the file's guess that it is
        one was wrong. A base the project cannot see leaves the guess standing."""
        return self._all_bases_known(key, seen) and all(
            self.module_reason(base, seen | {key}) is None for base in self._bases(key)
        )

    def _all_bases_known(self, key: ClassKey, seen: frozenset[ClassKey]) -> bool:
        if key in seen:
            return True
        path, qualname = key
        outside = [
            name for is_local, name in self.files[path].classes[qualname].bases
            if is_local or name.partition(".")[0] not in sys.stdlib_module_names
        ]
        bases = self._bases(key)
        return len(bases) == len(outside) and all(self._all_bases_known(base, seen | {key}) for base in bases)

    def find_method(self, key: ClassKey, name: str, _seen: frozenset[ClassKey] = frozenset()) -> Node | None:
        if key in _seen:
            return None
        path, qualname = key
        method = self.files[path].classes[qualname].methods.get(name)
        if method is not None:
            return (path, method)
        for base in self._bases(key):
            found = self.find_method(base, name, _seen | {key})
            if found is not None:
                return found
        return None

    def given(self, holder: ClassKey, attr: str) -> list[tuple[ClassKey, str]]:
        """The classes the constructions of the project pass for the ``__init__`` argument
        that ``self.<attr>`` of ``holder`` keeps, each with where."""
        if self._constructions is None:
            self._constructions = self._find_constructions()
        param = dict(self.files[holder[0]].classes[holder[1]].held).get(attr)
        found = []
        for path, name, where in self._constructions.get((holder, param), ()) if param else ():
            given = self.class_key(path, name[1], name[0])
            if given is not None:
                found.append((given, where))
        return found

    def _find_constructions(self) -> dict[tuple[ClassKey, str], list[tuple[str, ClassName, str]]]:
        """(class whose __init__ runs, parameter) -> what is passed for it: the file that
        names the argument's class, the class as named there, and where."""
        found: dict[tuple[ClassKey, str], list[tuple[str, ClassName, str]]] = {}
        for path, outline in self.files.items():
            for construction in outline.constructions:
                built = self.class_key(path, construction.built[1], construction.built[0])
                if built is None:
                    continue
                init = self.find_method(built, "__init__")
                if init is None:
                    continue
                owner = (init[0], init[1].rpartition(".")[0])
                slot = construction.slot
                if isinstance(slot, int):
                    positional = self.files[owner[0]].classes[owner[1]].init_params
                    param = positional[slot] if slot < len(positional) else None
                else:
                    param = slot
                if param is not None:
                    where = f"given to {built[1]}() in {construction.site}"
                    found.setdefault((owner, param), []).append((path, construction.given, where))
        return found

    def _any_method(self, name: str) -> list[tuple[Node, str]]:
        """The methods named ``name`` of the project's classes, when at most
        ``MAX_CLASSES_BY_METHOD`` classes define one: `solver.integrate(t)` runs one of them."""
        if self._methods_by_name is None:
            self._methods_by_name = {}
            for path, outline in self.files.items():
                for qualname, info in outline.classes.items():
                    for method, function in info.methods.items():
                        self._methods_by_name.setdefault(method, []).append(((path, function), qualname))
            self._any_method_edges: dict[str, list[tuple[Node, str]]] = {}
        edges = self._any_method_edges.get(name)
        if edges is None:
            found = self._methods_by_name.get(name, [])
            edges = self._any_method_edges[name] = (
                [] if len(found) > MAX_CLASSES_BY_METHOD
                else [(node, f"{qualname} (the project's only classes with .{name})") for node, qualname in found]
            )
        return edges

    def _subclasses_of(self, key: ClassKey) -> list[ClassKey]:
        """The project's classes that derive from ``key``, directly or not (asked for each
        `self.method()` of the class's methods: kept)."""
        if key not in self._descendants:
            self._descendants[key] = descendants(key, self._direct_subclasses)
        return self._descendants[key]

    def _direct_subclasses(self, key: ClassKey) -> list[ClassKey]:
        if key not in self._subclasses:
            if self._classes_by_base_name is None:
                # Only classes whose base is spelled with the same last name can derive from
                # it: their bases alone are resolved, not every base of the project.
                self._classes_by_base_name = {}
                for path, outline in self.files.items():
                    for qualname, info in outline.classes.items():
                        for _, name in info.bases:
                            tail = name.rpartition(".")[2]
                            self._classes_by_base_name.setdefault(tail, []).append((path, qualname))
            tail = key[1].rpartition(".")[2]
            candidates = self._classes_by_base_name.get(tail, ())
            self._subclasses[key] = [c for c in dict.fromkeys(candidates) if key in self._bases(c)]
        return self._subclasses[key]

    def _overrides(self, path: str, ref: Ref) -> list[tuple[Node, str]]:
        """What `self.attr(...)` in a method of the class runs when `self` is a subclass's."""
        key = self.class_key(path, ref.name, ref.local)
        found = []
        for subclass in self._subclasses_of(key) if key is not None else ():
            method = self.files[subclass[0]].classes[subclass[1]].methods.get(ref.attr)
            if method is not None:
                found.append(((subclass[0], method), overrides_note(ref.attr, subclass[1])))
        return found

    def _held(self, path: str, ref: Ref) -> list[tuple[Node, str]]:
        """What a HELD Ref may run, each with a note on where the object's class was seen."""
        if ref.name not in self.files[path].classes:
            return []
        self.constructions_needed.add(ref.name.rpartition(".")[2])
        attr, _, method = ref.attr.partition(".")
        found = []
        for cls, where in self.given((path, ref.name), attr):
            node = self.find_method(cls, method) if method else self._instance_call(cls)
            if node is not None:
                found.append((node, held_note(attr, cls[1], where)))
        return found

    def _instance_call(self, key: ClassKey) -> Node | None:
        return self.find_method(key, "forward") or self.find_method(key, "__call__")

    def _construct(self, key: ClassKey) -> Node | None:
        return self.find_method(key, "__init__")

    # Calls ----------------------------------------------------------------------

    def _ref(self, path: str, ref: Ref) -> Node | None:
        if ref.kind in (NAME, COMPILED):
            found = self.resolve(ref.name)
            if found is None:
                return None
            kind, target_path, qualname = found
            if kind == "function":
                return (target_path, qualname)
            if kind == "method":
                cls, attr = qualname.split("\0")
                return self.find_method((target_path, cls), attr)
            named = (target_path, qualname)  # a class
            return self._instance_call(named) if ref.kind == COMPILED else self._construct(named)
        key = self.class_key(path, ref.name, ref.local)
        if key is None:
            return None
        if ref.kind == METHOD:
            return self.find_method(key, ref.attr)
        if ref.kind == INSTANCE:
            if ref.attr and self.find_method(key, ref.attr) is not None:
                return None  # `x.compile()` where the class has a compile() of its own
            return self._instance_call(key)
        if ref.kind == CONSTRUCT:
            return self._construct(key)
        if ref.kind == SUPER:
            for base in self._bases(key):
                inherited = self.find_method(base, ref.attr)
                if inherited is not None:
                    return inherited
        return None

    def _target(self, path: str, target: Target) -> Node | None:
        if isinstance(target, str):
            return (path, target)
        return self._ref(path, target)

    def callees(self, path: str, target: Target) -> list[tuple[Node, str]]:
        """What an edge of ``path`` runs, each with a note on where a held object's class was
        seen ("" for a plain call)."""
        if isinstance(target, Ref) and target.kind == HELD:
            return self._held(path, target)
        if isinstance(target, Ref) and target.kind == ANY_METHOD:
            return self._any_method(target.attr)
        if isinstance(target, Ref) and target.kind == OVERRIDES:
            return self._overrides(path, target)
        node = self._target(path, target)
        return [(node, "")] if node is not None else []

    def edges(self, node: Node) -> list[tuple[Node, str]]:
        found = self._edges.get(node)
        if found is None:
            path, qualname = node
            found = [
                (callee, through(how, note))
                for target, how in self.files[path].functions.get(qualname, ())
                for callee, note in self.callees(path, target)
            ]
            self._edges[node] = found
        return found

    # Entry points ---------------------------------------------------------------

    def _entry(self, path: str, entry: OutlineEntry) -> tuple[Node, str] | None:
        """An entry as the project sees it, or None (a presumed forward of a non-module)."""
        reason = entry.reason
        if entry.module_class is not None:
            module_reason = self.module_reason((path, entry.module_class))
            if module_reason is None:
                return None
            reason = f"entry: forward of nn.Module subclass {entry.module_class} ({module_reason})"
        assert reason is not None  # only a presumed forward comes without one
        node = self._target(path, entry.target)
        return (node, reason) if node is not None else None

    def _dotted(self, node: Node) -> str:
        module = self.files[node[0]].module
        return f"{module}.{node[1]}" if module else node[1]

    # Solving --------------------------------------------------------------------

    def solve(self) -> None:
        """Compiled functions and fullgraph-only functions across the project."""
        entries: list[tuple[Node, str, bool, bool]] = []
        for path, outline in self.files.items():
            for entry in outline.entries:
                found = self._entry(path, entry)
                if found is not None:
                    entries.append((*found, entry.explicit, entry.fullgraph))
        blocked = {(path, name) for path, outline in self.files.items() for name in outline.disabled}
        passes_through = {(path, name) for path, outline in self.files.items() for name in outline.passes_through}
        self.blocked = blocked
        # Where frames start: named by a compile site or the configuration, not presumed.
        self.entered = {node for node, _, explicit, _ in entries if explicit}
        self.compiled = reach(
            ((node, reason) for node, reason, _, _ in entries), self.edges, blocked, self._reason, passes_through
        )
        self.fullgraph = fullgraph_only([(node, explicit, fg) for node, _, explicit, fg in entries], self.edges, blocked)

    def _reason(self, how: str, source: Node, target: Node) -> str:
        reason = f"{how} {self._dotted(source)}"
        if source[0] != target[0]:
            reason += f", reached from other file {self.display(source[0])}"
        return reason

    def held_tensors(self, path: str) -> dict[tuple[str, str], frozenset[str]]:
        """For each `self.<attribute>` of a class of ``path`` that keeps an `__init__`
        argument: the tensor members of the classes the project's constructions give it."""
        found = {}
        for qualname, info in self.files[path].classes.items():
            for attr, _ in info.held:
                members = frozenset().union(
                    *(self.tensor_members(key) for key, _ in self.given((path, qualname), attr))
                )
                if members:
                    found[(qualname, attr)] = members
        return found

    def tensor_members(self, key: ClassKey, _seen: frozenset[ClassKey] = frozenset()) -> frozenset[str]:
        if key in _seen:
            return frozenset()
        own = self.files[key[0]].classes[key[1]].tensor_members
        return own.union(*(self.tensor_members(base, _seen | {key}) for base in self._bases(key)))

    def optional_keys(self, key: ClassKey, _seen: frozenset[ClassKey] = frozenset()) -> bool:
        """Whether a class is a TypedDict with an optional key, through its bases in any file."""
        known = self._optional_key_classes.get(key)
        if known is not None:
            return known
        if key in _seen:
            return False
        found = self.files[key[0]].classes[key[1]].optional_keys or any(
            self.optional_keys(base, _seen | {key}) for base in self._bases(key)
        )
        self._optional_key_classes[key] = found
        return found
