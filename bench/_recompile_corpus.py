"""The recompile benchmark's cases: `recompile_corpus.toml` names each one (a target of a case file
in `recompiles/`), whose code it compiles, the hazard recompile-facts predicts for it, and its half.

Read without importing torch or the case files: the targets of a case file are the keys of the
dict literal its `torchlint_targets()` returns.
"""

from __future__ import annotations

import ast
import hashlib
from dataclasses import dataclass
from pathlib import Path

import tomllib
from _corpus import HALVES

BENCH = Path(__file__).resolve().parent
MANIFEST = BENCH / "recompile_corpus.toml"
CASES = BENCH / "recompiles"
RULES = tuple(f"TL7{n:02d}" for n in range(1, 12))
# "none": at most one recompile per state, which a rule must not flag; "run-only": depends on
# values only a run shows (view geometry, shape branches, the first call's path).
NO_HAZARD = "none"
RUN_ONLY = "run-only"
HAZARDS = (*RULES, NO_HAZARD, RUN_ONLY)
OWN = "own"


class CaseError(Exception):
    """The case list or a case file is inconsistent; the message says where."""


@dataclass(frozen=True)
class Case:
    id: str  # "file.py::target"
    library: str  # whose code is compiled: a corpus library, "torch", or "own"
    hazard: str
    half: str
    note: str = ""

    @property
    def file(self) -> Path:
        return CASES / self.id.partition("::")[0]

    @property
    def target(self) -> str:
        return self.id.partition("::")[2]


def load_cases(path: Path = MANIFEST) -> list[Case]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise CaseError(f"{path}: {error}") from None
    cases = []
    for entry in data.get("case", []):
        try:
            case = Case(entry["id"], entry["library"], entry["hazard"], entry["half"], entry.get("note", ""))
        except KeyError as missing:
            raise CaseError(f"{path}: case {entry.get('id', '?')!r} lacks {missing}") from None
        if "::" not in case.id:
            raise CaseError(f"{path}: {case.id}: an id is file.py::target")
        if case.half not in HALVES:
            raise CaseError(f"{path}: {case.id}: half must be one of {HALVES}, not {case.half!r}")
        if case.hazard not in HAZARDS:
            raise CaseError(f"{path}: {case.id}: hazard must be one of {HAZARDS}, not {case.hazard!r}")
        cases.append(case)
    seen: set[str] = set()
    for case in cases:
        if case.id in seen:
            raise CaseError(f"{path}: case {case.id} is listed twice")
        seen.add(case.id)
    return cases


def declared_targets(file: Path) -> list[str]:
    """The target names of a case file: the keys of the dict `torchlint_targets()` returns."""
    tree = ast.parse(file.read_bytes(), str(file))
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "torchlint_targets":
            returned = [n.value for n in ast.walk(node) if isinstance(n, ast.Return)]
            if len(returned) == 1 and isinstance(returned[0], ast.Dict):
                keys = returned[0].keys
                if all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in keys):
                    return [k.value for k in keys]
            raise CaseError(f"{file}: torchlint_targets() must return one dict literal with string keys")
    raise CaseError(f"{file}: no torchlint_targets()")


def halves_digest(cases: list[Case]) -> str:
    """A digest of the case-to-half map: it changes when a half does, or a case comes or goes."""
    text = "".join(f"{case.id}={case.half}\n" for case in sorted(cases, key=lambda c: c.id))
    return hashlib.sha256(text.encode()).hexdigest()


def case_files(cases: list[Case]) -> list[Path]:
    return sorted({case.file for case in cases})
