"""TL7xx findings scored against the recorded recompile truth, as `verify --recompiles` compares them.

The findings are `torchlint check --select TL7`'s on the files the cases ran (their case files,
the user files that ran in their calls, the other modules of those folders and the packages'
`__init__.py`), linted as one project with the functions the cases compile as entry points. Events
and the matching are verify's (`torchlint.verify.recompile_compare`): an event a finding matches is
a true positive, an event none matches a miss, and a finding on code that ran (a line the case's
calls ran, or a row inside a frame Dynamo compiled) that matches no event a false positive.
Each group of cases (a half, a library) is compared on its own, so a finding counts in the groups
whose cases ran it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from _recompile_corpus import NO_HAZARD, RUN_ONLY, Case
from _recompile_truth import absolute, executed_lines
from _score import Scored, static_findings

from torchlint.rules import rule_by_code
from torchlint.verify.recompile_compare import (
    RecompileComparison,
    compare_recompiles,
    finding_json,
    is_recompile_code,
)
from torchlint.verify.run import with_packages

# Why an event was missed.
OUTSIDE = "outside linted code"  # the event's site is in torch or the standard library
MISPLACED = "misplaced"  # the rule the case expects fired in the case's files, elsewhere
SILENT = "rule silent"  # the rule the case expects did not fire
UNPREDICTED = "not predicted"  # recompile-facts predicts at most two recompiles here
RUN = "run-only"  # a value only a run shows (view geometry, the first call's path)
CAUSES = (SILENT, MISPLACED, UNPREDICTED, RUN, OUTSIDE)


@dataclass
class Figures(Scored):
    cases: int
    events: int
    covered: int
    findings: int  # judged: on code that ran
    matched: int

    @property
    def wanted(self) -> int:
        return self.events

    def as_dict(self) -> dict:
        return {"cases": self.cases, "events": self.events, "covered": self.covered, "misses": self.misses,
                "findings": self.findings, "matched": self.matched, "false_positives": self.false_positives,
                "precision": self.precision, "recall": self.recall, "f1": self.f1}


def figures(comparison: RecompileComparison, cases: int) -> Figures:
    return Figures(cases, len(comparison.covered) + len(comparison.misses), len(comparison.covered),
                   len(comparison.matched) + len(comparison.false_positives), len(comparison.matched))


def responses(cases: list[Case], records: dict[str, dict], site: Path) -> list[tuple[str, dict]]:
    """Each case's record as verify's comparison reads a worker's response (absolute paths)."""
    found = []
    for case in cases:
        record = records[case.id]
        frames = [
            {**frame, "file": absolute(frame["file"], site),
             "guards": [{**guard, "file": absolute(guard["file"], site)} for guard in frame["guards"]]}
            for frame in record["frames"]
        ]
        found.append((case.id, {
            "status": record["status"],
            "error": record["error"],
            "calls": record["calls"],
            "outputs_match": record["outputs_match"],
            "compiled_nothing": record["compiled_nothing"],
            "frames": frames,
            "executed": {file: sorted(lines) for file, lines in executed_lines(record, site).items()},
            "targets_file": str(case.file),
        }))
    return found


def files_to_lint(results: list[tuple[str, dict]], measured: Callable[[str], bool]) -> list[str]:
    """Case files, the measured files that ran in their calls or hold a frame Dynamo compiled,
    the other modules of those folders, and their packages' `__init__.py`: what a user lints is
    the package. ``measured``: whether a file belongs to a corpus library (not a dependency such
    as numpy) or is a case file."""
    found: set[str] = set()
    for _, response in results:
        found.add(response["targets_file"])
        found.update(file for file in response["executed"])
        found.update(f["file"] for f in response["frames"] if f.get("user") and f["file"] and Path(f["file"]).is_file())
    found = {file for file in found if measured(file)}
    folders = {Path(file).parent for file in found}
    found.update(str(module) for folder in folders for module in folder.glob("*.py"))
    return with_packages(found)


def entry_points(records: dict[str, dict]) -> tuple[str, ...]:
    """What the cases compile, as verify passes it to the linter: `Class.method` qualnames."""
    return tuple(sorted({name for record in records.values() for name in record.get("compiled", ())}))


def shown_under(backend: str) -> Callable[[str], bool]:
    """A rule counts under the backend its hazard shows under (TL708: inductor only), as in verify."""

    def shown(code: str) -> bool:
        rule = rule_by_code(code)
        return rule is None or backend in rule.backends

    return shown


def recompile_findings(site: Path, files: list[str], names: tuple[str, ...], backend: str) -> dict[str, list[dict]]:
    shown = shown_under(backend)
    found = static_findings(site, files, names)
    return {path: [finding_json(d) for d in diagnostics if is_recompile_code(d.code) and shown(d.code)]
            for path, diagnostics in found.items()}


def compare(cases: list[Case], results: dict[str, dict], findings: dict[str, list[dict]]) -> RecompileComparison:
    return compare_recompiles([(case.id, results[case.id]) for case in cases], lambda path: findings.get(path, []))


def miss_cause(event: dict, case: Case, results: dict[str, dict], findings: dict[str, list[dict]], linted: set[str]) -> str:
    if event.get("frame") is not None and event.get("file") not in linted:
        return OUTSIDE
    if case.hazard == RUN_ONLY:
        return RUN
    if case.hazard == NO_HAZARD:
        return UNPREDICTED
    response = results[case.id]
    files = {response["targets_file"], *(f["file"] for f in response["frames"] if f.get("file"))}
    if any(finding["code"] == case.hazard for file in files for finding in findings.get(file, [])):
        return MISPLACED
    return SILENT


def rule_of_event(event: dict, case: Case) -> str:
    """The rule an event belongs to: the first that matched it, else the hazard its case expects."""
    return min(event["matched_by"]) if event.get("matched_by") else case.hazard
