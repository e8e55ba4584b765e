"""What each file's analysis takes from the whole project before any file is analysed.

Read from every file's text first, cheaply: the `torch._dynamo.config` settings it makes,
and the names under which a call may reach a disabled function or build a TypedDict with
optional keys. A call of another file's code becomes a finding that waits for the project
(TL504, TL523) only where its name is one of those: the solve still decides whether the
function is disabled or the class has optional keys, but most calls of a project are plainly
neither, and need not wait.

The names over-approximate: a function decorated with anything whose name ends in
`disable`, or bound to such a call, with the class it is defined in (a class whose
`__init__` or `forward` is disabled is reached by calling the class); a class whose bases
name `TypedDict`, or such a class, on its header line; and every alias (`import f as g`)
of those names, however many times renamed.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from torchlint.analysis.dynamo_config import ConfigValue, dynamo_config_of, merge

# `class Name(Base, other.Base, total=False):` on one line
_CLASS_HEADER = re.compile(r"^[ \t]*class[ \t]+(\w+)[ \t]*\(([^)]*)\)", re.M)
# `name as alias`: imports, and the `with`/`except` forms, which only add names
_ALIAS = re.compile(r"\b([A-Za-z_]\w*)[ \t]+as[ \t]+([A-Za-z_]\w*)")
# `from .module import a, b` (names in parentheses may span lines) and `import a.b, c as d`
_FROM_IMPORT = re.compile(r"^[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]*)", re.M)
_IMPORT = re.compile(r"^[ \t]*import[ \t]+([^\n#;]+)", re.M)


@dataclass(frozen=True)
class FileHints:
    """What one file's text tells the project before any file is analysed."""

    dynamo_config: dict[str, ConfigValue] = field(default_factory=dict)
    # names the file binds to a disabled function (and the classes that hold one)
    disabled: frozenset[str] = frozenset()
    # each class header: its name and the last names of its bases
    classes: tuple[tuple[str, tuple[str, ...]], ...] = ()
    aliases: frozenset[tuple[str, str]] = frozenset()
    # the modules a file the text test skips may import, as written (`.sibling`,
    # `pkg.module`, `pkg.module.name`): where the solve finds it needs such a file, the
    # skipped files it imports are parsed with it, not one solve later each. Only skipped
    # files need them: every other file is parsed and outlined anyway.
    imports: frozenset[str] = frozenset()


@dataclass(frozen=True)
class ProjectHints:
    """The project's `torch._dynamo.config`, and the names a call may reach a disabled
    function or an optional-key TypedDict by."""

    dynamo_config: dict[str, ConfigValue] = field(default_factory=dict)
    disabled_names: frozenset[str] = frozenset()
    typed_dict_names: frozenset[str] = frozenset()


def file_hints(text: str) -> FileHints:
    return FileHints(
        dynamo_config_of(text),
        _disabled_names(text) if "disable" in text else frozenset(),
        tuple((match.group(1), _base_names(match.group(2))) for match in _CLASS_HEADER.finditer(text)),
        frozenset(
            (match.group(1), match.group(2)) for match in _ALIAS.finditer(text) if match.group(1) != match.group(2)
        )
        if " as " in text
        else frozenset(),
        _imports(text) if "import" in text and not may_be_parsed(text) else frozenset(),
    )


def may_be_parsed(text: str) -> bool:
    """The text test: a file that never mentions torch or `forward` holds nothing to trace
    (unless entry points are configured, or compiled code elsewhere calls into it)."""
    return "torch" in text or "forward" in text


def _imports(text: str) -> frozenset[str]:
    found = set()
    for match in _FROM_IMPORT.finditer(text):
        module = match.group(1)
        found.add(module)
        for name in _imported_names(match.group(2).strip("() \t")):
            found.add(module + name if module.endswith(".") else f"{module}.{name}")
    for match in _IMPORT.finditer(text):
        found.update(_imported_names(match.group(1)))
    return frozenset(found)


def _imported_names(listed: str) -> list[str]:
    """`a.b as c, d` -> [`a.b`, `d`]."""
    return [part.split()[0] for part in listed.replace("\\", " ").split(",") if part.split()]


def project_hints(files: Iterable[FileHints]) -> ProjectHints:
    """The files' hints as one, in the order given (by path: a later file's config wins)."""
    files = list(files)
    aliases = [pair for hints in files for pair in hints.aliases]
    classes = [header for hints in files for header in hints.classes]
    typed = _closed({"TypedDict"}, lambda names: {name for name, bases in classes if names.intersection(bases)})
    disabled = {name for hints in files for name in hints.disabled}
    return ProjectHints(
        merge(hints.dynamo_config for hints in files),
        frozenset(_aliased(disabled, aliases)),
        frozenset(_aliased(typed - {"TypedDict"}, aliases)),
    )


def _closed(names: set[str], step: Callable[[set[str]], set[str]]) -> set[str]:
    """``names`` and all that ``step`` adds to them, until it adds nothing."""
    while True:
        more = step(names) - names
        if not more:
            return names
        names = names | more


def _aliased(names: set[str], aliases: list[tuple[str, str]]) -> set[str]:
    return _closed(names, lambda known: {alias for name, alias in aliases if name in known})


def _base_names(bases: str) -> tuple[str, ...]:
    """The last names of the bases of a class header (`typing.TypedDict` -> `TypedDict`);
    keywords (`total=False`) left out."""
    found = []
    for part in bases.split(","):
        part = part.strip()
        if part and "=" not in part:
            found.append(part.rpartition(".")[2].split("[")[0].strip())
    return tuple(found)


def _disabled_names(text: str) -> frozenset[str]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()
    found: set[str] = set()
    classes: list[str] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if any(_names_disable(decorator) for decorator in node.decorator_list):
                found.add(node.name)
                found.update(classes)
        elif isinstance(node, ast.Assign) and _names_disable(node.value):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found.add(target.id)
                elif isinstance(target, ast.Attribute):
                    found.add(target.attr)
        if isinstance(node, ast.ClassDef):
            classes.append(node.name)
            for child in ast.iter_child_nodes(node):
                visit(child)
            classes.pop()
            return
        for child in ast.iter_child_nodes(node):
            visit(child)

    try:
        visit(tree)
    except RecursionError:
        return frozenset()
    return frozenset(found)


def _names_disable(node: ast.AST) -> bool:
    """`disable`, `torch.compiler.disable`, `torch._dynamo.disable(recursive=False)`,
    `torch._disable_dynamo`: a name or call whose last name says disable."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return "disable" in node.attr
    return isinstance(node, ast.Name) and "disable" in node.id
