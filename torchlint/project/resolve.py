"""From a file's findings as it saw them alone to what is reported: each finding kept where
the project's solution says its condition holds, its `noqa` comments applied, and the
selection (`select`, `ignore`, per-file ignores) applied last, so that what one code reports
never depends on which others are shown.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from torchlint.analysis.checker import FULLGRAPH_NOTE
from torchlint.analysis.conditions import Fact, Fullgraph
from torchlint.analysis.engine import FileAnalysis, PendingDiagnostic
from torchlint.analysis.regions import RegionLine
from torchlint.project.solution import Solution
from torchlint.report.diagnostic import Diagnostic
from torchlint.report.suppression import apply_suppressions
from torchlint.rules import rule_by_code
from torchlint.rules.base import MetBreak
from torchlint.settings.config import Settings
from torchlint.settings.selection import codes_for_file


# The project's answer to a fact as one file spells it.
Answer = Callable[[Fact], bool]


def answers_of(path: str, solution: Solution) -> Answer:
    return lambda fact: solution.fact(path, fact)


def standing(pending: list[PendingDiagnostic], answer: Answer) -> list[Diagnostic]:
    """The findings of a file that hold in the project, as they read there."""
    found = []
    for finding in pending:
        diagnostic = _as_it_holds(finding, answer)
        if diagnostic is not None:
            found.append(diagnostic)
    return found


def _as_it_holds(pending: PendingDiagnostic, answer: Answer) -> Diagnostic | None:
    if not pending.condition.holds(answer):
        return None
    diagnostic = pending.diagnostic
    if pending.breaks_met:
        met = [record for record in pending.breaks_met if record.condition.holds(answer)]
        if not met:
            return None
        rule = rule_by_code(diagnostic.code)
        assert rule is not None  # the code of the rule that made the finding
        gb_ids = list(rule.gb_ids)
        for record in met:
            gb_ids.extend(gb for gb in record.gb_ids if gb not in gb_ids)
        message = rule.restate(pending.restate, [MetBreak(r.code, r.via, r.callee) for r in met])
        diagnostic = replace(
            diagnostic,
            message=message + diagnostic.message,
            related=tuple(record.related for record in met if record.related is not None),
            gb_ids=tuple(gb_ids),
        )
    if pending.function is not None and answer(Fullgraph(pending.function)):
        diagnostic = replace(diagnostic, message=diagnostic.message + FULLGRAPH_NOTE)
    return diagnostic


def kept(analysis: FileAnalysis, answer: Answer) -> list[Diagnostic]:
    """The file's standing findings less those its `noqa` comments suppress, and the comments
    that suppress nothing (TL902): all of them, whichever codes are selected."""
    pending, directives = analysis.unpacked()
    return apply_suppressions(standing(pending, answer), directives, analysis.outline.path)


def selected(diagnostics: list[Diagnostic], path: str, settings: Settings) -> list[Diagnostic]:
    """What is printed of a file's kept findings: the selection applies last."""
    enabled = codes_for_file(path, settings)
    shown = [diagnostic for diagnostic in diagnostics if diagnostic.code in enabled]
    shown.sort(key=Diagnostic.sort_key)
    return shown


def reported(analysis: FileAnalysis, solution: Solution, settings: Settings) -> list[Diagnostic]:
    """What is printed for the file: its kept findings, then the selection."""
    path = analysis.outline.path
    return selected(kept(analysis, answers_of(path, solution)), path, settings)


def region_lines(analysis: FileAnalysis, solution: Solution) -> list[RegionLine] | Diagnostic:
    """What `--show-regions` prints of a file: its compiled and disabled functions, each with
    why, or its TL901 where it does not parse."""
    unparsable = [p.diagnostic for p in analysis.pending if p.diagnostic.code == "TL901"]
    if unparsable:
        return unparsable[0]
    outline = analysis.outline
    rows = []
    for qualname, row in outline.rows.items():
        node = (outline.path, qualname)
        if qualname in outline.disabled:
            rows.append(RegionLine(row, qualname, "disabled", "not traced: decorated with a Dynamo disable"))
        elif node in solution.compiled:
            status = "fullgraph" if node in solution.fullgraph else "compiled"
            rows.append(RegionLine(row, qualname, status, solution.compiled[node]))
    rows.sort(key=lambda line: (line.row, line.qualname))
    return rows


def _alone(text: str, path: str, settings: Settings, rows: bool = False) -> tuple[FileAnalysis, Solution]:
    from torchlint.analysis.engine import analyze_text
    from torchlint.analysis.project_hints import file_hints, project_hints
    from torchlint.settings.profile import compile_profile

    profile = compile_profile(settings, project_hints([file_hints(text)]))
    analysis = analyze_text(text, path, settings, profile, rows=rows)
    return analysis, Solution([analysis.outline])


def lint_text(text: str, path: str, settings: Settings) -> list[Diagnostic]:
    """The findings of one text as a project of one file: what a snippet, a page's example or
    a buffer with no project around it reports."""
    analysis, solution = _alone(text, path, settings)
    return reported(analysis, solution, settings)


def describe_text(text: str, path: str, settings: Settings) -> list[RegionLine] | Diagnostic:
    """`--show-regions` of one text as a project of one file."""
    return region_lines(*_alone(text, path, settings, rows=True))
