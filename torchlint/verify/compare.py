"""Static findings against Dynamo's breaks, on the lines that actually ran.

A finding matches a break when the break's line lies within the finding's statement
(from the statement's first line to the finding's last). Findings on lines no target ran
are left out: nothing can say whether they break. Fixture files carry a third view,
`# expect: TLnnn` comments, checked against both. Recompile hazards (TL7xx findings and
annotations) are left to `verify --recompiles` (recompile_compare.py): they never break.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from torchlint.report.diagnostic import Diagnostic
from torchlint.verify.block_spans import block_spans
from torchlint.verify.recompile_compare import is_recompile_code
from torchlint.rules import all_rules

_EXPECT = re.compile(r"#\s*expect:\s*(?P<codes>TL\d{3}(?:\s*,\s*TL\d{3})*)")


def rule_for_gb_type(gb_type: str) -> str | None:
    """The first rule that predicts this graph-break type, or None: a gap in the rules."""
    for rule in all_rules():
        if gb_type in rule.gb_types:
            return rule.code
    return None


def family_of(code: str | None) -> str:
    return code[:3] if code else "none"


def _ran(diagnostic: Diagnostic, rows: set[int], spans: dict[int, list[tuple[int, int, int]]] | None) -> bool:
    """Whether code inside the finding ran: an instruction whose source span lies within it.

    ``spans`` hold the instructions that ran on the lines that ran only in part; every
    instruction of another line in ``rows`` ran. Without spans, any line of the finding's
    statement counts. A finding about other breaks (a loop holding one) ran when one of
    them did: a `try:` has no instruction.
    """
    if diagnostic.related:
        return any(_span_ran(r.location, r.end_location, rows, spans) for r in diagnostic.related)
    if spans is None:
        return any(row in rows for row in _rows(diagnostic))
    return _span_ran(diagnostic.location, diagnostic.end_location, rows, spans)


def _span_ran(start_location, end_location, rows: set[int], spans) -> bool:
    if spans is None:
        return any(row in rows for row in range(start_location.row, end_location.row + 1))
    start = (start_location.row, start_location.column - 1)
    end = (end_location.row, end_location.column - 1)
    for row in range(start[0], end[0] + 1):
        if row in rows and row not in spans:
            return True
        for column, end_row, end_column in spans.get(row, ()):
            if (row, column) >= start and (end_row, end_column) <= end:
                return True
    return False


def _spans_by_row(response: dict) -> dict[str, dict[int, list[tuple[int, int, int]]]] | None:
    raw = response.get("executed_spans")
    if raw is None:
        return None
    indexed: dict[str, dict[int, list[tuple[int, int, int]]]] = {}
    for path, spans in raw.items():
        rows = indexed.setdefault(path, {})
        for line, column, end_line, end_column in spans:
            rows.setdefault(line, []).append((column, end_line, end_column))
    return indexed


@lru_cache(maxsize=256)
def _function_spans(path: str) -> tuple[tuple[int, int], ...]:
    """(first, last) line of every function in a file, innermost last when nested."""
    try:
        tree = ast.parse(Path(path).read_bytes())
    except (OSError, SyntaxError, ValueError):
        return ()
    spans = [
        (node.lineno, node.end_lineno or node.lineno)
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    return tuple(sorted(spans))


def _innermost_function(path: str, row: int) -> tuple[int, int] | None:
    containing = [span for span in _function_spans(path) if span[0] <= row <= span[1]]
    return max(containing, default=None)


def _skipped_positions(response: dict) -> list[tuple[str, int]]:
    """Where tracing stopped in each frame Dynamo gave up on (break in a loop, `try`, `with`):
    the function of the break, and the caller whose loop held the call (``skipped_at``).
    The break's own function counts too: a repeat of the break, logged without its frames,
    may have skipped it when it was compiled on its own.
    ``skipped_elsewhere``: such frames in the code measured, for breaks outside it."""
    found = []
    for brk in response.get("breaks", []):
        if brk.get("frame_skipped"):
            if brk["file"]:
                found.append((brk["file"], brk["line"]))
            found.extend(tuple(position) for position in brk.get("skipped_at", ()))
    found.extend(tuple(position) for position in response.get("skipped_elsewhere", ()))
    return found


def _unobserved(diagnostic: Diagnostic, skipped: list[tuple[str, int]]) -> bool:
    """After a break that made Dynamo skip a frame, the rest of that function ran eagerly.

    Dynamo never looked at those lines, so a finding there can be neither confirmed nor
    refuted by this run.
    """
    for file, line in skipped:
        if file != diagnostic.path or diagnostic.location.row <= line:
            continue
        function = _innermost_function(file, line)
        if function is not None and function == _innermost_function(diagnostic.path, diagnostic.location.row):
            return True
    return False


@lru_cache(maxsize=256)
def _block_ends(path: str) -> dict[int, int]:
    """First line -> last line of every loop, `try` and `with` statement in a file."""
    return {first: last for _, first, last in block_spans(path)}


def _matches(diagnostic: Diagnostic, brk: dict) -> bool:
    """The break lies in the finding's statement or, for a finding about the breaks inside a
    block (TL6xx), anywhere in that block or in a break it reports on."""
    if brk["file"] != diagnostic.path:
        return False
    line = brk["line"]
    if not diagnostic.related:
        return line in _rows(diagnostic)
    first = diagnostic.location.row
    return first <= line <= _block_ends(diagnostic.path).get(first, diagnostic.end_location.row) or any(
        related.location.row <= line <= related.end_location.row for related in diagnostic.related
    )


def _matches_a_break(diagnostic: Diagnostic, breaks: list[dict]) -> bool:
    return any(_matches(diagnostic, brk) for brk in breaks)


def _rows(diagnostic: Diagnostic) -> range:
    first = min(diagnostic.noqa_row or diagnostic.location.row, diagnostic.location.row)
    return range(first, diagnostic.end_location.row + 1)


@dataclass
class TargetResult:
    key: str
    response: dict
    findings: list[tuple[Diagnostic, bool]] = field(default_factory=list)  # (finding, matched)
    breaks: list[tuple[dict, list[str]]] = field(default_factory=list)  # (break, matching codes)

    @property
    def ok(self) -> bool:
        return self.response.get("status") == "ok"


@dataclass
class Comparison:
    targets: list[TargetResult]
    matched: list[Diagnostic]
    false_positives: list[Diagnostic]
    covered_breaks: list[dict]
    misses: list[dict]
    annotations: list[dict]
    # The same runs compared with every function that ran taken for compiled code.
    traced: Comparison | None = None

    @property
    def errors(self) -> list[TargetResult]:
        return [t for t in self.targets if not t.ok]

    @property
    def agrees(self) -> bool:
        return not self.false_positives and not self.misses and not self.annotations


def break_key(brk: dict) -> tuple:
    """What makes a break one break wherever it is counted: the same site met by several
    targets (or several calls) is one."""
    return (brk["file"], brk["line"], brk["gb_type"])


def _finding_key(diagnostic: Diagnostic) -> tuple:
    return (diagnostic.path, diagnostic.location.row, diagnostic.location.column, diagnostic.code)


def compare(
    results: list[tuple[str, dict]],
    lint: Callable[[str], list[Diagnostic]],
    annotated_files: list[Path],
    partly_run: frozenset[Path] = frozenset(),
) -> Comparison:
    """``lint(path)`` gives the static findings of one file (real path).

    In ``partly_run`` files only some targets ran (`file.py::name`), so an annotated
    line that did not run is not held against them.
    """
    lint = _without_recompile_findings(lint)
    targets = []
    matched: dict[tuple, Diagnostic] = {}
    executed_findings: dict[tuple, Diagnostic] = {}
    covered: dict[tuple, dict] = {}
    all_breaks: dict[tuple, dict] = {}
    ran: dict[str, set[int]] = {}
    broke: dict[str, set[int]] = {}
    for key, response in results:
        target = TargetResult(key, response)
        targets.append(target)
        if not target.ok:
            continue
        executed = {path: set(lines) for path, lines in response.get("executed", {}).items()}
        for path, lines in executed.items():
            ran.setdefault(path, set()).update(lines)
        breaks = response.get("breaks", [])
        files = set(executed) | {b["file"] for b in breaks if b["file"]}
        spans = _spans_by_row(response)
        findings = [
            d
            for path in sorted(files)
            for d in lint(path)
            if _ran(d, executed.get(path, set()), None if spans is None else spans.get(path, {}))
        ]
        skipped = _skipped_positions(response)
        if skipped:
            findings = [d for d in findings if _matches_a_break(d, breaks) or not _unobserved(d, skipped)]
        for brk in breaks:
            if brk["file"]:
                broke.setdefault(brk["file"], set()).add(brk["line"])
            # The break's own rule first, then a TL6xx finding that reports on it: a break
            # belongs to the family of the rule that names it.
            codes = [d.code for d in sorted(findings, key=lambda d: bool(d.related)) if _matches(d, brk)]
            target.breaks.append((brk, codes))
            all_breaks.setdefault(break_key(brk), brk)
            if codes:
                covered[break_key(brk)] = {**brk, "matched_by": codes}
        for finding in findings:
            hit = _matches_a_break(finding, breaks)
            target.findings.append((finding, hit))
            executed_findings[_finding_key(finding)] = finding
            if hit:
                matched[_finding_key(finding)] = finding
    false_positives = [d for k, d in executed_findings.items() if k not in matched]
    misses = [b for k, b in all_breaks.items() if k not in covered]
    annotations = _annotation_disagreements(annotated_files, lint, ran, broke, partly_run)
    return Comparison(
        targets,
        sorted(matched.values(), key=Diagnostic.sort_key),
        sorted(false_positives, key=Diagnostic.sort_key),
        list(covered.values()),
        sorted(misses, key=lambda b: (b["file"] or "", b["line"] or 0)),
        annotations,
    )


def _without_recompile_findings(lint: Callable[[str], list[Diagnostic]]) -> Callable[[str], list[Diagnostic]]:
    return lambda path: [d for d in lint(path) if not is_recompile_code(d.code)]


def expectations(text: str) -> dict[int, set[str]]:
    """Line -> codes from `# expect: TL101, TL102` comments (not from strings that contain one)."""
    found: dict[int, set[str]] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            match = _EXPECT.search(token.string) if token.type == tokenize.COMMENT else None
            if match:
                codes = {code.strip() for code in match.group("codes").split(",")}
                found.setdefault(token.start[0], set()).update(codes)
    except (tokenize.TokenError, SyntaxError):
        pass  # the static side reports the file's syntax error
    return found


def _annotation_disagreements(
    files: list[Path],
    lint: Callable[[str], list[Diagnostic]],
    ran: dict[str, set[int]],
    broke: dict[str, set[int]],
    partly_run: frozenset[Path],
) -> list[dict]:
    problems = []
    for path in files:
        every_target_ran = path not in partly_run
        real = str(path.resolve())
        expected = {
            row: breaks
            for row, codes in expectations(path.read_text(encoding="utf-8")).items()
            if (breaks := {code for code in codes if not is_recompile_code(code)})
        }
        static: dict[int, set[str]] = {}
        # A TL6xx finding on a loop's line is borne out by the breaks inside the loop.
        reaches: dict[int, set[int]] = {}
        for diagnostic in lint(real):
            static.setdefault(diagnostic.location.row, set()).add(diagnostic.code)
            for related in diagnostic.related:
                reaches.setdefault(diagnostic.location.row, set()).update(
                    range(related.location.row, related.end_location.row + 1)
                )
        executed = ran.get(real, set())
        dynamo = broke.get(real, set())
        for row in sorted(set(expected) | set(static) | dynamo):
            want, got = expected.get(row, set()), static.get(row, set())
            broke_here = row in dynamo or bool(reaches.get(row, set()) & dynamo)
            # Dynamo can only speak for lines that ran; an expected break that never ran is unproven.
            if row in executed:
                dynamo_disagrees = broke_here != bool(want)
            else:
                dynamo_disagrees = bool(want) and every_target_ran
            if want != got or dynamo_disagrees:
                problems.append(
                    {
                        "file": real,
                        "line": row,
                        "expected": sorted(want),
                        "static": sorted(got),
                        "dynamo": broke_here,
                        "ran": row in executed,
                    }
                )
    return problems
