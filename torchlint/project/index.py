"""The project index: compiled regions across the linted files, from their outlines.

Each file is first linted on its own. The index then joins the outlines: an import names a
function or class of another linted file, a base class lives in another file, a module is
compiled in a script, a script builds a module around an object of another file's class.
It finds, for each file, the functions that are compiled only because of another file, and
the engine lints just those files again with that knowledge (``ProjectFacts``). The work
here is graph search over small records, no parsing.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from torchlint.analysis.dynamo_config import merge
from torchlint.analysis.kind_vocabulary import Kind
from torchlint.analysis.outline import ClassName, FileOutline, OutlineEntry, Target
from torchlint.analysis.regions import (
    ANY_METHOD,
    COMPILED,
    GUESSED_MODULE,
    CONSTRUCT,
    HELD,
    INSTANCE,
    METHOD,
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


@dataclass(frozen=True)
class ProjectFacts:
    """What the rest of the project tells the lint of one file."""

    # qualified name of a function here -> why another file makes it compiled
    compiled_elsewhere: dict[str, str] = field(default_factory=dict)
    # the compiled functions here that only fullgraph=True sites reach; None until the
    # index has run (the file's own view then decides)
    fullgraph: frozenset[str] | None = None
    # classes here that are nn.Modules through a base in another file -> why; "" for a class
    # this file alone takes for a module whose bases the project knows are none
    module_classes: dict[str, str] = field(default_factory=dict)
    # `torch._dynamo.config.<name> = <constant>` across all linted files
    dynamo_config: dict[str, bool | int | str] = field(default_factory=dict)
    # module-level imports here, as the file spells them (`lookup`, `cache.lookup`), that
    # name a disabled function of another linted file
    disabled_imports: frozenset[str] = frozenset()
    # qualified name of a function here -> {parameter: kind} that compiled calls in other
    # files pass (a tensor given to `timestep: int`)
    parameter_kinds: dict[str, dict[str, Kind]] = field(default_factory=dict)
    # (class here, attribute) -> the tensor members of the objects other files give the
    # `__init__` argument that `self.<attribute>` keeps
    held_tensors: dict[tuple[str, str], frozenset[str]] = field(default_factory=dict)
    # module-level imports here, as the file spells them, that name a TypedDict class of
    # another file with an optional key (calling one breaks the graph)
    optional_key_dicts: frozenset[str] = frozenset()
    # module-level imports here, as the file spells them, that name a function of another
    # file that returns a tensor and that compiled functions here call
    tensor_returns: frozenset[str] = frozenset()
    # module-level imports here, as the file spells them, that `__init__` methods call and
    # that break the graph in another file, themselves or in what they call (a class: its
    # `__init__`)
    breaking_calls: frozenset[str] = frozenset()
    # methods that compiled functions here call on objects they build, by their keys (see
    # `built_objects`), that break the graph: in any file, themselves or in what they call
    breaking_built_calls: frozenset[str] = frozenset()


class ProjectIndex:
    def __init__(
        self,
        outlines: Iterable[FileOutline],
        display: Callable[[str], str] = str,
        dynamo_config: dict[str, bool | int | str] | None = None,
    ) -> None:
        """``display`` names files in reasons; ``dynamo_config`` is the project's, when
        already collected (else merged from the outlines)."""
        self.files: dict[str, FileOutline] = {o.path: o for o in sorted(outlines, key=lambda o: o.path)}
        self.display = display
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
        if dynamo_config is None:
            dynamo_config = merge(o.dynamo_config for o in self.files.values())
        self.dynamo_config = dynamo_config
        # files the text test skipped that compiled code leads into: parse them and rebuild
        self.unparsed_needed: set[str] = set()
        # classes whose constructions decide what compiled code calls (it calls an object
        # they keep): files the text test skipped that name one must be parsed too
        self.constructions_needed: set[str] = set()
        self._module_reasons: dict[ClassKey, str | None] = {}
        self._through_stars: dict[tuple[str, tuple[str, ...]], tuple[str, str, str] | None] = {}
        self._methods_by_name: dict[str, list[tuple[Node, str]]] | None = None
        self._classes_by_base_name: dict[str, list[ClassKey]] | None = None
        self._subclasses: dict[ClassKey, list[ClassKey]] = {}
        self._descendants: dict[ClassKey, list[ClassKey]] = {}
        self._optional_key_classes: dict[ClassKey, bool] = {}
        self._constructions: dict[tuple[ClassKey, str], list[tuple[str, ClassName, str]]] | None = None
        self._edges: dict[Node, list[tuple[Node, str]]] = {}
        self._passed: dict[Node, dict[str, Kind]] | None = None
        self._facts: dict[tuple[str, bool], ProjectFacts | None] = {}
        self._passed_in: dict[str, dict[str, dict[str, Kind]]] | None = None
        # functions known to break the graph, themselves or in what they call, or not to
        self._breaks: dict[Node, bool] = {}
        self._solved = False

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

    def _class(self, path: str, name: str, local: bool) -> ClassKey | None:
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
            base = self._class(path, name, is_local)
            if base is not None and base != key:
                found.append(base)
        return found

    def module_reason(self, key: ClassKey, _seen: frozenset = frozenset()) -> str | None:
        """Why a class is an nn.Module, its bases in other files included."""
        if key in self._module_reasons:
            return self._module_reasons[key]
        if key in _seen:
            return None
        path, qualname = key
        reason = self.files[path].classes[qualname].module_reason
        if reason is not None and reason.startswith(GUESSED_MODULE) and self._plain_bases_only(key, _seen):
            reason = None
        if reason is None:
            for base in self._bases(key):
                if self.module_reason(base, _seen | {key}) is not None:
                    where = "" if base[0] == path else f" in {self.display(base[0])}"
                    reason = f"subclass of {self._dotted(base)}, an nn.Module{where}"
                    break
        if not _seen:
            self._module_reasons[key] = reason
        return reason

    def _plain_bases_only(self, key: ClassKey, seen: frozenset) -> bool:
        """Every base of the class is a class of the project or of the standard library
        (`abc.ABC`), and none is an nn.Module: the file's guess that it is one was wrong."""
        path, qualname = key
        outside = [
            name for is_local, name in self.files[path].classes[qualname].bases
            if is_local or name.partition(".")[0] not in sys.stdlib_module_names
        ]
        bases = self._bases(key)
        return len(bases) == len(outside) and all(self.module_reason(base, seen | {key}) is None for base in bases)

    def find_method(self, key: ClassKey, name: str, _seen: frozenset = frozenset()) -> Node | None:
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
            given = self._class(path, name[1], name[0])
            if given is not None:
                found.append((given, where))
        return found

    def _find_constructions(self) -> dict[tuple[ClassKey, str], list[tuple[str, ClassName, str]]]:
        """(class whose __init__ runs, parameter) -> what is passed for it: the file that
        names the argument's class, the class as named there, and where."""
        found: dict[tuple[ClassKey, str], list[tuple[str, ClassName, str]]] = {}
        for path, outline in self.files.items():
            for construction in outline.constructions:
                built = self._class(path, construction.built[1], construction.built[0])
                init = self.find_method(built, "__init__") if built is not None else None
                if init is None:
                    continue
                owner = (init[0], init[1].rpartition(".")[0])
                param = construction.slot
                if isinstance(param, int):
                    positional = self.files[owner[0]].classes[owner[1]].init_params
                    param = positional[param] if param < len(positional) else None
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
        found = self._methods_by_name.get(name, [])
        if len(found) > MAX_CLASSES_BY_METHOD:
            return []
        return [(node, f"{qualname} (the project's only classes with .{name})") for node, qualname in found]

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
        key = self._class(path, ref.name, ref.local)
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
            key = (target_path, qualname)
            return self._instance_call(key) if ref.kind == COMPILED else self._construct(key)
        key = self._class(path, ref.name, ref.local)
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
                found = self.find_method(base, ref.attr)
                if found is not None:
                    return found
        return None

    def _target(self, path: str, target: Target) -> Node | None:
        if isinstance(target, str):
            return (path, target)
        return self._ref(path, target)

    def _callees(self, path: str, target: Target) -> list[tuple[Node, str]]:
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
                for callee, note in self._callees(path, target)
            ]
            self._edges[node] = found
        return found

    def _local_edges(self, node: Node) -> list[tuple[Node, str]]:
        path, qualname = node
        return [((path, target), how) for target, how in self.files[path].functions.get(qualname, ()) if isinstance(target, str)]

    # Entry points ---------------------------------------------------------------

    def _entry(self, path: str, entry: OutlineEntry) -> tuple[Node, str] | None:
        """An entry as the project sees it, or None (a presumed forward of a non-module)."""
        reason = entry.reason
        if entry.module_class is not None:
            module_reason = self.module_reason((path, entry.module_class))
            if module_reason is None:
                return None
            reason = reason or f"entry: forward of nn.Module subclass {entry.module_class} ({module_reason})"
        node = self._target(path, entry.target)
        return (node, reason) if node is not None else None

    def _dotted(self, node: Node) -> str:
        module = self.files[node[0]].module
        return f"{module}.{node[1]}" if module else node[1]

    # Solving --------------------------------------------------------------------

    def solve(self) -> None:
        """Compiled functions and fullgraph-only functions across the project."""
        entries: list[tuple[Node, str, bool, bool]] = []
        self._local_entries: dict[str, list[tuple[Node, str]]] = {}
        for path, outline in self.files.items():
            local = self._local_entries.setdefault(path, [])
            for entry in outline.entries:
                found = self._entry(path, entry)
                if found is None:
                    continue
                entries.append((*found, entry.explicit, entry.fullgraph))
                if isinstance(entry.target, str):
                    local.append(found)
        blocked = {(path, name) for path, outline in self.files.items() for name in outline.disabled}
        self.blocked = blocked
        self.compiled = reach(((node, reason) for node, reason, _, _ in entries), self.edges, blocked, self._reason)
        self.fullgraph = fullgraph_only([(node, explicit, fg) for node, _, explicit, fg in entries], self.edges, blocked)
        # Grouped by file once: facts are asked for every file of a large project.
        self._compiled_in = _by_file(self.compiled)
        self._fullgraph_in = _by_file(dict.fromkeys(self.fullgraph))
        self._solved = True

    def _reason(self, how: str, source: Node, target: Node) -> str:
        reason = f"{how} {self._dotted(source)}"
        if source[0] != target[0]:
            reason += f", reached from other file {self.display(source[0])}"
        return reason

    def facts_for(self, path: str, described: bool = False) -> ProjectFacts | None:
        """What linting ``path`` again needs to know, or None when its own lint was right.

        ``described``: for `--show-regions`, which tells why each function is compiled. A
        file's own view may compile the same functions as the project for another reason
        (`Net(Mixin)` guessed a module for its `forward` where the project knows `Mixin`
        is one); the lint needs nothing more, a description does."""
        key = (path, described)
        if key not in self._facts:
            self._facts[key] = self._find_facts(path, described)
        return self._facts[key]

    def _find_facts(self, path: str, described: bool) -> ProjectFacts | None:
        if not self._solved:
            self.solve()
        outline = self.files[path]
        compiled = self._compiled_in.get(path, {})
        fullgraph = frozenset(self._fullgraph_in.get(path, ()))
        if not outline.parsed and not compiled:
            return None
        disabled_imports = self.disabled_imports(path) if compiled else frozenset()
        if self._passed_in is None:
            self._passed_in = _by_file(self.passed())
        parameter_kinds = self._passed_in.get(path, {})
        held_tensors = self.held_tensors(path)
        called = self._called_names(path, compiled)
        optional_key_dicts = self.optional_key_dicts(path, called)
        tensor_returns = self.tensor_returns(path, called)
        breaking_calls = self.breaking_calls(path, compiled)
        breaking_built_calls = self.breaking_built_calls(path, compiled)
        unchanged = compiled.keys() == outline.compiled and fullgraph == outline.fullgraph
        if described:
            unchanged = unchanged and not self._module_classes(path)
        told = (
            disabled_imports or parameter_kinds or held_tensors or optional_key_dicts or tensor_returns or breaking_calls
            or breaking_built_calls
        )
        if outline.parsed and unchanged and not told:
            return None
        # What the file finds on its own once told which classes are modules; the rest is
        # compiled because of other files.
        found_here = reach(self._local_entries.get(path, ()), self._local_edges, self.blocked, lambda *_: "")
        elsewhere = {qualname: reason for qualname, reason in compiled.items() if (path, qualname) not in found_here}
        return ProjectFacts(
            compiled_elsewhere=elsewhere,
            fullgraph=fullgraph,
            module_classes=self._module_classes(path),
            dynamo_config=self.dynamo_config,
            disabled_imports=disabled_imports,
            parameter_kinds=parameter_kinds,
            held_tensors=held_tensors,
            optional_key_dicts=optional_key_dicts,
            tensor_returns=tensor_returns,
            breaking_calls=breaking_calls,
            breaking_built_calls=breaking_built_calls,
        )

    # Kinds across files -------------------------------------------------------------

    def passed(self) -> dict[Node, dict[str, Kind]]:
        """What the compiled calls of each file pass to the functions their file alone cannot
        resolve (in other files, or on objects held): a tensor given to a parameter not
        annotated as one."""
        if self._passed is None:
            self._passed = {}
            for path, outline in self.files.items():
                for call in outline.passed:
                    for node, _ in self._callees(path, call.target):
                        parameters = self.files[node[0]].parameters.get(node[1])
                        for slot, kind in call.kinds if parameters is not None else ():
                            name = parameters.named(slot)
                            if name in parameters.open:
                                self._passed.setdefault(node, {})[name] = kind
        return self._passed

    def held_tensors(self, path: str) -> dict[tuple[str, str], frozenset[str]]:
        """For each `self.<attribute>` of a class of ``path`` that keeps an `__init__`
        argument: the tensor members of the classes the project's constructions give it."""
        found = {}
        for qualname, info in self.files[path].classes.items():
            for attr, _ in info.held:
                members = frozenset().union(
                    *(self._tensor_members(key) for key, _ in self.given((path, qualname), attr))
                )
                if members:
                    found[(qualname, attr)] = members
        return found

    def _tensor_members(self, key: ClassKey, _seen: frozenset = frozenset()) -> frozenset[str]:
        if key in _seen:
            return frozenset()
        own = self.files[key[0]].classes[key[1]].tensor_members
        return own.union(*(self._tensor_members(base, _seen | {key}) for base in self._bases(key)))

    def disabled_imports(self, path: str) -> frozenset[str]:
        """The module-level imports of ``path`` that name a disabled function of another file:
        `lookup` for `from .cache import lookup`, `cache.lookup` for `from . import cache`."""
        return self._imports_naming(
            path, "function", self.blocked.__contains__, lambda module: self.files[module].disabled
        )

    def optional_key_dicts(self, path: str, called: set[str]) -> frozenset[str]:
        """The module-level imports of ``path`` that name a TypedDict class of another file
        with an optional key and that its compiled functions call (``called``): `Message` for
        `from .runtime import Message`, `runtime.Message` for `from . import runtime`. Only
        those called: a class imported for annotations (`Unpack[Kwargs]`) tells the file nothing,
        and a file told something is linted again."""
        if not called:
            return frozenset()
        return self._imports_naming(
            path,
            "class",
            self._optional_keys,
            lambda module: [name for name in self.files[module].classes if self._optional_keys((module, name))],
            called,
        )

    def tensor_returns(self, path: str, called: set[str]) -> frozenset[str]:
        """The module-level imports of ``path`` that name a function of another file that
        returns a tensor and that its compiled functions call (``called``): `rms` for
        `from .norms import rms`, `norms.rms` for `from . import norms`; only those whose
        results the file's decisions read, as the others change no finding."""
        if not called:
            return frozenset()
        found = self._imports_naming(
            path,
            "function",
            lambda node: node[1] in self.files[node[0]].tensor_returns,
            lambda module: self.files[module].tensor_returns,
            called,
        )
        return found & self.files[path].decision_callees

    def breaking_calls(self, path: str, compiled: Iterable[str]) -> frozenset[str]:
        """The module-level imports of ``path`` that its ``compiled`` `__init__` methods call
        and that break the graph in another file: `mel_frequencies` for
        `from .core import mel_frequencies`, or a class whose `__init__` breaks."""
        init_callees = self.files[path].init_callees
        called = set().union(*(init_callees.get(qualname, ()) for qualname in compiled))
        if not called:
            return frozenset()
        def class_breaks(key: ClassKey) -> bool:
            init = self._construct(key)
            return init is not None and self.breaks(init)

        def breaking_members(module: str) -> list[str]:
            outline = self.files[module]
            functions = [name for name in outline.functions if "." not in name and self.breaks((module, name))]
            return functions + [name for name in outline.classes if "." not in name and class_breaks((module, name))]

        functions = self._imports_naming(path, "function", self.breaks, breaking_members, called)
        return functions | self._imports_naming(path, "class", class_breaks, lambda module: [], called)

    def breaking_built_calls(self, path: str, compiled: Iterable[str]) -> frozenset[str]:
        """The keys of the methods that ``compiled`` functions of ``path`` call on objects they
        build and that break the graph."""
        found = set()
        for function, key, target in self.files[path].built_calls:
            if key not in found and function in compiled:
                if any(self.breaks(node) for node, _ in self._callees(path, target)):
                    found.add(key)
        return frozenset(found)

    def breaks(self, node: Node) -> bool:
        """Whether calling ``node`` meets a graph break: one of its own, or one in what it
        calls or passes a function to, in any file."""
        known = self._breaks.get(node)
        if known is not None:
            return known
        seen = {node}
        pending = [node]
        while pending:
            current = pending.pop()
            if self._breaks.get(current) or current[1] in self.files[current[0]].breaking:
                self._breaks[node] = True
                return True
            for callee, how in self.edges(current):
                if callee not in seen and not how.startswith("defined") and self._breaks.get(callee) is not False:
                    seen.add(callee)
                    pending.append(callee)
        # Nothing reached breaks, so none of what was reached does.
        for reached in seen:
            self._breaks[reached] = False
        return False

    def _called_names(self, path: str, compiled: Iterable[str]) -> set[str]:
        """The dotted names, absolute, that the ``compiled`` functions of ``path`` call."""
        outline = self.files[path]
        return {
            target.name
            for qualname in compiled
            for target, _ in outline.functions.get(qualname, ())
            if isinstance(target, Ref) and target.kind == NAME
        }

    def _imports_naming(
        self,
        path: str,
        kind: str,
        wanted: Callable[[Node], bool],
        members: Callable[[str], Iterable[str]],
        called: set[str] | None = None,
    ) -> frozenset[str]:
        """The module-level imports of ``path``, as it spells them, that name a ``kind``
        ("function" or "class") of another file that is ``wanted``, or reach one of the
        ``members`` of an imported module; only the dotted names in ``called``, when given."""
        found = set()
        for local, target in self.files[path].imports.items():
            if called is not None and target not in called and not any(n.startswith(f"{target}.") for n in called):
                continue
            resolved = self.resolve(target)
            if resolved is not None and resolved[0] == kind and resolved[1] != path:
                if wanted((resolved[1], resolved[2])):
                    found.add(local)
                continue
            module = self._module_path(target)
            if module is not None and module != path:
                found.update(
                    f"{local}.{name}"
                    for name in members(module)
                    if "." not in name and (called is None or f"{target}.{name}" in called)
                )
        return frozenset(found)

    def _optional_keys(self, key: ClassKey, _seen: frozenset = frozenset()) -> bool:
        """Whether a class is a TypedDict with an optional key, through its bases in any file."""
        known = self._optional_key_classes.get(key)
        if known is not None:
            return known
        if key in _seen:
            return False
        found = self.files[key[0]].classes[key[1]].optional_keys or any(
            self._optional_keys(base, _seen | {key}) for base in self._bases(key)
        )
        self._optional_key_classes[key] = found
        return found

    def _module_classes(self, path: str) -> dict[str, str]:
        """The classes of the file that are nn.Modules through another file, with why, and
        with "" those the file alone took for modules wrongly."""
        found = {}
        for qualname, info in self.files[path].classes.items():
            reason = self.module_reason((path, qualname))
            if info.module_reason is None and reason is not None:
                found[qualname] = reason
            elif info.module_reason is not None and reason is None:
                found[qualname] = ""
        return found

    def plain_facts(self) -> ProjectFacts:
        """For a file the rest of the project changes nothing in: the shared config only."""
        return ProjectFacts(dynamo_config=self.dynamo_config)


def _by_file(found: dict[Node, object]) -> dict[str, dict[str, object]]:
    """path -> {qualified name: value} of a table keyed by function."""
    grouped: dict[str, dict[str, object]] = {}
    for (where, qualname), value in found.items():
        grouped.setdefault(where, {})[qualname] = value
    return grouped


@dataclass(frozen=True)
class SolvedProject:
    """A solved index as plain data: what a run asks of it, small enough to cache."""

    # path -> what linting it again needs to know, None where its own lint was right
    facts: dict[str, ProjectFacts | None]
    # files the text test skipped that compiled code leads into
    unparsed_needed: frozenset[str]
    # names of classes whose constructions decide what compiled code calls
    constructions_needed: frozenset[str]
    # every compiled function of the project
    compiled: frozenset[Node]

    @classmethod
    def of(cls, index: ProjectIndex, described: bool = False) -> SolvedProject:
        """``described``: the facts `--show-regions` describes the files with (see
        `ProjectIndex.facts_for`)."""
        index.solve()
        # Read before the facts are worked out, which resolve more names.
        unparsed, constructions = frozenset(index.unparsed_needed), frozenset(index.constructions_needed)
        facts = {path: index.facts_for(path, described) for path in index.files}
        return cls(facts, unparsed, constructions, frozenset(index.compiled))
