"""The report of `torchlint verify --recompiles`: a plain-text table, or JSON."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from torchlint.report.paths import display_path
from torchlint.verify.recompile_compare import COMPILED_NOTHING, DIFFERS_FROM_EAGER, RecompileComparison
from torchlint.verify.report import closing_lines, ratio_text, score, settings_line, target_label


def _score(matched: int, false_positives: int, covered: int, misses: int) -> dict:
    """verify's score, counting events where it counts breaks."""
    counts = score(matched, false_positives, covered, misses)
    return {"events": counts.pop("breaks"), **counts}


def _summary(comparison: RecompileComparison) -> dict:
    counts = _score(len(comparison.matched), len(comparison.false_positives), len(comparison.covered), len(comparison.misses))
    return {"targets": len(comparison.targets), "errors": len(comparison.errors), **counts}


def _rules(comparison: RecompileComparison) -> dict:
    """Scores per rule; an event no finding matched counts for no rule (`none`)."""
    counts: dict[str, Counter] = {}
    for finding in comparison.matched:
        counts.setdefault(finding["code"], Counter())["matched"] += 1
    for finding in comparison.false_positives:
        counts.setdefault(finding["code"], Counter())["false_positives"] += 1
    for event in comparison.covered:
        counts.setdefault(event["matched_by"][0], Counter())["covered"] += 1
    for _ in comparison.misses:
        counts.setdefault("none", Counter())["misses"] += 1
    return {code: _score(c["matched"], c["false_positives"], c["covered"], c["misses"]) for code, c in sorted(counts.items())}


def as_json(comparison: RecompileComparison, settings: dict) -> dict:
    targets = []
    for target in comparison.targets:
        response = target.response
        targets.append(
            {
                "id": target.key,
                "status": response.get("status"),
                "error": response.get("error"),
                "seconds": response.get("seconds"),
                "calls": response.get("calls"),
                "outputs_match": response.get("outputs_match"),
                "compiled_nothing": response.get("compiled_nothing"),
                "frames": response.get("frames", []),
                "events": target.events,
                "findings": target.findings,
            }
        )
    return {
        **settings,
        "recompiles": True,
        "summary": _summary(comparison),
        "rules": _rules(comparison),
        "targets": targets,
        "false_positives": comparison.false_positives,
        "misses": comparison.misses,
        "annotations": comparison.annotations,
    }


def _where(file: str | None, line: int | None, cwd: Path) -> str:
    if not file:
        return "<unknown>"
    return display_path(file, cwd) + (f":{line}" if line else "")


def describe_event(event: dict, cwd: Path) -> str:
    """`m.py:10: forward (m.py:9-11) recompiled 7 times, recompile limit hit; guard self.calls == 7`."""
    if event["kind"] == DIFFERS_FROM_EAGER:
        return f"{_where(event['file'], None, cwd)}: {target_label(event['target'], cwd)}: outputs differ from an eager run of the same calls"
    if event["kind"] == COMPILED_NOTHING:
        return f"{_where(event['file'], None, cwd)}: {target_label(event['target'], cwd)}: compiled nothing (every call ran eagerly)"
    frame = event["frame"]
    span = f"{display_path(frame['file'], cwd)}:{frame['first_line']}-{frame['last_line']}" if frame["file"] else "?"
    text = f"{_where(event['file'], event['line'], cwd)}: {frame['function']} ({span}) recompiled {event['recompiles']} times"
    if event["limit_hit"]:
        text += ", recompile limit hit (later calls ran eagerly)"
    if event["guards"]:
        text += f"; last guard: {event['guards'][-1]['guard']}"
    return text


def _recompiles_cell(response: dict) -> str:
    frames = response.get("frames", [])
    most = max(frames, key=lambda frame: (frame["recompiles"], frame["limit_hit"]), default=None)
    if most is None:
        return "0"
    return f"{most['recompiles']}{'+L' if most['limit_hit'] else ''}"


def as_text(comparison: RecompileComparison, settings: dict, cwd: Path) -> str:
    lines = [
        settings_line(settings) + " · recompiles",
        "",
        f"{'target':<52} {'calls':>5} {'most':>5} {'events':>6} {'findings':>8} {'matched':>7} {'FP':>3} {'missed':>6}  outputs",
    ]
    for target in comparison.targets:
        name = target_label(target.key, cwd)
        if not target.ok:
            lines.append(f"{name:<52} error: {target.response.get('error')}")
            continue
        response = target.response
        verdict = "differ from eager" if response.get("outputs_match") is False else "same as eager"
        if response.get("compiled_nothing"):
            verdict += ", compiled nothing"
        hits = sum(1 for finding in target.findings if finding["matched"])
        missed = sum(1 for event in target.events if not event["matched_by"])
        lines.append(
            f"{name:<52} {response.get('calls', 0):>5} {_recompiles_cell(response):>5} {len(target.events):>6} "
            f"{len(target.findings):>8} {hits:>7} {len(target.findings) - hits:>3} {missed:>6}  {verdict}"
        )
    summary = _summary(comparison)
    lines += [
        "",
        "most: the most recompiles of one frame (+L: the recompile limit was hit)",
        f"overall: {summary['events']} events, {summary['findings']} findings, {summary['matched']} matched, "
        f"{summary['false_positives']} false positives, {summary['misses']} missed; "
        f"precision {ratio_text(summary['precision'])}, recall {ratio_text(summary['recall'])}",
    ]
    for code, stats in _rules(comparison).items():
        lines.append(
            f"  {code}: precision {ratio_text(stats['precision'])}, recall {ratio_text(stats['recall'])} "
            f"({stats['matched']} matched, {stats['false_positives']} FP, {stats['misses']} missed)"
        )
    events = [event for target in comparison.targets for event in target.events]
    if events:
        lines += ["", "events:"]
        for event in events:
            codes = ", ".join(dict.fromkeys(event["matched_by"]))  # one finding or several of a rule
            by = f" [matched by {codes}]" if codes else " [no finding]"
            lines.append(f"  {describe_event(event, cwd)}{by}")
    if comparison.false_positives:
        lines += ["", "false positives (ran, reported, no event):"]
        lines += [
            f"  {display_path(f['filename'], cwd)}:{f['location']['row']}:{f['location']['column']}: {f['code']} {f['message']}"
            for f in comparison.false_positives
        ]
    lines += closing_lines(
        comparison.annotations,
        "run",
        lambda item: "recompiled" if item["recompiled"] else ("no event" if item["ran"] else "did not run"),
        comparison.errors,
        cwd,
    )
    return "\n".join(lines) + "\n"
