"""Measure torchlint's fixes on the corpus: the breaks that safe fixes, and safe plus unsafe
fixes, remove per library, every output they change, and every fix that left its break.

    python bench/bench_fix.py [--library NAME] [--jobs N] [--timeout S] [--cache-dir DIR]
                              [--truth PATH] [--json PATH] [--attribute]

The fixes are worked out as `bench_verify.py` lints: the measured files that ran or broke in the
recorded truth, with the entry points the targets declare. Each set of fixes (safe; safe plus
unsafe, each from the original code) is written into a temporary copy of the packages it changes,
imported before the installed site; the targets of every library whose recorded run went through a
changed file run again on the copy, after a fresh run on the original code that keeps each
target's eager output to compare with. An output that differs after the fixes is compared only
if the unfixed code, run once more, gives its first output again (a random draw, or an object
equal only to itself, does not). Libraries whose code no fix changed keep their recorded breaks
and run nothing.

With `--attribute`, each target whose output safe plus unsafe fixes changed runs again once per
rule whose fixes touched the code it ran, with that rule's fixes alone: the rules that change the
output by themselves are named in the report.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from _cache import cache_dir
from _corpus import BENCH, HALVES, CorpusError, Library, load_corpus, requirements
from _install import install
from _score import files_to_lint, lint_work
from _truth import Truth, TruthError, load, record
from bench_verify import TRUTH, _check_declarations, _selected
from torchlint.settings.config import Settings
from torchlint.fix.fixing import FixRun, fix_files
from torchlint.parse.line_map import original_line
from torchlint.verify.fix_run import CHANGED, NOT_COMPARED, SAME, TargetFix, reproduces
from torchlint.verify.fixed_copy import make_copy

# GraphMend (2025) reports removing 73% of the graph breaks in the transformers models it rewrote.
GRAPHMEND = 0.73
VARIANTS = {"safe": False, "safe+unsafe": True}


@dataclass
class Variant:
    """One set of fixes over the selected libraries, and what the targets did after it."""

    name: str
    fixes: FixRun
    # target -> its record after the fixes (the recorded or fresh one where nothing changed)
    after: dict[str, dict] = field(default_factory=dict)

    def changed(self, site: Path) -> dict[str, tuple[str, str]]:
        """Relative path -> (text before, text after) of each file the fixes changed."""
        return {Path(path).relative_to(site).as_posix(): texts for path, texts in self.fixes.changed.items()}


def _output_file(folder: Path, target: str) -> str:
    return str(folder / (hashlib.sha256(target.encode()).hexdigest()[:24] + ".pt"))


def _against_saved(outputs: Path):
    """The worker request's extra for a run compared with each target's output saved by the
    first run of the unfixed code."""
    return lambda key: {"expected_output": _output_file(outputs, key.rpartition("::")[2])}


def _runs_code(records: dict[str, dict], files: set[str]) -> bool:
    return any(file in files for r in records.values() for file in r["executed"])


def _one_rule(work: list[tuple[Path, Settings]], code: str) -> list[tuple[Path, Settings]]:
    """``work`` with rule ``code`` alone selected: its fixes and no other's."""
    return [(path, dataclasses.replace(settings, select=(code,), extend_select=(), ignore=())) for path, settings in work]


def _attribute(
    library: Library, fresh: Truth, variant: Variant, work: list, site: Path, measured: set[str], options, folder: Path,
    outputs: Path, copies: dict[str, Path | None],
) -> dict[str, list[str]]:
    """target -> the rules whose fixes, each applied alone, change its output, for the targets of
    ``library`` whose output ``variant`` changed. ``copies``: rule -> the fixed copy of its fixes
    alone (None: they change nothing), shared by the libraries."""
    changed = [n for n in sorted(fresh.targets) if _output(fresh.targets[n], variant.after[n]) == CHANGED]
    executed = {file for n in changed for file in fresh.targets[n]["executed"]}
    codes = sorted({
        code for path, found in variant.fixes.applied.items()
        if Path(path).relative_to(site).as_posix() in executed for _, code in found
    })
    blamed: dict[str, list[str]] = {n: [] for n in changed}
    for code in codes:
        if code not in copies:
            alone = fix_files(_one_rule(work, code), unsafe=True)
            texts = {path: text for path, (_, text) in alone.changed.items()}
            copies[code] = make_copy(texts, [], folder / f"only-{code}").roots[site] if texts else None
        if copies[code] is None:
            continue
        run = record([library], measured, site, jobs=options.jobs, timeout=options.timeout, previous=None, only=changed,
                     overlay=copies[code],
                     extra=_against_saved(outputs))
        for name in changed:
            if _output(fresh.targets[name], run.targets[name]) in (CHANGED, "fails after"):
                blamed[name].append(code)
    return blamed


def measure(options, corpus: list[Library], libraries: list[Library], site: Path, truth: Truth) -> dict:
    compiles = _check_declarations(libraries, site)
    recorded = {name: truth.targets.get(name) for name in compiles}
    missing = [name for name, r in recorded.items() if r is None]
    if missing:
        sys.exit(f"error: never recorded: {', '.join(missing)}; run bench_verify.py --refresh first")
    files = files_to_lint(recorded.values(), site)
    entry_points = tuple(sorted({f for functions in compiles.values() for f in functions}))
    work = lint_work(site, files, entry_points)
    seconds: dict[str, float] = {}
    variants = {}
    for name, unsafe in VARIANTS.items():
        step = time.perf_counter()
        variants[name] = Variant(name, fix_files(work, unsafe=unsafe))
        seconds[f"fix {name}"] = time.perf_counter() - step
    measured = {package for library in corpus for package in library.packages}
    by_library = {l.name: {n: r for n, r in recorded.items() if r["library"] == l.name} for l in libraries}
    before: dict[str, dict] = {}
    attribution: dict[str, list[str]] = {}
    alone: dict[str, Path | None] = {}
    with tempfile.TemporaryDirectory(prefix="torchlint-bench-fix-") as temporary:
        folder = Path(temporary).resolve()
        outputs = folder / "outputs"
        outputs.mkdir()
        copies = {}
        for variant in variants.values():
            if variant.fixes.changed:
                texts = {path: text for path, (_, text) in variant.fixes.changed.items()}
                copy = make_copy(texts, [], folder / variant.name.replace("+", "-"))
                if list(copy.roots) != [site] or copy.errors:
                    sys.exit(f"error: the fixed copy of {variant.name} is not one overlay of {site}: {copy.roots} {copy.errors}")
                copies[variant.name] = copy.roots[site]
        for library in libraries:
            records = by_library[library.name]
            touched = [v.name for v in variants.values() if _runs_code(records, set(v.changed(site)))]
            if not touched:
                before.update(records)
                for variant in variants.values():
                    variant.after.update(records)
                continue
            step = time.perf_counter()
            fresh = record([library], measured, site, jobs=options.jobs, timeout=options.timeout, previous=None, only=[],
                           extra=lambda key: {"save_output": _output_file(outputs, key.rpartition("::")[2])})
            before.update(fresh.targets)
            seconds[f"{library.name} before"] = time.perf_counter() - step
            for variant in variants.values():
                if variant.name not in touched:
                    variant.after.update(fresh.targets)
                    continue
                step = time.perf_counter()
                try:
                    fixed = record([library], measured, site, jobs=options.jobs, timeout=options.timeout, previous=None,
                                   only=[], overlay=copies[variant.name],
                                   extra=_against_saved(outputs))
                except TruthError as error:
                    # The fixed code cannot even load the targets file: every target fails after the fixes.
                    variant.after.update({name: {**fresh.targets[name], "status": "error", "error": str(error)}
                                          for name in fresh.targets})
                    continue
                variant.after.update(fixed.targets)
                seconds[f"{library.name} {variant.name}"] = time.perf_counter() - step
            # An output can differ without any fix (a random draw, an object equal only to itself):
            # the unfixed code runs once more, and what it does not reproduce is not compared.
            changed = sorted({name for variant in variants.values() if variant.name in touched for name in records
                              if _output(fresh.targets[name], variant.after[name]) == CHANGED})
            if changed:
                step = time.perf_counter()
                control = record([library], measured, site, jobs=options.jobs, timeout=options.timeout, previous=None,
                                 only=changed,
                                 extra=_against_saved(outputs))
                for name in changed:
                    fresh.targets[name]["reproduced"] = reproduces(control.targets[name])
                seconds[f"{library.name} control"] = time.perf_counter() - step
            if options.attribute and "safe+unsafe" in touched:
                step = time.perf_counter()
                attribution.update(_attribute(library, fresh, variants["safe+unsafe"], work, site, measured, options,
                                              folder, outputs, alone))
                seconds[f"{library.name} attribution"] = time.perf_counter() - step
    return {"before": before, "variants": variants, "seconds": seconds, "recorded": recorded, "attribution": attribution}


# -- the figures -----------------------------------------------------------------------


def _breaks(records: dict[str, dict], names: set[str]) -> int:
    return sum(len(r["breaks"]) for n, r in records.items() if n in names and r["status"] == "ok")


def _breaks_after(before: dict[str, dict], after: dict[str, dict], names: set[str]) -> int:
    """The breaks after the fixes of the targets that ran before them. A target that fails after
    the fixes keeps its breaks before: a crash proves no break removed."""
    return sum(len((after[n] if after[n]["status"] == "ok" else before[n])["breaks"]) for n in names)


def _output(before: dict, after: dict) -> str:
    """What the fixes did to a target's output, as `torchlint verify --fix` judges it."""
    if before["status"] != "ok":
        return "failed before"
    if after["status"] != "ok":
        return "fails after"
    # Without a comparison, nothing it ran was changed, so it did not run again.
    target = TargetFix("", before, after if "original_output" in after else None)
    output = target.output
    return f"{NOT_COMPARED} ({target.why_not_compared})" if output == NOT_COMPARED else output


def _left(variant: Variant, before: dict[str, dict], site: Path) -> list[dict]:
    """The fixes applied on a line where a target broke before the fixes and still breaks after."""
    changed = variant.changed(site)
    lines = {file: original_line(old, new) for file, (old, new) in changed.items()}
    left = []
    for path, applied in sorted(variant.fixes.applied.items()):
        file = Path(path).relative_to(site).as_posix()
        for row, code in applied:
            still = sorted({
                (name, b["gb_type"])
                for name, r in before.items()
                if any((bb["file"], bb["line"]) == (file, row) for bb in r["breaks"])
                for b in variant.after.get(name, {}).get("breaks", [])
                if b["file"] == file and lines[file](b["line"]) == row
            })
            if still:
                left.append({"file": file, "line": row, "code": code, "gb_types": sorted({g for _, g in still}),
                             "targets": sorted({n for n, _ in still})})
    return left


def figures(result: dict, libraries: list[Library], site: Path) -> dict:
    before, variants = result["before"], result["variants"]
    groups = {l.name: {l.name} for l in libraries}
    halves = {half: {l.name for l in libraries if l.half == half} for half in HALVES}
    groups.update({f"half {h}": names for h, names in halves.items() if names})
    groups["all"] = {l.name for l in libraries}
    rows = {}
    for group, names in groups.items():
        targets = {n for n, r in before.items() if r["library"] in names}
        row = {"targets": len(targets), "breaks_before": _breaks(before, targets)}
        for variant in variants.values():
            after = _breaks_after(before, variant.after, {n for n in targets if before[n]["status"] == "ok"})
            outputs = [_output(before[n], variant.after[n]) for n in sorted(targets)]
            row[variant.name] = {
                "breaks_after": after,
                "removed": row["breaks_before"] - after,
                "fraction_removed": (row["breaks_before"] - after) / row["breaks_before"] if row["breaks_before"] else None,
                "fixes": sum(1 for path, found in variant.fixes.applied.items()
                             if Path(path).relative_to(site).parts[0] in _packages(libraries, names) for _ in found),
                "output_changes": outputs.count(CHANGED),
                "fail_after": outputs.count("fails after"),
                "not_compared": sum(o.startswith(NOT_COMPARED) for o in outputs),
            }
        rows[group] = row
    lists = {}
    for variant in variants.values():
        lists[variant.name] = {
            "fixes_left_break": _left(variant, before, site),
            "outputs": {n: o for n in sorted(before) if (o := _output(before[n], variant.after[n])) != SAME},
            "fix_errors": [{"file": e.path, "message": e.message} for e in variant.fixes.errors],
        }
    return {"rows": rows, "lists": lists, "attribution": result["attribution"]}


def _packages(libraries: list[Library], names: set[str]) -> set[str]:
    return {p for l in libraries if l.name in names for p in l.packages}


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


def report(figs: dict, libraries: list[Library], torch_version: str | None) -> str:
    out = [
        f"torch {torch_version} · {len(libraries)} libraries · breaks in measured code, summed over targets",
        "",
        f"{'library':<28} {'targets':>7} {'before':>6}  {'safe':>5} {'removed':>7} {'fixes':>5} {'out':>3}"
        f"  {'s+u':>5} {'removed':>7} {'fixes':>5} {'out':>3}",
    ]
    for group, row in figs["rows"].items():
        safe, both = row["safe"], row["safe+unsafe"]
        if group in ("all",) or group.startswith("half "):
            out.append("")
        out.append(
            f"{group:<28} {row['targets']:>7} {row['breaks_before']:>6}  {safe['breaks_after']:>5} "
            f"{_pct(safe['fraction_removed']):>7} {safe['fixes']:>5} {safe['output_changes']:>3}  "
            f"{both['breaks_after']:>5} {_pct(both['fraction_removed']):>7} {both['fixes']:>5} {both['output_changes']:>3}"
        )
    out += ["", "before: breaks before any fix; safe / s+u: breaks after safe fixes / safe plus unsafe fixes;",
            "fixes: fixes applied in the library's packages; out: targets whose output changed beyond tolerance"]
    transformers = figs["rows"].get("transformers")
    if transformers is not None:
        fraction = transformers["safe+unsafe"]["fraction_removed"]
        verdict = "n/a" if fraction is None else ("above" if fraction > GRAPHMEND else "not above")
        out += ["", f"transformers, safe plus unsafe fixes: {_pct(fraction)} of breaks removed, {verdict} GraphMend's "
                    f"{GRAPHMEND:.0%}"]
    for name, lists in figs["lists"].items():
        out += ["", f"{name}: fixes that left their break:"]
        out += [f"  {i['code']} {i['file']}:{i['line']}: still {', '.join(i['gb_types'])} ({', '.join(i['targets'])})"
                for i in lists["fixes_left_break"]] or ["  none"]
        out += [f"{name}: outputs not the same after the fixes:"]
        out += [f"  {target}: {what}" for target, what in lists["outputs"].items()] or ["  none"]
        out += [f"  fixes dropped: {e['file']}: {e['message']}" for e in lists["fix_errors"]]
    if figs["attribution"]:
        out += ["", "outputs changed by safe plus unsafe fixes, and the rules whose fixes alone change them:"]
        out += [f"  {target}: {', '.join(codes) or 'none alone (only together)'}"
                for target, codes in sorted(figs["attribution"].items())]
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--library", action="append", default=[], metavar="NAME", help="only this library (repeatable)")
    parser.add_argument("--jobs", type=int, default=2, help="verify worker processes (default 2)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds one target may take")
    parser.add_argument("--cache-dir", metavar="DIR", help="the install is in DIR/site (default ~/.cache/torchlint-bench)")
    parser.add_argument("--truth", type=Path, default=TRUTH, help=f"the recorded truth (default {TRUTH.relative_to(BENCH.parent)})")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the figures and lists to this file")
    parser.add_argument("--attribute", action="store_true",
                        help="name the rules whose fixes alone change each output that changed")
    options = parser.parse_args()

    started = time.perf_counter()
    try:
        corpus = load_corpus()
        truth = load(options.truth)
    except (CorpusError, TruthError) as error:
        sys.exit(f"error: {error}")
    libraries = _selected(corpus, options.library)
    site = cache_dir(options.cache_dir) / "site"
    install(site, requirements(libraries))
    result = measure(options, corpus, libraries, site, truth)
    figs = figures(result, libraries, site)
    result["seconds"]["total"] = time.perf_counter() - started
    print(report(figs, libraries, truth.header.get("torch")))
    print("\nseconds: " + ", ".join(f"{k} {v:.1f}" for k, v in result["seconds"].items()))
    if options.json:
        payload = {"torch": truth.header.get("torch"), "graphmend": GRAPHMEND, **figs,
                   "seconds": {k: round(v, 1) for k, v in result["seconds"].items()}}
        options.json.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
