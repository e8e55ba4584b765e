"""Lints one file's text: parse once, summarise, find compiled regions, run the rules.

Pure: text and settings in, diagnostics out, so it runs the same in a worker process.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path, PurePath
from typing import TYPE_CHECKING

import libcst as cst

from torchlint.analysis.checker import Checker
from torchlint.settings.config import Settings
from torchlint.report.diagnostic import Diagnostic, Location, Related
from torchlint.fix.fix_edits import TextLines, fix_of, plan_nodes
from torchlint.parse.parsing import python_syntax_error
from torchlint.parse.positions import Parsed, header_end, locate, parse
from torchlint.settings.profile import compile_profile
from torchlint.files.project_files import outside_packages
from torchlint.rules import all_rules
from torchlint.rules._frame_skips import is_break
from torchlint.rules.context import Finding
from torchlint.rules.tl901_syntax_error import SyntaxErrorRule
from torchlint.settings.selection import enabled_codes
from torchlint.analysis.guards import GuardEvaluator
from torchlint.analysis.dynamo_config import mentions_dynamo
from torchlint.analysis.outline import FileOutline, outline_of, package_of, unparsed_outline
from torchlint.project.index import ProjectFacts
from torchlint.analysis.regions import FileGraph, RegionLine, compiled_regions
from torchlint.analysis.summary import summarize
from torchlint.report.suppression import apply_suppressions, find_directives

if TYPE_CHECKING:
    import pathspec


@lru_cache(maxsize=64)
def codes_for(settings: Settings) -> frozenset[str]:
    return enabled_codes(settings.select, settings.extend_select, settings.ignore)


@lru_cache(maxsize=64)
def _per_file_specs(settings: Settings) -> tuple[tuple[pathspec.PathSpec, tuple[str, ...]], ...]:
    # Imported here: most projects set no per-file-ignores.
    import pathspec

    return tuple(
        (pathspec.GitIgnoreSpec.from_lines([pattern]), codes)
        for pattern, codes in settings.per_file_ignores
    )


def _relative(path: str, settings: Settings) -> PurePath | None:
    try:
        return Path(path).resolve().relative_to(settings.root.resolve())
    except (ValueError, OSError):
        return None


def codes_for_file(path: str, settings: Settings) -> frozenset[str]:
    enabled = codes_for(settings)
    if not settings.per_file_ignores:
        return enabled
    relative = _relative(path, settings)
    if relative is None:
        return enabled
    ignored: list[str] = []
    for spec, codes in _per_file_specs(settings):
        if spec.match_file(relative.as_posix()):
            ignored.extend(codes)
    if not ignored:
        return enabled
    return enabled - enabled_codes(ignored, (), ())


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


def _in_package(path: Path) -> PurePath:
    """`diffusers/schedulers/scheduling_ddpm.py` from the file up to its top package (just
    the file's name outside any package)."""
    return path.relative_to(outside_packages(path.parent))


@lru_cache(maxsize=64)
def _guards(guard_functions: tuple[str, ...]) -> GuardEvaluator:
    return GuardEvaluator(guard_functions)


@lru_cache(maxsize=64)
def _checker(
    codes: frozenset[str], guard_functions: tuple[str, ...], torch_version: tuple[int, int] | None
) -> Checker:
    rules = [
        rule for rule in all_rules() if rule.code in codes and rule.compiled_only and rule.applies_to(torch_version)
    ]
    return Checker(rules, _guards(guard_functions))


def _may_hold_compiled_code(text: str, settings: Settings) -> bool:
    """A cheap text test: no torch, no `forward`, no entry points -> nothing to trace."""
    return bool(settings.entry_points) or "torch" in text or "forward" in text


class UnparsableFile(Exception):
    """A file that does not parse; ``diagnostic`` is its TL901 finding."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


class ParserLimit(Exception):
    """Python compiles the file but libcst cannot parse it: the limit is libcst's, so the
    file is not to blame (no TL901), but it could not be checked either."""


def _syntax_error(text: str, path: str, libcst_error: cst.ParserSyntaxError | None = None) -> Diagnostic | None:
    """The TL901 finding for a file that does not parse, or None when Python compiles it.

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


def _diagnostics(findings: list[Finding], parsed: Parsed, path: str, text: str) -> list[Diagnostic]:
    nodes = [f.node for f in findings] + [f.statement for f in findings]
    nodes += [end for f in findings if f.header_only and (end := header_end(f.node)) is not None]
    nodes += [inner.node for f in findings for inner in f.related]
    nodes += [node for f in findings for node in plan_nodes(f.fix)]
    spans = locate(parsed, nodes)
    lines = TextLines(text) if any(f.fix is not None for f in findings) else None
    diagnostics = []
    for finding in findings:
        start, end = spans[id(finding.node)]
        if finding.header_only:
            end = _header_end(finding.node, start, spans)
        statement_start = spans.get(id(finding.statement), (start, end))[0]
        rule = finding.rule
        diagnostics.append(
            Diagnostic(
                path=path,
                code=rule.code,
                name=rule.name,
                message=finding.message,
                location=start,
                end_location=end,
                severity=rule.severity,
                suggestion=finding.suggestion,
                gb_ids=rule.gb_ids if finding.gb_ids is None else finding.gb_ids,
                url=rule.url(),
                noqa_row=statement_start.row,
                related=tuple(
                    Related(*spans[id(inner.node)], inner.rule.code, inner.message) for inner in finding.related
                ),
                fix=fix_of(finding.fix, spans, lines) if lines is not None else None,
            )
        )
    return diagnostics


def _header_end(statement: cst.CSTNode, start: Location, spans: dict) -> Location:
    """Where `for x in xs:`, `while cond:`, `with cm():` or `try:` ends."""
    end = header_end(statement)
    if end is not None and id(end) in spans:
        return spans[id(end)][1]
    keyword = "try" if isinstance(statement, (cst.Try, cst.TryStar)) else ""
    return Location(start.row, start.column + len(keyword))


def lint_text(
    text: str, path: str, settings: Settings, *, project: ProjectFacts | None = None
) -> list[Diagnostic]:
    """The findings in one file; ``project`` is what the other linted files tell about it."""
    return _lint(text, path, settings, project)[0]


def analyze_text(
    text: str,
    path: str,
    settings: Settings,
    *,
    project: ProjectFacts | None = None,
    parse_always: bool = False,
    run_rules: bool = True,
) -> tuple[list[Diagnostic], FileOutline]:
    """``lint_text`` for a file of a project, with the outline the project index reads.

    Without ``run_rules`` only the outline is made, and the findings are those of a file
    with no compiled code (a syntax error, unused suppressions)."""
    diagnostics, outline = _lint(
        text, path, settings, project, want_outline=True, parse_always=parse_always, run_rules=run_rules
    )
    if outline is None:
        outline = unparsed_outline(path, module_name(path, settings), _is_package(path))
    return diagnostics, outline


def _is_package(path: str) -> bool:
    return PurePath(path).stem == "__init__"


def _must_parse(text: str, settings: Settings, project: ProjectFacts | None) -> bool:
    # Another file may call into one that never mentions torch.
    return bool(project is not None and project.compiled_elsewhere) or _may_hold_compiled_code(text, settings)


def _lint(
    text: str,
    path: str,
    settings: Settings,
    project: ProjectFacts | None,
    want_outline: bool = False,
    parse_always: bool = False,
    run_rules: bool = True,
) -> tuple[list[Diagnostic], FileOutline | None]:
    enabled = codes_for_file(path, settings)
    diagnostics: list[Diagnostic] = []
    outline = None
    if (enabled or want_outline) and (parse_always or _must_parse(text, settings, project)):
        name = module_name(path, settings)
        try:
            parsed = parse(text)
        except cst.ParserSyntaxError as error:
            parsed = None
            outline = FileOutline(path, name, package_of(name, _is_package(path)))
            syntax_error = _syntax_error(text, path, error)
            if syntax_error is not None and SyntaxErrorRule.code in enabled:
                diagnostics.append(syntax_error)
        if parsed is not None:
            summary = summarize(parsed.module, name)
            module_classes = project.module_classes if project is not None else {}
            graph = FileGraph(summary, settings.entry_points, module_classes, _guards(settings.guard_functions))
            regions = compiled_regions(summary, settings.entry_points, project, graph=graph)
            # The project's `torch._dynamo.config` assignments count here; the outline keeps
            # the file's own.
            dynamo_config = project.dynamo_config if project is not None else summary.dynamo_config
            profile = compile_profile(settings, dynamo_config)
            passed: dict = {}
            returns: set[str] = set()
            if run_rules or want_outline:
                # Without the rules the walk still finds what the file's calls pass: the
                # outline is the same whether or not the file is linted with it.
                checker = _checker(enabled if run_rules else frozenset(), settings.guard_functions, profile.torch_version)
                findings = checker.run(
                    summary, regions, profile, project_facts=project, passed=passed if want_outline else None,
                    returns=returns if want_outline else None,
                    guarded=graph.guarded, call_index=graph.index,
                )
                if run_rules:
                    diagnostics = _diagnostics(findings, parsed, path, text)
            if want_outline:
                breaking = frozenset(f.function.qualname for f in findings if f.function is not None and is_break(f))
                outline = outline_of(
                    summary, graph, regions, path, _is_package(path), passed, frozenset(returns), breaking
                )
    elif SyntaxErrorRule.code in enabled and (found := _syntax_error(text, path)) is not None:
        # The text test skips files that cannot hold compiled code, but not ones that do
        # not parse: Python's own parser, much cheaper than libcst's, decides.
        diagnostics.append(found)
    diagnostics = apply_suppressions(diagnostics, find_directives(text), enabled, path)
    diagnostics.sort(key=Diagnostic.sort_key)
    return diagnostics, outline


def describe_regions(
    text: str, path: str, settings: Settings, *, project: ProjectFacts | None = None
) -> list[RegionLine]:
    """What `--show-regions` prints for one file: its compiled and disabled functions.

    Raises UnparsableFile for a file that does not parse: nothing about it can be shown."""
    if not _must_parse(text, settings, project):
        if (error := _syntax_error(text, path)) is not None:
            raise UnparsableFile(error)
        return []
    try:
        parsed = parse(text)
    except cst.ParserSyntaxError as error:
        raise UnparsableFile(_syntax_error(text, path, error)) from None
    summary = summarize(parsed.module, module_name(path, settings))
    regions = compiled_regions(summary, settings.entry_points, project, guards=_guards(settings.guard_functions))
    shown = list(regions.compiled) + [f for f in summary.functions if f in regions.disabled and f not in regions.compiled]
    spans = locate(parsed, [function.name_node for function in shown])
    rows = []
    for function in shown:
        row = spans[id(function.name_node)][0].row
        if function in regions.disabled:
            rows.append(RegionLine(row, function.qualname, "disabled", "not traced: decorated with a Dynamo disable"))
        else:
            status = "fullgraph" if function in regions.fullgraph else "compiled"
            rows.append(RegionLine(row, function.qualname, status, regions.compiled[function]))
    rows.sort(key=lambda line: (line.row, line.qualname))
    return rows


def dynamo_config_of(text: str) -> dict[str, bool | int | str]:
    """The `torch._dynamo.config` assignments of one file (a cheap text test first)."""
    if not mentions_dynamo(text):
        return {}
    try:
        return summarize(parse(text).module).dynamo_config
    except cst.ParserSyntaxError:
        return {}
