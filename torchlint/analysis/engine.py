"""Analyses one file's text, once: parse, summarise, run every rule over every function,
and write the outline the project's solve reads.

Pure: text and settings in, a ``FileAnalysis`` out, so it runs the same in a worker process
and its result can be kept by the file's content. Nothing here knows which functions are
compiled or what other files pass and return: each finding carries the condition under
which it stands (`conditions`), and the project answers it (`torchlint.project`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path, PurePath

import libcst as cst

from torchlint.analysis.checker import Checker
from torchlint.analysis.conditions import TRUE, Condition, Fact, Fullgraph, any_of
from torchlint.analysis.guards import GuardEvaluator
from torchlint.analysis.plain_data import dumps, loads
from torchlint.analysis.project_hints import may_be_parsed
from torchlint.analysis.outline import FileOutline, outline_of, unparsed_outline
from torchlint.analysis.regions import FileGraph
from torchlint.analysis.scopes import package_of
from torchlint.analysis.stable_digest import digest
from torchlint.analysis.summary import FileSummary, summarize
from torchlint.files.project_files import outside_packages
from torchlint.fix.fix_edits import TextLines, fix_of, plan_nodes
from torchlint.parse.parsing import python_syntax_error
from torchlint.parse.positions import Parsed, header_end, locate, parse
from torchlint.report.diagnostic import Diagnostic, Location, Related
from torchlint.report.suppression import Directive, find_directives
from torchlint.rules import all_rules
from torchlint.rules._frame_skips import is_break
from torchlint.rules.context import BreakMet, Finding
from torchlint.rules.tl901_syntax_error import SyntaxErrorRule
from torchlint.settings.config import Settings
from torchlint.settings.profile import CompileProfile

# id(node) -> where the node starts and ends
Spans = Mapping[int, tuple[Location, Location]]


@dataclass(frozen=True)
class BreakRecord:
    """One way a finding about breaks met elsewhere may hold (see `rules.context.BreakMet`),
    with where its break is shown."""

    condition: Condition
    code: str | None = None
    via: str | None = None
    callee: str | None = None
    related: Related | None = None
    gb_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class PendingDiagnostic:
    """A finding as the file alone sees it: it stands where ``condition`` holds (and, for a
    finding about breaks met elsewhere, where one of its ``breaks_met`` does)."""

    diagnostic: Diagnostic
    condition: Condition
    # the function it is in (its qualified name), for the fullgraph note
    function: str | None = None
    breaks_met: tuple[BreakRecord, ...] = ()
    restate: tuple[str, ...] = ()


@dataclass
class FileAnalysis:
    """All that one file's analysis gives: what the project's solve reads of it (``outline``),
    and its findings as the file alone sees them with its `noqa` comments, kept as plain-data bytes
    until the project resolves them: a project's findings are most of what its analyses hold, and
    each file's are read once."""

    outline: FileOutline
    findings: bytes
    # A digest of what the project reads of the file: its outline (less the rows its
    # functions are on) and the facts its findings ask. Another content with the same
    # interface leaves the project's solution as it was.
    interface: str
    # The project facts its findings ask about.
    facts: frozenset[Fact]

    @property
    def pending(self) -> list[PendingDiagnostic]:
        return self.unpacked()[0]

    def unpacked(self) -> tuple[list[PendingDiagnostic], list[Directive]]:
        """The findings and the `noqa` comments, read from their bytes (each call reads them)."""
        found = loads(self.findings)
        return found if isinstance(found, tuple) else ([], [])


def _facts_asked(pending: list[PendingDiagnostic]) -> frozenset[Fact]:
    found: set[Fact] = set()
    for finding in pending:
        found.update(finding.condition.facts())
        for met in finding.breaks_met:
            found.update(met.condition.facts())
        if finding.function is not None:
            found.add(Fullgraph(finding.function))
    return frozenset(found)


def _analysis(outline: FileOutline, pending: list[PendingDiagnostic], directives: list[Directive]) -> FileAnalysis:
    facts = _facts_asked(pending)
    return FileAnalysis(outline, dumps((pending, directives)), digest(replace(outline, rows={}), facts), facts)


def module_name(path: str, settings: Settings) -> str:
    """`pkg.models.net` for `<root>/pkg/models/net.py`, for matching entry points and
    resolving imports. Outside the root (an installed library linted by path) the folders
    that hold an `__init__.py` name the package."""
    relative = _relative(path, settings)
    if relative is None:
        relative = _in_package(Path(path).absolute())
    parts = list(relative.with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _relative(path: str, settings: Settings) -> PurePath | None:
    try:
        return Path(path).resolve().relative_to(settings.root.resolve())
    except (ValueError, OSError):
        return None


def _in_package(path: Path) -> PurePath:
    """`diffusers/schedulers/scheduling_ddpm.py` from the file up to its top package (just
    the file's name outside any package)."""
    return path.relative_to(outside_packages(path.parent))


def is_package(path: str) -> bool:
    return PurePath(path).stem == "__init__"


@lru_cache(maxsize=64)
def _guards(guard_functions: tuple[str, ...]) -> GuardEvaluator:
    return GuardEvaluator(guard_functions)


@lru_cache(maxsize=64)
def _checker(guard_functions: tuple[str, ...], torch_version: tuple[int, int] | None) -> Checker:
    """Every rule that predicts a break on this torch: selection only filters what is printed."""
    rules = [rule for rule in all_rules() if rule.compiled_only and rule.applies_to(torch_version)]
    return Checker(rules, _guards(guard_functions))


def may_hold_compiled_code(text: str, settings: Settings) -> bool:
    """A cheap text test: no torch, no `forward`, no entry points -> nothing to trace."""
    return bool(settings.entry_points) or may_be_parsed(text)


class ParserLimit(Exception):
    """Python compiles the file but libcst cannot parse it: the limit is libcst's, so the
    file is not to blame (no TL901), but it could not be checked either."""


def syntax_error(text: str, path: str, libcst_error: cst.ParserSyntaxError | None = None) -> Diagnostic | None:
    """The TL901 finding for a file that does not compile, or None when Python compiles it.

    Raises ParserLimit when libcst rejected a file that Python compiles."""
    python_error = python_syntax_error(text, path)
    if python_error is None:
        if libcst_error is not None:
            raise ParserLimit(f"Python compiles it, but libcst cannot parse it ({libcst_error.message.splitlines()[0]})")
        return None
    row, column, message = python_error.lineno or 1, max(python_error.offset or 1, 1), python_error.msg
    return Diagnostic(
        path=path,
        code=SyntaxErrorRule.code,
        name=SyntaxErrorRule.name,
        message=f"the file does not parse, so it was not checked: {message}",
        location=Location(row, column),
        end_location=Location(row, column),
        url=SyntaxErrorRule.url(),
        noqa_row=row,
    )


def analyze_text(
    text: str,
    path: str,
    settings: Settings,
    profile: CompileProfile,
    *,
    parse_always: bool = False,
    rows: bool = False,
    parser: Callable[[str], Parsed] = parse,
) -> FileAnalysis:
    """One file's analysis. A file the text test shows nothing to trace in is only compiled by
    Python (for TL901), unless ``parse_always``: the project's code calls into it. ``rows``:
    find the row each function's name is on, for `--show-regions`. ``parser``: how the text
    is parsed (the language server parses an edit from the file's last parse)."""
    name = module_name(path, settings)
    package = is_package(path)
    directives = find_directives(text)
    if not parse_always and not may_hold_compiled_code(text, settings):
        found = syntax_error(text, path)
        pending = [PendingDiagnostic(found, TRUE)] if found is not None else []
        return _analysis(unparsed_outline(path, name, package), pending, directives)
    try:
        parsed = parser(text)
    except cst.ParserSyntaxError as error:
        found = syntax_error(text, path, error)
        outline = FileOutline(path, name, package_of(name, package))
        return _analysis(outline, [PendingDiagnostic(found, TRUE)] if found is not None else [], directives)
    summary = summarize(parsed.module, name, package)
    graph = FileGraph(
        summary, settings.entry_points, guards=_guards(settings.guard_functions),
        presume_forwards=profile.presumes_forwards,
    )
    checked = _checker(settings.guard_functions, profile.torch_version).run(summary, graph, profile)
    findings = checked.findings
    breaking: dict[str, list[Condition]] = {}
    for finding in findings:
        if finding.function is not None and is_break(finding):
            breaking.setdefault(finding.function.qualname, []).append(finding.standing())
    pending, function_rows = _pending(findings, parsed, path, text, summary, rows)
    outline = outline_of(
        summary, graph, path, package, checked.kinds,
        {qualname: any_of(*conditions) for qualname, conditions in breaking.items()}, function_rows,
    )
    return _analysis(outline, pending, directives)


def _definitions(summary: FileSummary) -> list[cst.CSTNode]:
    """The module's `def` and `class` statements in source order (what `locate` counts)."""
    return [f.node for f in summary.functions if f.lambda_node is None] + [c.node for c in summary.classes.values()]


def _pending(
    findings: list[Finding], parsed: Parsed, path: str, text: str, summary: FileSummary, rows: bool
) -> tuple[list[PendingDiagnostic], dict[str, int]]:
    """Each finding as a diagnostic that waits for the project, and (``rows``) the row each
    function's name is on: placed in one regeneration of the functions that need it."""
    inner_findings = [met.inner for f in findings for met in f.breaks_met if met.inner is not None]
    nodes = [function.name_node for function in summary.functions] if rows else []
    nodes += [f.node for f in findings] + [f.statement for f in findings]
    nodes += [header for f in findings if f.header_only and (header := header_end(f.node)) is not None]
    nodes += [inner.node for f in findings for inner in f.related] + [inner.node for inner in inner_findings]
    nodes += [node for f in findings for node in plan_nodes(f.fix)]
    spans = locate(parsed, nodes, _definitions(summary))
    lines = TextLines(text) if any(f.fix is not None for f in findings) else None
    pending = []
    for finding in findings:
        start, end = spans[id(finding.node)]
        if finding.header_only:
            end = _header_end(finding.node, start, spans)
        statement_start = spans.get(id(finding.statement), (start, end))[0]
        rule = finding.rule
        diagnostic = Diagnostic(
            path=path,
            code=rule.code,
            name=rule.name,
            # A finding about breaks met elsewhere is worded once the project says which hold:
            # here, what follows the rule's own words (where the code runs).
            message=finding.message[len(rule.message):] if finding.breaks_met else finding.message,
            location=start,
            end_location=end,
            severity=rule.severity,
            suggestion=finding.suggestion,
            gb_ids=rule.gb_ids if finding.gb_ids is None else finding.gb_ids,
            url=rule.url(),
            noqa_row=statement_start.row,
            related=tuple(Related(*spans[id(inner.node)], inner.rule.code, inner.message) for inner in finding.related),
            fix=fix_of(finding.fix, spans, lines) if lines is not None else None,
        )
        pending.append(
            PendingDiagnostic(
                diagnostic,
                finding.condition,
                finding.function.qualname if finding.function is not None else None,
                tuple(_record(met, spans) for met in finding.breaks_met),
                finding.restate,
            )
        )
    if not rows:
        return pending, {}
    return pending, {function.qualname: spans[id(function.name_node)][0].row for function in summary.functions}


def _record(met: BreakMet, spans: Spans) -> BreakRecord:
    inner = met.inner
    if inner is None:
        return BreakRecord(met.condition, callee=met.callee)
    ids = inner.gb_ids if inner.gb_ids is not None else inner.rule.gb_ids
    related = Related(*spans[id(inner.node)], inner.rule.code, inner.message)
    return BreakRecord(met.condition, inner.rule.code, met.via, None, related, ids)


def _header_end(statement: cst.CSTNode, start: Location, spans: Spans) -> Location:
    """Where `for x in xs:`, `while cond:`, `with cm():` or `try:` ends."""
    end = header_end(statement)
    if end is not None and id(end) in spans:
        return spans[id(end)][1]
    keyword = "try" if isinstance(statement, (cst.Try, cst.TryStar)) else ""
    return Location(start.row, start.column + len(keyword))
