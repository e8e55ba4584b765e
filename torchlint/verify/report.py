"""Verify's report: a plain-text table, or JSON for tools and benchmarks."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

from torchlint.report.paths import display_path
from torchlint.wording import counted
from torchlint.verify.compare import Comparison, family_of, rule_for_gb_type


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def score(matched: int, false_positives: int, covered: int, misses: int) -> dict:
    """Counts with precision (matched / findings) and recall (covered breaks / breaks)."""
    return {
        "breaks": covered + misses,
        "findings": matched + false_positives,
        "matched": matched,
        "false_positives": false_positives,
        "misses": misses,
        "precision": _ratio(matched, matched + false_positives),
        "recall": _ratio(covered, covered + misses),
    }


def _summary(comparison: Comparison) -> dict:
    matched, fps = len(comparison.matched), len(comparison.false_positives)
    covered, misses = len(comparison.covered_breaks), len(comparison.misses)
    return {
        "targets": len(comparison.targets),
        "errors": len(comparison.errors),
        **score(matched, fps, covered, misses),
    }


def _families(comparison: Comparison) -> dict:
    counts: dict[str, Counter] = {}
    for finding in comparison.matched:
        counts.setdefault(family_of(finding.code), Counter())["matched"] += 1
    for finding in comparison.false_positives:
        counts.setdefault(family_of(finding.code), Counter())["false_positives"] += 1
    for brk in comparison.covered_breaks:
        # A covered break belongs to the family of the finding that matched it.
        counts.setdefault(family_of(brk["matched_by"][0]), Counter())["covered"] += 1
    for brk in comparison.misses:
        counts.setdefault(family_of(rule_for_gb_type(brk["gb_type"])), Counter())["misses"] += 1
    return {
        family: score(c["matched"], c["false_positives"], c["covered"], c["misses"])
        for family, c in sorted(counts.items())
    }


def _finding_json(diagnostic, matched: bool | None = None) -> dict:
    data = {
        "file": diagnostic.path,
        "line": diagnostic.location.row,
        "code": diagnostic.code,
        "message": diagnostic.message,
    }
    if matched is not None:
        data["matched"] = matched
    return data


def as_json(comparison: Comparison, settings: dict) -> dict:
    targets = []
    for target in comparison.targets:
        response = target.response
        targets.append(
            {
                "id": target.key,
                "status": response.get("status"),
                "error": response.get("error"),
                "seconds": response.get("seconds"),
                "fullgraph": response.get("fullgraph"),
                "outputs_match": response.get("outputs_match"),
                "nondeterministic": response.get("nondeterministic"),
                "breaks": [{**brk, "matched_by": codes} for brk, codes in target.breaks],
                "findings": [_finding_json(d, hit) for d, hit in target.findings],
            }
        )
    return {
        **settings,
        "summary": _summary(comparison),
        "families": _families(comparison),
        "targets": targets,
        "false_positives": [_finding_json(d) for d in comparison.false_positives],
        "misses": [{**brk, "rule": rule_for_gb_type(brk["gb_type"])} for brk in comparison.misses],
        "annotations": comparison.annotations,
        **_traced_json(comparison),
    }


def _traced_json(comparison: Comparison) -> dict:
    traced = comparison.traced
    if traced is None:
        return {}
    return {
        "traced_regions": {
            "summary": _summary(traced),
            "families": _families(traced),
            "false_positives": [_finding_json(d) for d in traced.false_positives],
            "misses": [{**brk, "rule": rule_for_gb_type(brk["gb_type"])} for brk in traced.misses],
        }
    }


def ratio_text(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def target_label(key: str, cwd: Path) -> str:
    path, _, name = key.rpartition("::")
    return f"{display_path(path, cwd)}::{name}"


def settings_line(settings: dict) -> str:
    return f"torch {settings['torch_version']} · device {settings['device']} · backend {settings['backend']}"


def as_text(comparison: Comparison, settings: dict, cwd: Path) -> str:
    lines = [
        settings_line(settings),
        "",
        f"{'target':<52} {'breaks':>6} {'findings':>8} {'matched':>7} {'FP':>3} {'missed':>6}  fullgraph",
    ]
    for target in comparison.targets:
        name = target_label(target.key, cwd)
        if not target.ok:
            lines.append(f"{name:<52} error: {target.response.get('error')}")
            continue
        fullgraph = target.response.get("fullgraph") or {}
        verdict = "compiles" if fullgraph.get("ok") else f"fails ({fullgraph.get('error')})"
        if target.response.get("outputs_match") is False:
            verdict += ", outputs differ from eager" + (
                " (so does eager run again: nondeterministic)" if target.response.get("nondeterministic") else ""
            )
        missed = sum(1 for _, codes in target.breaks if not codes)
        hits = sum(1 for _, hit in target.findings if hit)
        fps = len(target.findings) - hits
        lines.append(
            f"{name:<52} {len(target.breaks):>6} {len(target.findings):>8} {hits:>7} {fps:>3} {missed:>6}  {verdict}"
        )
    summary = _summary(comparison)
    lines += [
        "",
        f"overall: {counted(summary['breaks'], 'break')}, {counted(summary['findings'], 'finding')}, {summary['matched']} matched, "
        f"{summary['false_positives']} false positives, {summary['misses']} missed; "
        f"precision {ratio_text(summary['precision'])}, recall {ratio_text(summary['recall'])}",
    ]
    for family, stats in _families(comparison).items():
        lines.append(
            f"  {family}: precision {ratio_text(stats['precision'])}, recall {ratio_text(stats['recall'])} "
            f"({stats['matched']} matched, {stats['false_positives']} FP, {stats['misses']} missed)"
        )
    if comparison.traced is not None:
        traced = _summary(comparison.traced)
        lines.append(
            f"with every function that ran taken as compiled: {traced['matched']} matched, "
            f"{traced['false_positives']} false positives, {traced['misses']} missed; "
            f"precision {ratio_text(traced['precision'])}, recall {ratio_text(traced['recall'])}"
        )
    if comparison.false_positives:
        lines += ["", "false positives (ran, reported, Dynamo did not break):"]
        lines += [
            f"  {display_path(d.path, cwd)}:{d.location.row}:{d.location.column}: {d.code} {d.message}"
            for d in comparison.false_positives
        ]
    if comparison.misses:
        lines += ["", "misses (Dynamo broke, nothing reported):"]
        for brk in comparison.misses:
            where = f"{display_path(brk['file'], cwd)}:{brk['line']}" if brk["file"] else "<unknown>"
            rule = rule_for_gb_type(brk["gb_type"])
            owner = f"type of {rule}" if rule else "no rule for this type"
            lines.append(f"  {where}: {brk['gb_type']} ({brk['gb_id'] or 'no id'}; {owner})")
    lines += closing_lines(
        comparison.annotations,
        "dynamo",
        lambda item: "broke" if item["dynamo"] else ("no break" if item["ran"] else "did not run"),
        comparison.errors,
        cwd,
    )
    return "\n".join(lines) + "\n"


def closing_lines(
    annotations: list[dict], seen_by: str, verdict: Callable[[dict], str], errors: list, cwd: Path
) -> list[str]:
    """What ends a text report: the `# expect:` annotations that disagree (expected / static /
    what the run saw, named ``seen_by``), then each target's error with its traceback."""
    lines: list[str] = []
    if annotations:
        lines += ["", f"annotations that disagree (line: expected / static / {seen_by}):"]
        for item in annotations:
            lines.append(
                f"  {display_path(item['file'], cwd)}:{item['line']}: "
                f"{','.join(item['expected']) or '-'} / {','.join(item['static']) or '-'} / {verdict(item)}"
            )
    for target in errors:
        lines += ["", f"error in {target_label(target.key, cwd)}: {target.response.get('error')}"]
        if target.response.get("traceback"):
            lines.append(target.response["traceback"].rstrip())
    return lines
