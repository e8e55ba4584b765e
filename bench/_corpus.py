"""The measured corpus: which libraries, at which pins, in which half, and what their targets compile.

`corpus.toml` names the libraries; `targets/<library>_targets.py` declares each library's verify targets
(`torchlint_targets()`) and, in a `COMPILES` literal, the functions a user compiling each target
would name as entry points. Both are read without importing torch or the libraries.
"""

from __future__ import annotations

import ast
import tomllib
from dataclasses import dataclass
from pathlib import Path

BENCH = Path(__file__).resolve().parent
MANIFEST = BENCH / "corpus.toml"
TARGETS = BENCH / "targets"
HALVES = ("development", "held-out")


class CorpusError(Exception):
    """The manifest or a target file is inconsistent; the message says where."""


@dataclass(frozen=True)
class Library:
    name: str
    requirement: str
    # Top-level import packages whose code is measured.
    packages: tuple[str, ...]
    dependencies: tuple[str, ...]
    domain: str
    style: str
    half: str
    targets_file: Path

    @property
    def version(self) -> str:
        return self.requirement.partition("==")[2]


def load_corpus(path: Path = MANIFEST) -> list[Library]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise CorpusError(f"{path}: {error}") from None
    libraries = []
    for entry in data.get("library", []):
        try:
            library = Library(
                name=entry["name"],
                requirement=entry["requirement"],
                packages=tuple(entry.get("packages") or [entry["name"]]),
                dependencies=tuple(entry.get("dependencies", [])),
                domain=entry["domain"],
                style=entry["style"],
                half=entry["half"],
                # Not `<name>.py`: verify puts the file's folder first on sys.path, where a
                # file named like the library would shadow it.
                targets_file=TARGETS / entry.get("targets", f"{entry['name']}_targets.py"),
            )
        except KeyError as missing:
            raise CorpusError(f"{path}: library {entry.get('name', '?')!r} lacks {missing}") from None
        if library.half not in HALVES:
            raise CorpusError(f"{path}: {library.name}: half must be one of {HALVES}, not {library.half!r}")
        if "==" not in library.requirement or not all("==" in d for d in library.dependencies):
            raise CorpusError(f"{path}: {library.name}: every requirement must be pinned with ==")
        if not library.targets_file.is_file():
            raise CorpusError(f"{path}: {library.name}: no targets file {library.targets_file}")
        libraries.append(library)
    _check_unique(libraries, path)
    return libraries


def _check_unique(libraries: list[Library], path: Path) -> None:
    seen_packages: dict[str, str] = {}
    pins: dict[str, str] = {}
    for library in libraries:
        for package in library.packages:
            if package in seen_packages:
                raise CorpusError(f"{path}: package {package} is measured by both {seen_packages[package]} and {library.name}")
            seen_packages[package] = library.name
        for requirement in (library.requirement, *library.dependencies):
            name, _, version = requirement.partition("==")
            key = name.lower().replace("_", "-")
            if pins.setdefault(key, version) != version:
                raise CorpusError(f"{path}: {name} is pinned at both {pins[key]} and {version}")


def requirements(libraries: list[Library]) -> list[str]:
    """Every pinned requirement, each once, libraries first."""
    found = [library.requirement for library in libraries]
    for library in libraries:
        found.extend(d for d in library.dependencies if d not in found)
    return found


def declared_compiles(library: Library) -> dict[str, tuple[str, ...]]:
    """Target name -> the dotted functions it compiles, from the file's `COMPILES` literal."""
    path = library.targets_file
    tree = ast.parse(path.read_bytes(), str(path))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "COMPILES" for t in node.targets):
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                raise CorpusError(f"{path}:{node.lineno}: COMPILES must be a plain literal") from None
            if not isinstance(value, dict) or not all(
                isinstance(names, list) and names and all(isinstance(n, str) for n in names) for names in value.values()
            ):
                raise CorpusError(f"{path}:{node.lineno}: COMPILES maps each target to a non-empty list of names")
            return {name: tuple(names) for name, names in value.items()}
    raise CorpusError(f"{path}: no COMPILES declaration")


def library_of_package(libraries: list[Library]) -> dict[str, Library]:
    return {package: library for library in libraries for package in library.packages}


def missing_definitions(dotted: str, site: Path) -> str | None:
    """Why ``pkg.module.Class.method`` names no function in the installed code, or None.

    A static check (the module's file is parsed, never imported), so that a declared entry
    point is known to match a real definition before anything is scored against it. A
    function of torch itself (`TransformedDistribution.log_prob` over a library's transforms)
    is taken as declared: torch is not installed there, and torchlint never lints it.
    """
    if dotted.startswith("torch."):
        return None
    parts = dotted.split(".")
    for split in range(len(parts) - 1, 0, -1):
        base = site.joinpath(*parts[:split])
        for module_file in (base.with_suffix(".py"), base / "__init__.py"):
            if module_file.is_file():
                return _missing_in(module_file, parts[split:])
    return f"no module of {dotted} in {site}"


def _missing_in(module_file: Path, names: list[str]) -> str | None:
    body = ast.parse(module_file.read_bytes(), str(module_file)).body
    for index, name in enumerate(names):
        found = [
            node
            for node in _definitions(body)
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name
        ]
        if not found:
            return f"{module_file}: no definition of {'.'.join(names[: index + 1])}"
        body = found[-1].body
    return None


def _definitions(body: list[ast.stmt]):
    """Definitions at this level, including those under `if`/`try` (version-dependent code)."""
    for node in body:
        yield node
        if isinstance(node, (ast.If, ast.Try)):
            for block in (node.body, node.orelse, *(h.body for h in getattr(node, "handlers", [])), getattr(node, "finalbody", [])):
                yield from _definitions(block)
