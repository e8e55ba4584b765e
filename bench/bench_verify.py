"""Measure torchlint's static findings against TorchDynamo on real third-party code.

    python bench/bench_verify.py [--refresh | --reuse] [--library NAME] [--only TARGET]
                                 [--jobs N] [--cache-dir DIR] [--truth PATH] [--json PATH]

Installs the libraries of `corpus.toml` at their pins outside the repository, records what
Dynamo does on every target of `targets/*.py` (the ground truth, kept in `ground_truth.json`),
lints the code that ran with the entry points the targets declare, and scores the findings
per break site, per target, per library, per rule family and per half of the corpus.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from _cache import cache_dir
from _corpus import BENCH, HALVES, CorpusError, Library, declared_compiles, load_corpus, missing_definitions, requirements
from _install import install
from _score import Counts, Scores, Site, files_to_lint, score, static_findings
from _truth import Truth, TruthError, lines_of, load, record, save, stale_for

TRUTH = BENCH / "ground_truth.json"


def _selected(libraries: list[Library], names: list[str]) -> list[Library]:
    unknown = set(names) - {library.name for library in libraries}
    if unknown:
        sys.exit(f"error: no library {', '.join(sorted(unknown))} in the corpus")
    return [library for library in libraries if not names or library.name in names]


def _check_declarations(libraries: list[Library], site: Path) -> dict[str, tuple[str, ...]]:
    """Target -> declared compiled functions, each checked against the installed code."""
    compiles: dict[str, tuple[str, ...]] = {}
    problems = []
    for library in libraries:
        for name, functions in declared_compiles(library).items():
            if name in compiles:
                problems.append(f"{library.targets_file}: target {name} is declared twice in the corpus")
            compiles[name] = functions
            problems += [f"{library.targets_file}: {name}: {why}" for f in functions if (why := missing_definitions(f, site))]
    if problems:
        sys.exit("error: declared entry points that match no definition:\n  " + "\n  ".join(problems))
    return compiles


def _truth(options, corpus: list[Library], libraries: list[Library], names: list[str], site: Path) -> Truth:
    """The recorded truth for these targets, recording it first where it is missing or stale."""
    previous = None
    try:
        previous = load(options.truth)
    except TruthError as error:
        if options.reuse:
            sys.exit(f"error: {error}")
    to_record = libraries
    if previous is not None and not options.refresh:
        stale = stale_for(previous, libraries)
        absent = [name for name in names if name not in previous.targets]
        if options.reuse and (stale or absent):
            sys.exit("error: the recorded truth does not match the corpus; run with --refresh:\n  "
                     + "\n  ".join(stale + [f"target {name} was never recorded" for name in absent]))
        to_record = [
            library for library in libraries
            if stale_for(previous, [library]) or any(n in absent for n in declared_compiles(library))
        ]
    if not to_record:
        return previous
    measured = {package for library in corpus for package in library.packages}
    truth = record(to_record, measured, site, jobs=options.jobs, timeout=options.timeout, previous=previous,
                   only=options.only)
    save(truth, options.truth)
    return truth


# -- the report --------------------------------------------------------------------


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


COLUMNS = f"{'targets':>7} {'sites':>5} {'found':>5} {'missed':>6} {'findings':>8} {'TP':>4} {'FP':>4} {'unrun':>5}  {'P':>4} {'R':>4} {'F1':>4}"


def _row(counts: Counts) -> str:
    return (
        f"{counts.targets or '':>7} {counts.sites:>5} {counts.covered:>5} {counts.misses:>6} {counts.findings:>8} "
        f"{counts.matched:>4} {counts.false_positives:>4} {counts.unexercised:>5}  "
        f"{_fmt(counts.precision):>4} {_fmt(counts.recall):>4} {_fmt(counts.f1):>4}"
    )


def _halves(libraries: list[Library]) -> dict[str, set[str]]:
    halves = {half: {l.name for l in libraries if l.half == half} for half in HALVES}
    return {**{half: names for half, names in halves.items() if names}, "all": {l.name for l in libraries}}


def _source_line(site: Path, file: str, line: int) -> str:
    try:
        return (site / file).read_text(encoding="utf-8", errors="replace").splitlines()[line - 1].strip()
    except (OSError, IndexError):
        return ""


# Why a site was missed, from the cheapest fix to the dearest.
NO_RULE = "no rule"  # no rule names the break's GB type
REGION = "region"  # found once every function that ran is compiled: region inference missed it
SILENT = "rule silent"  # compiled code, a rule names the GB type, and it did not fire
UNSPLIT = "rule"  # a rule names the GB type; without --traced, region and rule misses are not told apart
CAUSES = (NO_RULE, REGION, SILENT, UNSPLIT)


def miss_causes(misses: list[Site], traced: Scores | None) -> dict[tuple[str, int], str]:
    """Why each site was missed: no rule for it, region inference, or the rule itself."""
    found_when_traced = set() if traced is None else {(s.file, s.line) for s in traced.sites if s.matched_by}
    causes = {}
    for miss in misses:
        key = (miss.file, miss.line)
        if miss.rule is None:
            causes[key] = NO_RULE
        elif traced is None:
            causes[key] = UNSPLIT
        else:
            causes[key] = REGION if key in found_when_traced else SILENT
    return causes


def report(truth: Truth, libraries: list[Library], scores: Scores, traced: Scores | None, site: Path) -> str:
    header = truth.header
    out = [
        f"torch {header.get('torch')} · Python {header.get('python')} · {header.get('device')} · "
        f"backend {header.get('backend')} · truth recorded {header.get('recorded')}",
        f"{len(libraries)} libraries, {len(scores.targets)} targets, {len(scores.sites)} break sites",
        "",
        "sites: distinct lines where Dynamo broke; found/missed: sites a finding matched or not;",
        "findings: distinct findings on code that ran; TP/FP: matched a break or not; unrun: findings on code no target ran",
        "",
        f"{'half':<14} {COLUMNS}",
    ]
    halves = _halves(libraries)
    out += [f"{half:<14} {_row(scores.counts(names))}" for half, names in halves.items()]
    out += ["", f"{'half':<12} {'library':<26} {COLUMNS}"]
    for library in sorted(libraries, key=lambda l: (HALVES.index(l.half), l.name)):
        out.append(f"{library.half:<12} {library.name:<26} {_row(scores.counts({library.name}))}")
    families = scores.families()
    out += ["", f"{'half':<14} {'family':<6} {COLUMNS}"]
    for half, names in halves.items():
        out += [f"{half:<14} {family:<6} {_row(scores.counts(names, family))}" for family in families]
    misses = [s for s in scores.sites if not s.matched_by]
    causes = miss_causes(misses, traced)
    out += ["", "misses by cause (no rule: none names the GB type; region: found once every function that ran",
            "is compiled; rule silent: compiled code, and the rule that names the GB type did not fire)",
            f"{'cause':<14} " + " ".join(f"{half:>11}" for half in halves)]
    for cause in CAUSES:
        counts = [sum(causes[m.file, m.line] == cause and scores.library(m.file).name in names for m in misses)
                  for names in halves.values()]
        if any(counts):
            out.append(f"{cause:<14} " + " ".join(f"{n:>11}" for n in counts))
    if traced is not None:
        out += ["", "with every function that ran taken as compiled (the rules apart from region inference):",
                f"{'half':<14} {COLUMNS}"]
        out += [f"{half:<14} {_row(traced.counts(names))}" for half, names in halves.items()]
    out += ["", f"{'target':<36} {'library':<22} {'s':>5} {'sites':>5} {'found':>5} {'findings':>8} {'TP':>4} {'FP':>4}"
                f"  {'P':>4} {'R':>4} {'F1':>4}  fullgraph"]
    for target in scores.targets:
        c, rec = target.counts, target.record
        if rec["status"] != "ok":
            out.append(f"{target.name:<36} {target.library:<22} error: {rec['error']}")
            continue
        verdict = "compiles" if (rec.get("fullgraph") or {}).get("ok") else "breaks"
        out.append(f"{target.name:<36} {target.library:<22} {rec['seconds']:>5.1f} {c.sites:>5} {c.covered:>5} "
                   f"{c.findings:>8} {c.matched:>4} {c.false_positives:>4}  {_fmt(c.precision):>4} {_fmt(c.recall):>4} "
                   f"{_fmt(c.f1):>4}  {verdict}")
    out += ["", "false positives (the code ran, torchlint reported it, Dynamo did not break there), by rule:"]
    fps = [f for f in scores.exercised if not f.matched]
    for finding in sorted(fps, key=lambda f: (f.diagnostic.code, f.file, f.diagnostic.location.row)):
        d = finding.diagnostic
        out.append(f"  {d.code} {finding.file}:{d.location.row}: {d.message}")
        out.append(f"        | {_source_line(site, finding.file, d.location.row)}")
    out += ["  none"] * (not fps)
    out += ["", "misses (Dynamo broke, nothing reported), by cause and by the rule that should have fired:"]
    for cause in CAUSES:
        group = [miss for miss in misses if causes[miss.file, miss.line] == cause]
        if not group:
            continue
        out.append(f"  {cause} ({len(group)}):")
        for miss in sorted(group, key=lambda s: (s.rule or "~", sorted(s.gb_types), s.file, s.line)):
            out.append(f"    {miss.rule or 'no rule'} {miss.file}:{miss.line}: {', '.join(sorted(miss.gb_types))} "
                       f"({', '.join(sorted(filter(None, miss.gb_ids))) or 'no id'})")
            out.append(f"          | {_source_line(site, miss.file, miss.line)}")
    out += ["  none"] * (not misses)
    errors = [t for t in scores.targets if t.record["status"] != "ok"]
    out += [""] * bool(errors) + [f"error in {t.name}: {t.record['error']}" for t in errors]
    return "\n".join(out)


def as_json(truth: Truth, libraries: list[Library], scores: Scores, traced: Scores | None, seconds: dict) -> dict:
    halves = _halves(libraries)
    misses = [s for s in scores.sites if not s.matched_by]
    causes = miss_causes(misses, traced)

    def finding_json(finding) -> dict:
        d = finding.diagnostic
        return {"file": finding.file, "line": d.location.row, "code": d.code, "message": d.message,
                "library": scores.library(finding.file).name, "targets": sorted(finding.targets)}

    return {
        "torch": truth.header.get("torch"),
        "requirements": {l.name: requirements([l]) for l in libraries},
        "seconds": {k: round(v, 1) for k, v in seconds.items()},
        "halves": {half: scores.counts(names).as_dict() for half, names in halves.items()},
        "libraries": {l.name: {"half": l.half, "domain": l.domain, "style": l.style, **scores.counts({l.name}).as_dict()}
                      for l in libraries},
        "families": {half: {family: scores.counts(names, family).as_dict() for family in scores.families()}
                     for half, names in halves.items()},
        "traced": None if traced is None else {half: traced.counts(names).as_dict() for half, names in halves.items()},
        "targets": {t.name: {"library": t.library, "status": t.record["status"], **t.counts.as_dict()} for t in scores.targets},
        "false_positives": [finding_json(f) for f in scores.exercised if not f.matched],
        "misses": [
            {"file": s.file, "line": s.line, "gb_types": sorted(s.gb_types), "gb_ids": sorted(filter(None, s.gb_ids)),
             "rule": s.rule, "family": s.family, "library": scores.library(s.file).name, "targets": sorted(s.targets),
             "cause": causes[s.file, s.line]}
            for s in misses
        ],
        "unexercised": [finding_json(f) for f in scores.unexercised],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    when = parser.add_mutually_exclusive_group()
    when.add_argument("--refresh", action="store_true", help="record the truth again, running every target through Dynamo")
    when.add_argument("--reuse", action="store_true", help="never run Dynamo: score against the recorded truth only")
    parser.add_argument("--library", action="append", default=[], metavar="NAME", help="only this library (repeatable)")
    parser.add_argument("--only", action="append", default=[], metavar="TARGET", help="only this target (repeatable)")
    parser.add_argument("--jobs", type=int, default=2, help="verify worker processes (default 2)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds one target may take")
    parser.add_argument("--cache-dir", metavar="DIR", help="the install goes in DIR/site (default ~/.cache/torchlint-bench)")
    parser.add_argument("--truth", type=Path, default=TRUTH, help=f"the recorded truth (default {TRUTH.relative_to(BENCH.parent)})")
    parser.add_argument("--traced", action="store_true", help="also score a static run that takes every function that ran as compiled")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the figures and lists to this file")
    options = parser.parse_args()

    started = time.perf_counter()
    try:
        corpus = load_corpus()
    except CorpusError as error:
        sys.exit(f"error: {error}")
    libraries = _selected(corpus, options.library)
    site = cache_dir(options.cache_dir) / "site"
    seconds = {"install": install(site, requirements(libraries))}
    compiles = _check_declarations(libraries, site)
    if options.only and not set(options.only) <= set(compiles):
        sys.exit(f"error: no target {', '.join(sorted(set(options.only) - set(compiles)))} in these libraries")
    names = [n for n in compiles if not options.only or n in options.only]
    step = time.perf_counter()
    truth = _truth(options, corpus, libraries, names, site)
    seconds["truth"] = time.perf_counter() - step
    records = {name: truth.targets[name] for name in names}

    step = time.perf_counter()
    files = files_to_lint(records.values(), site)
    entry_points = tuple(sorted({f for name in names for f in compiles[name]}))
    scores = score(records, static_findings(site, files, entry_points), libraries, site)
    traced = None
    if options.traced:
        ran: dict[str, set[int]] = {}
        for r in records.values():
            for file, lines in r["executed"].items():
                ran.setdefault(str(site / file), set()).update(lines_of(lines))
        traced = score(records, static_findings(site, files, entry_points, ran), libraries, site)
    seconds["score"] = time.perf_counter() - step
    seconds["total"] = time.perf_counter() - started
    print(report(truth, libraries, scores, traced, site))
    print("\nseconds: " + ", ".join(f"{k} {v:.1f}" for k, v in seconds.items()))
    if options.json:
        options.json.write_text(json.dumps(as_json(truth, libraries, scores, traced, seconds), indent=2) + "\n",
                                encoding="utf-8")


if __name__ == "__main__":
    main()
