"""Static findings against Dynamo's breaks, on the lines that actually ran.

A finding matches a break when the break's line lies within the finding's statement
(from the statement's first line to the finding's last). Findings on lines no target ran
are left out: nothing can say whether they break. Fixture files carry a third view,
`# expect: TLnnn` comments, checked against both.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from torchlint.diagnostic import Diagnostic
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

    @property
    def errors(self) -> list[TargetResult]:
        return [t for t in self.targets if not t.ok]

    @property
    def agrees(self) -> bool:
        return not self.false_positives and not self.misses and not self.annotations


def _break_key(brk: dict) -> tuple:
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
        findings = [
            d
            for path in sorted(files)
            for d in lint(path)
            if any(row in executed.get(path, ()) for row in _rows(d))
        ]
        for brk in breaks:
            if brk["file"]:
                broke.setdefault(brk["file"], set()).add(brk["line"])
            codes = [d.code for d in findings if d.path == brk["file"] and brk["line"] in _rows(d)]
            target.breaks.append((brk, codes))
            all_breaks.setdefault(_break_key(brk), brk)
            if codes:
                covered[_break_key(brk)] = brk
        for finding in findings:
            hit = any(b["file"] == finding.path and b["line"] in _rows(finding) for b in breaks)
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
        expected = expectations(path.read_text(encoding="utf-8"))
        static: dict[int, set[str]] = {}
        for diagnostic in lint(real):
            static.setdefault(diagnostic.location.row, set()).add(diagnostic.code)
        executed = ran.get(real, set())
        dynamo = broke.get(real, set())
        for row in sorted(set(expected) | set(static) | dynamo):
            want, got = expected.get(row, set()), static.get(row, set())
            # Dynamo can only speak for lines that ran; an expected break that never ran is unproven.
            if row in executed:
                dynamo_disagrees = (row in dynamo) != bool(want)
            else:
                dynamo_disagrees = bool(want) and every_target_ran
            if want != got or dynamo_disagrees:
                problems.append(
                    {
                        "file": real,
                        "line": row,
                        "expected": sorted(want),
                        "static": sorted(got),
                        "dynamo": row in dynamo,
                        "ran": row in executed,
                    }
                )
    return problems
