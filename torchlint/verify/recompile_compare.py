"""Static TL7xx findings against what a run of a target's calls showed (`verify --recompiles`).

An *event* is what a run shows that a recompile rule speaks of: a frame that recompiled more
than twice in the target's calls (or hit the recompile limit), a target whose outputs differ
from an eager run of the same calls (a silent wrong result), or a target that compiled nothing.
Its site is the user line the failing guard names, else the frame's span; a target-wide event
sits in the target's file.

A finding matches an event in the same file when the event's line is the finding's row or one
of its related rows (the uses in compiled code), or when the event's frame spans one of them;
a target-wide event matches the findings of the rule for that silent result (TL708, TL709 or
TL710 for outputs that differ, TL711 for nothing compiled) in the targets file, on code that ran in the
target.
A finding is judged in a target of several calls whose code ran it: its own row ran (a cause
outside compiled code, `model.epoch = epoch`), or lies in a frame Dynamo compiled. A judged finding no event matches is a false positive; an event no finding matches,
a miss. One call can show no recompile, so a target of one call judges only the findings an
event matches.

Imports neither torch nor the rules' engine: the benchmark's scorer uses `matches` as it is.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RECOMPILE_FAMILY = "TL7"
RECOMPILES = "recompiles"
DIFFERS_FROM_EAGER = "differs_from_eager"
COMPILED_NOTHING = "compiled_nothing"
# Rules about results that are silently wrong or never compiled, which a run sees only as a
# whole: a hook added after compile and a `random.Random` traced as a constant give other
# outputs than eager, and so can a float scalar that inductor bakes into its kernel (measured on
# torch 2.13: after its second recompile the graph kept the second value's scalar);
# `.compile()` of a torch.nn module compiles nothing.
SILENT_RULES = {DIFFERS_FROM_EAGER: ("TL708", "TL709", "TL710"), COMPILED_NOTHING: ("TL711",)}
# Recompiles of one frame in a target's calls that are no hazard: a value that changes costs
# one (Dynamo then takes it as a symbol), a two- or three-state toggle one or two.
ALLOWED_RECOMPILES = 2


def is_recompile_code(code: str | None) -> bool:
    return bool(code) and code.startswith(RECOMPILE_FAMILY)


# -- events ------------------------------------------------------------------------------


def _site(frame: dict) -> tuple[str | None, int | None, list[list[Any]]]:
    """The most frequent user line the frame's guards name (the latest among equals), and every
    such line; the frame's first line where no guard names one."""
    sites = [(guard["file"], guard["line"]) for guard in frame.get("guards", ()) if guard.get("file") and guard.get("line")]
    if not sites:
        return frame.get("file"), frame.get("first_line"), []
    counts = Counter(sites)
    best = max(reversed(sites), key=lambda site: counts[site])
    return best[0], best[1], [list(site) for site in dict.fromkeys(sites)]


def frame_event(target: str, frame: dict) -> dict:
    """The event of a frame that recompiled too often (a `Frame.as_json()`)."""
    file, line, sites = _site(frame)
    return {
        "kind": RECOMPILES,
        "target": target,
        "file": file,
        "line": line,
        "sites": sites,
        "frame": {key: frame[key] for key in ("file", "function", "first_line", "last_line")},
        "recompiles": frame["recompiles"],
        "limit_hit": frame["limit_hit"],
        "guards": frame.get("guards", []),
    }


def target_event(target: str, kind: str, file: str | None, ran: list[int] | None = None) -> dict:
    """An event of the whole target (outputs differ from eager, nothing compiled), in ``file``;
    ``ran``: the rows of ``file`` that ran in the target, where known."""
    event = {"kind": kind, "target": target, "file": file, "line": None, "sites": [], "frame": None}
    return event if ran is None else {**event, "ran": ran}


def events_of(target: str, response: dict) -> list[dict]:
    """The events of one target's run (the worker's response)."""
    events = [
        frame_event(target, frame)
        for frame in response.get("frames", ())
        if frame["recompiles"] > ALLOWED_RECOMPILES or frame["limit_hit"]
    ]
    file = response.get("targets_file")
    ran = response.get("executed", {}).get(file, [])
    if response.get("outputs_match") is False:
        events.append(target_event(target, DIFFERS_FROM_EAGER, file, ran))
    if response.get("compiled_nothing"):
        events.append(target_event(target, COMPILED_NOTHING, file, ran))
    return events


# -- matching --------------------------------------------------------------------------


def _same_file(a: str | None, b: str | None) -> bool:
    return bool(a) and bool(b) and (a == b or os.path.realpath(a) == os.path.realpath(b))


def _span(item: dict) -> range:
    """The rows of a finding or a related location: `torchlint check --output-format json`'s
    `location` and `end_location`, or a plain `line`."""
    if "location" in item:
        first = item["location"]["row"]
        last = (item.get("end_location") or item["location"])["row"]
        return range(first, max(first, last) + 1)
    return range(item["line"], item.get("end_line", item["line"]) + 1)


def finding_rows(finding: dict) -> set[int]:
    """The finding's own rows and those of its related locations (the same file)."""
    rows = set(_span(finding))
    for related in finding.get("related", ()):
        rows.update(_span(related))
    return rows


def _finding_file(finding: dict) -> str | None:
    return finding.get("filename") or finding.get("file")


def matches(finding: dict, event: dict) -> bool:
    """Whether a TL7xx finding (as `torchlint check --output-format json` gives it, or with
    `file` and `line`) accounts for an event of `verify --recompiles`."""
    path = _finding_file(finding)
    rows = finding_rows(finding)
    if event.get("frame") is None:
        # The rule of the silent result, in the targets file, on code that ran in the target.
        ran = event.get("ran")
        return (
            finding["code"] in SILENT_RULES.get(event["kind"], ())
            and _same_file(path, event.get("file"))
            and (ran is None or bool(rows.intersection(ran)))
        )
    sites = [(event.get("file"), event.get("line")), *(tuple(site) for site in event.get("sites", ()))]
    if any(line in rows and _same_file(path, file) for file, line in sites):
        return True
    frame = event["frame"]
    first = frame.get("first_line")
    if first is None or not _same_file(path, frame.get("file")):
        return False
    last = frame.get("last_line") or first
    return any(first <= row <= last for row in rows)


# -- comparing -------------------------------------------------------------------------


def finding_json(diagnostic: Any) -> dict:
    """The keys of `torchlint check --output-format json` that `matches` reads."""

    def where(item: Any) -> dict:
        return {
            "location": {"row": item.location.row, "column": item.location.column},
            "end_location": {"row": item.end_location.row, "column": item.end_location.column},
        }

    return {
        "filename": diagnostic.path,
        "code": diagnostic.code,
        "message": diagnostic.message,
        **where(diagnostic),
        "related": [{"code": related.code, "message": related.message, **where(related)} for related in diagnostic.related],
    }


def _judged(finding: dict, executed: set[int], frames: list[dict]) -> bool:
    """Whether the target's run can speak for the finding: its own row ran, or lies in a frame
    Dynamo compiled. Its related rows do not count: a cause in another target's code (the loop
    that grows a list) says nothing of a target that calls the same compiled function well."""
    rows = set(_span(finding))
    if any(row in executed for row in rows):
        return True
    path = _finding_file(finding)
    return any(
        frame.get("file") and frame.get("first_line") and _same_file(path, frame["file"])
        and any(frame["first_line"] <= row <= (frame.get("last_line") or frame["first_line"]) for row in rows)
        for frame in frames
    )


def _finding_key(finding: dict) -> tuple:
    return (finding["filename"], finding["location"]["row"], finding["location"]["column"], finding["code"])


def _event_key(event: dict) -> tuple:
    if event["frame"] is None:
        return (event["kind"], event["target"])
    frame = event["frame"]
    return (event["kind"], event["file"], event["line"], frame["file"], frame["first_line"])


@dataclass
class RecompileTarget:
    key: str
    response: dict
    events: list[dict] = field(default_factory=list)  # each with "matched_by": codes
    findings: list[dict] = field(default_factory=list)  # each with "matched"

    @property
    def ok(self) -> bool:
        return self.response.get("status") == "ok"


@dataclass
class RecompileComparison:
    targets: list[RecompileTarget]
    matched: list[dict]
    false_positives: list[dict]
    covered: list[dict]
    misses: list[dict]
    annotations: list[dict]

    @property
    def errors(self) -> list[RecompileTarget]:
        return [t for t in self.targets if not t.ok]

    @property
    def agrees(self) -> bool:
        return not self.false_positives and not self.misses and not self.annotations


def compare_recompiles(
    results: list[tuple[str, dict]],
    lint: Callable[[str], list[dict]],
    annotated_files: Iterable[Path] = (),
    partly_run: frozenset[Path] = frozenset(),
    expectations: Callable[[str], dict[int, set[str]]] | None = None,
) -> RecompileComparison:
    """``lint(path)``: the TL7xx findings of a file, as `finding_json` gives them.
    ``expectations(text)``: a file's `# expect:` codes by line, for ``annotated_files``."""
    targets = []
    judged: dict[tuple, dict] = {}
    matched: dict[tuple, dict] = {}
    all_events: dict[tuple, dict] = {}
    covered: dict[tuple, dict] = {}
    for key, response in results:
        target = RecompileTarget(key, response)
        targets.append(target)
        if not target.ok:
            continue
        executed = {path: set(lines) for path, lines in response.get("executed", {}).items()}
        frames = [frame for frame in response.get("frames", ()) if frame.get("user")]
        files = {*executed, *(frame["file"] for frame in frames), response.get("targets_file")} - {None}
        findings = [finding for path in sorted(files) for finding in lint(path)]
        events = events_of(key, response)
        several_calls = response.get("calls", 0) > 1
        for event in events:
            codes = [finding["code"] for finding in findings if matches(finding, event)]
            target.events.append({**event, "matched_by": codes})
            all_events.setdefault(_event_key(event), event)
            if codes:
                covered[_event_key(event)] = {**event, "matched_by": codes}
        for finding in findings:
            hit = any(matches(finding, event) for event in events)
            if not hit and not (several_calls and _judged(finding, executed.get(finding["filename"], set()), frames)):
                continue
            target.findings.append({**finding, "matched": hit})
            judged[_finding_key(finding)] = finding
            if hit:
                matched[_finding_key(finding)] = finding
    order = lambda finding: _finding_key(finding)  # noqa: E731 - one sort key, used twice
    return RecompileComparison(
        targets,
        sorted(matched.values(), key=order),
        sorted((f for k, f in judged.items() if k not in matched), key=order),
        list(covered.values()),
        sorted((e for k, e in all_events.items() if k not in covered), key=lambda e: (e["file"] or "", e["line"] or 0)),
        _annotation_disagreements(annotated_files, lint, judged, matched, partly_run, expectations),
    )


def _annotation_disagreements(
    files: Iterable[Path],
    lint: Callable[[str], list[dict]],
    judged: dict[tuple, dict],
    matched: dict[tuple, dict],
    partly_run: frozenset[Path],
    expectations: Callable[[str], dict[int, set[str]]] | None,
) -> list[dict]:
    """Lines where the `# expect: TL7nn` annotations, the static findings and the runs do not
    all agree: an annotation without its finding or the reverse, an annotated finding no event
    bore out, or one no target judged (where every target of the file ran)."""
    if expectations is None:
        return []
    problems = []
    for path in files:
        real = str(path.resolve())
        expected = {
            row: {code for code in codes if is_recompile_code(code)}
            for row, codes in expectations(path.read_text(encoding="utf-8")).items()
        }
        expected = {row: codes for row, codes in expected.items() if codes}
        static: dict[int, list[dict]] = {}
        for finding in lint(real):
            static.setdefault(finding["location"]["row"], []).append(finding)
        for row in sorted(set(expected) | set(static)):
            want = expected.get(row, set())
            here = static.get(row, [])
            got = {finding["code"] for finding in here}
            borne_out = any(_finding_key(finding) in matched for finding in here)
            ran = any(_finding_key(finding) in judged for finding in here)
            unproven = bool(want) and not borne_out and (ran or path not in partly_run)
            if want != got or unproven:
                problems.append(
                    {"file": real, "line": row, "expected": sorted(want), "static": sorted(got), "recompiled": borne_out, "ran": ran}
                )
    return problems
