"""Measure torchlint's recompile rules (TL7xx) against what Dynamo does over ten calls of real code.

    python bench/bench_recompiles.py --record [--backend eager|inductor] [--only ID] [--jobs N]
    python bench/bench_recompiles.py [--reuse] [--backend B] [--library NAME] [--json PATH]

Each case of `recompile_corpus.toml` is a target of a case file in `recompiles/` that calls
compiled code ten times, changing what a training, sampling or evaluation loop changes. `--record`
runs them through `torchlint verify --recompiles` and keeps what Dynamo did in
`recompile_truth.json`; scoring lints the code the cases ran with `--select TL7` and matches the
findings with the recorded events, per half, per rule and per library.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from _cache import cache_dir
from _corpus import BENCH, HALVES, CorpusError, load_corpus, requirements
from _install import install
from _recompile_corpus import CASES, Case, CaseError, declared_targets, load_cases
from _recompile_score import (
    CAUSES,
    compare,
    entry_points,
    figures,
    files_to_lint,
    miss_cause,
    recompile_findings,
    responses,
    rule_of_event,
)
from _recompile_truth import RecompileTruthError, header, load, record, relative, save

TRUTH = BENCH / "recompile_truth.json"
BACKENDS = ("eager", "inductor")
# Inductor compiles each new graph for about a second on two cores (ten the first time in a
# process), so it records a stated subset unless asked for every case: the files where a float
# reaches an operation's Scalar argument, and one case in eight of the others (the first hex
# digit of the sha1 of its id is 0 or 1).
INDUCTOR_FILES = ("scalar_argument_cases.py", "optimizer_cases.py")


def inductor_subset(cases: list[Case]) -> list[Case]:
    return [case for case in cases
            if case.file.name in INDUCTOR_FILES or hashlib.sha1(case.id.encode()).hexdigest()[0] in "01"]


def _selected(cases: list[Case], options) -> list[Case]:
    known = {case.id for case in cases}
    unknown = [name for name in options.only if name not in known]
    if unknown:
        sys.exit(f"error: no case {', '.join(unknown)} in the case list")
    libraries = {case.library for case in cases}
    if set(options.library) - libraries:
        sys.exit(f"error: no cases of {', '.join(sorted(set(options.library) - libraries))}")
    return [case for case in cases
            if (not options.only or case.id in options.only) and (not options.library or case.library in options.library)]


def _requirements(cases: list[Case]) -> dict[str, list[str]]:
    """The pins of the corpus libraries the cases drive, as the break benchmark installs them."""
    try:
        libraries = [library for library in load_corpus() if library.name in {case.library for case in cases}]
    except CorpusError as error:
        sys.exit(f"error: {error}")
    return {library.name: sorted(requirements([library])) for library in libraries}


def _record(options, cases: list[Case], every: dict[Path, int], site: Path, truth: dict | None) -> dict:
    pins = _requirements(cases)
    truth = header(dict(truth or {}), {**(truth or {}).get("requirements", {}), **pins})
    backends = truth.setdefault("backends", {})
    for backend in options.backend or ["eager"]:
        chosen = inductor_subset(cases) if backend == "inductor" and not (options.every_case or options.only) else cases
        run = record(chosen, every, site, _measured(site), backend=backend, jobs=options.jobs, timeout=options.timeout)
        earlier = backends.get(backend, {})
        # Each recording of some cases is kept as a run; the cases it recorded replace theirs.
        runs = [*earlier.get("runs", []), {key: run[key] for key in ("recorded", "seconds", "jobs")} | {"cases": len(chosen)}]
        backends[backend] = {"torch": run["torch"], "runs": runs, "cases": {**earlier.get("cases", {}), **run["cases"]}}
        truth["torch"] = run["torch"]
        save(truth, options.truth)
    return truth


# -- the report --------------------------------------------------------------------------


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


COLUMNS = f"{'cases':>5} {'events':>6} {'found':>5} {'missed':>6} {'findings':>8} {'TP':>4} {'FP':>4}  {'P':>4} {'R':>4} {'F1':>4}"


def _row(f) -> str:
    return (f"{f.cases:>5} {f.events:>6} {f.covered:>5} {f.misses:>6} {f.findings:>8} {f.matched:>4} "
            f"{f.false_positives:>4}  {_fmt(f.precision):>4} {_fmt(f.recall):>4} {_fmt(f.f1):>4}")


def _where(file: str | None, line: int | None, site: Path) -> str:
    shown = relative(file, site) or "?"
    return f"{shown}:{line}" if line else shown


def _measured(site: Path) -> Callable[[str], bool]:
    """Case files and the code of the corpus libraries; not their dependencies (numpy, einops)."""
    try:
        packages = {package for library in load_corpus() for package in library.packages}
    except CorpusError as error:
        sys.exit(f"error: {error}")
    cases = str(CASES) + os.sep
    prefix = str(site) + os.sep

    def measured(path: str) -> bool:
        if path.startswith(cases):
            return True
        return path.startswith(prefix) and path[len(prefix):].split(os.sep, 1)[0] in packages

    return measured


def measured_counts(cases: list[Case], records: dict[str, dict]) -> dict[str, int]:
    """What the recording saw, in cases: a frame recompiled more than twice, the limit hit,
    outputs that differ from eager, nothing compiled, errors."""
    ok = [records[case.id] for case in cases if records[case.id]["status"] == "ok"]
    return {
        "cases": len(cases),
        "recompiled_over_2": sum(any(f["recompiles"] > 2 for f in r["frames"]) for r in ok),
        "limit_hit": sum(any(f["limit_hit"] for f in r["frames"]) for r in ok),
        "differs_from_eager": sum(r["outputs_match"] is False for r in ok),
        "compiled_nothing": sum(bool(r["compiled_nothing"]) for r in ok),
        "with_event": sum(bool(r["events"]) for r in ok),
        "errors": len(cases) - len(ok),
    }


def score_backend(cases: list[Case], run: dict, site: Path, backend: str) -> dict:
    """Every figure of one backend's recording, as plain data (the report prints it)."""
    records = run["cases"]
    absent = [case.id for case in cases if case.id not in records]
    if absent:
        sys.exit(f"error: cases never recorded under {backend} (run --record --backend {backend}):\n  " + "\n  ".join(absent))
    results = dict(responses(cases, records, site))
    files = files_to_lint(list(results.items()), _measured(site))
    findings = recompile_findings(site, files, entry_points({c.id: records[c.id] for c in cases}), backend)
    linted = set(files)
    by_id = {case.id: case for case in cases}
    groups = {half: [c for c in cases if c.half == half] for half in HALVES}
    groups = {**{half: group for half, group in groups.items() if group}, "all": cases}
    recordings = run.get("runs", [])
    out = {"backend": backend, "recorded": max((r["recorded"] for r in recordings), default=None),
           "seconds": round(sum(r["seconds"] for r in recordings), 1),
           "recordings": [f"{r['cases']} cases in {r['seconds']} s ({r['recorded']})" for r in recordings], "halves": {},
           "rules": {}, "libraries": {}, "misses": {}, "false_positives": {}, "measured": {}}
    for half, group in groups.items():
        comparison = compare(group, results, findings)
        out["halves"][half] = figures(comparison, len(group))
        out["measured"][half] = measured_counts(group, records)
        rules: dict[str, Counter] = {}
        for target in comparison.targets:
            case = by_id[target.key]
            for event in target.events:
                counts = rules.setdefault(rule_of_event(event, case), Counter())
                counts["events"] += 1
                counts["found"] += bool(event["matched_by"])
        for finding in comparison.matched + comparison.false_positives:
            counts = rules.setdefault(finding["code"], Counter())
            counts["findings"] += 1
        for finding in comparison.matched:
            rules[finding["code"]]["TP"] += 1
        out["rules"][half] = {rule: dict(counts) for rule, counts in sorted(rules.items())}
        out["misses"][half] = [
            {"case": event["target"], "kind": event["kind"], "file": relative(event["file"], site), "line": event["line"],
             "function": (event["frame"] or {}).get("function"), "recompiles": event.get("recompiles"),
             "limit_hit": event.get("limit_hit"), "hazard": by_id[event["target"]].hazard,
             "library": by_id[event["target"]].library,
             "cause": miss_cause(event, by_id[event["target"]], results, findings, linted)}
            for event in comparison.misses
        ]
        out["false_positives"][half] = [
            {"code": f["code"], "file": relative(f["filename"], site), "line": f["location"]["row"], "message": f["message"]}
            for f in comparison.false_positives
        ]
    for half in HALVES:
        for library in sorted({c.library for c in groups.get(half, [])}):
            group = [c for c in groups[half] if c.library == library]
            out["libraries"].setdefault(half, {})[library] = figures(compare(group, results, findings), len(group))
    return out


def report(scored: dict, truth: dict, site: Path) -> str:
    lines = [
        (f"torch {truth.get('torch')} · Python {truth.get('python')} · {truth.get('device')} · backend {scored['backend']} "
         f"· recorded {scored['recorded']}: {', then '.join(scored['recordings'])}"),
        "",
        "events: frames that recompiled more than twice (or hit the limit), outputs that differ from eager,",
        "nothing compiled; found/missed: events a TL7xx finding matched or not; findings: TL7xx findings on",
        "code that ran; TP/FP: matched an event or not",
        "",
        f"{'half':<12} {COLUMNS}",
    ]
    lines += [f"{half:<12} {_row(f)}" for half, f in scored["halves"].items()]
    lines += ["", "what the recording saw, in cases:",
              f"{'half':<12} {'cases':>5} {'>2 recompiles':>13} {'limit hit':>9} {'differs':>7} {'nothing':>7} {'event':>5} {'errors':>6}"]
    for half, m in scored["measured"].items():
        lines.append(f"{half:<12} {m['cases']:>5} {m['recompiled_over_2']:>13} {m['limit_hit']:>9} {m['differs_from_eager']:>7} "
                     f"{m['compiled_nothing']:>7} {m['with_event']:>5} {m['errors']:>6}")
    lines += ["", f"{'half':<12} {'rule':<8} {'events':>6} {'found':>5} {'findings':>8} {'TP':>4} {'FP':>4}"]
    for half, rules in scored["rules"].items():
        for rule, c in rules.items():
            lines.append(f"{half:<12} {rule:<8} {c.get('events', 0):>6} {c.get('found', 0):>5} {c.get('findings', 0):>8} "
                         f"{c.get('TP', 0):>4} {c.get('findings', 0) - c.get('TP', 0):>4}")
    lines += ["", f"{'half':<12} {'library':<18} {COLUMNS}"]
    for half, libraries in scored["libraries"].items():
        lines += [f"{half:<12} {library:<18} {_row(f)}" for library, f in libraries.items()]
    for half in HALVES:
        misses = scored["misses"].get(half, [])
        causes = Counter(m["cause"] for m in misses)
        lines += ["", f"misses, {half} ({len(misses)}): " + ", ".join(f"{c} {causes[c]}" for c in CAUSES if causes[c])]
        for m in sorted(misses, key=lambda m: (CAUSES.index(m["cause"]), m["case"])):
            what = (f"{m['function']} recompiled {m['recompiles']}{'+L' if m['limit_hit'] else ''}" if m["kind"] == "recompiles"
                    else m["kind"].replace("_", " "))
            lines.append(f"  [{m['cause']}] {m['case']} ({m['library']}, {m['hazard']}): {_where(m['file'], m['line'], site)}: {what}")
        fps = scored["false_positives"].get(half, [])
        lines += [f"false positives, {half} ({len(fps)}):"]
        lines += [f"  {f['code']} {f['file']}:{f['line']}: {f['message']}" for f in fps] or ["  none"]
    return "\n".join(lines)


def as_json(scored: dict) -> dict:
    def plain(value):
        if hasattr(value, "as_dict"):
            return value.as_dict()
        if isinstance(value, dict):
            return {key: plain(item) for key, item in value.items()}
        if isinstance(value, list):
            return [plain(item) for item in value]
        return value

    return plain(scored)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    when = parser.add_mutually_exclusive_group()
    when.add_argument("--record", action="store_true", help="run the cases through verify --recompiles and record the truth")
    when.add_argument("--reuse", action="store_true", help="never run Dynamo: score against the recorded truth only")
    parser.add_argument("--backend", action="append", choices=BACKENDS, default=[],
                        help="record (or score) this backend (repeatable; default: record eager, score every recorded one)")
    parser.add_argument("--only", action="append", default=[], metavar="ID", help="only this case, file.py::target (repeatable)")
    parser.add_argument("--library", action="append", default=[], metavar="NAME", help="only the cases of this library (repeatable)")
    parser.add_argument("--every-case", action="store_true", help="record every case under inductor, not the stated subset")
    parser.add_argument("--jobs", type=int, default=2, help="verify worker processes (default 2)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds one case may take")
    parser.add_argument("--cache-dir", metavar="DIR", help="the libraries' install folder is DIR/site (default ~/.cache/torchlint-bench)")
    parser.add_argument("--truth", type=Path, default=TRUTH, help=f"the recorded truth (default {TRUTH.relative_to(BENCH.parent)})")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the figures and lists to this file")
    options = parser.parse_args()

    try:
        every_case = load_cases()
        every = {file: len(declared_targets(file)) for file in {case.file for case in every_case}}
    except CaseError as error:
        sys.exit(f"error: {error}")
    cases = _selected(every_case, options)
    site = cache_dir(options.cache_dir) / "site"
    if not options.reuse:
        pins = _requirements(cases)
        install(site, sorted({pin for found in pins.values() for pin in found}))
    truth = None
    try:
        truth = load(options.truth)
    except RecompileTruthError as error:
        if options.reuse:
            sys.exit(f"error: {error}")
    if options.record or truth is None:
        truth = _record(options, cases, every, site, truth)
    started = time.perf_counter()
    backends = options.backend or sorted(truth["backends"])
    scored = {}
    for backend in backends:
        run = truth["backends"].get(backend)
        if run is None:
            sys.exit(f"error: nothing recorded under {backend}; run --record --backend {backend}")
        # Inductor may have been recorded on a subset: it is scored on the cases it holds.
        here = cases if backend == "eager" or options.only else [case for case in cases if case.id in run["cases"]]
        if not here:
            print(f"no case of this selection was recorded under {backend}\n")
            continue
        scored[backend] = score_backend(here, run, site, backend)
        print(report(scored[backend], truth, site))
        print()
    print(f"scored in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    if options.json:
        options.json.write_text(json.dumps(as_json(scored), indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
