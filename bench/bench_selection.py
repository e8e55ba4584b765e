"""Selection independence on real code: for every rule code, `--select CODE` prints exactly
the whole run's findings of that code, and `--ignore CODE` exactly the others'.

    python bench/bench_selection.py [--libraries diffusers,x_transformers,torchmetrics]
                                    [--cache-dir DIR] [--json PATH]

Each library of the benchmark's corpus (installed as bench_verify.py installs it) is checked
whole with `torchlint check <package> --output-format json`, then once per code with
`--select CODE` and once with `--ignore CODE`, all through the command. The whole run fills
a cache folder of its own; the selections then reuse its analyses and its solve (selection
only filters what is printed), so each costs a fraction of the first. Any difference is
printed and makes the exit code 1.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _cache import cache_dir
from _corpus import load_corpus, requirements
from _install import install

DEFAULT_LIBRARIES = ("diffusers", "x_transformers", "torchmetrics")


def every_code() -> list[str]:
    from torchlint.rules import all_rules

    return sorted({rule.code for rule in all_rules()})


def check(site: Path, package: str, cache: Path, *options: str) -> list[tuple]:
    """The findings `torchlint check PACKAGE OPTIONS --output-format json` prints, as rows."""
    command = [
        sys.executable, "-m", "torchlint", "check", package, "--output-format", "json",
        "--cache-dir", str(cache), "--exit-zero", *options,
    ]
    done = subprocess.run(command, cwd=site, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"error: {' '.join(command)} failed (exit {done.returncode}):\n{done.stderr}")
    return [
        (f["filename"], f["location"]["row"], f["location"]["column"], f["code"], f["message"])
        for f in json.loads(done.stdout)
    ]


def compare(site: Path, package: str, codes: list[str], cache: Path) -> dict:
    started = time.perf_counter()
    whole = check(site, package, cache)
    whole_seconds = time.perf_counter() - started
    problems = []
    started = time.perf_counter()
    for code in codes:
        mine = [row for row in whole if row[3] == code]
        others = [row for row in whole if row[3] != code]
        if (selected := check(site, package, cache, "--select", code)) != mine:
            problems.append(f"--select {code}: {len(selected)} findings, the whole run has {len(mine)}")
        if (ignored := check(site, package, cache, "--ignore", code)) != others:
            problems.append(f"--ignore {code}: {len(ignored)} findings, the whole run has {len(others)} of other codes")
    per_selection = (time.perf_counter() - started) / (2 * len(codes))
    return {
        "library": package,
        "findings": len(whole),
        "codes_found": sorted({row[3] for row in whole}),
        "whole_run_seconds": whole_seconds,
        "seconds_per_selection": per_selection,
        "problems": problems,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--libraries", default=",".join(DEFAULT_LIBRARIES), help="libraries of bench/corpus.toml")
    parser.add_argument("--cache-dir", metavar="DIR", help="the install goes in DIR/site (default ~/.cache/torchlint-bench)")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the figures to this JSON file")
    options = parser.parse_args(argv)
    corpus = {library.name: library for library in load_corpus()}
    names = [name.strip() for name in options.libraries.split(",") if name.strip()]
    unknown = [name for name in names if name not in corpus]
    if unknown:
        parser.error(f"not in bench/corpus.toml: {', '.join(unknown)}")
    site = cache_dir(options.cache_dir) / "site"
    install(site, requirements([corpus[name] for name in names]))
    codes = every_code()
    results = []
    for name in names:
        with tempfile.TemporaryDirectory(prefix="torchlint-selection-") as cache:
            result = compare(site, name, codes, Path(cache))
        results.append(result)
        verdict = "identical" if not result["problems"] else f"{len(result['problems'])} DIFFERENCES"
        print(
            f"{name}: {result['findings']} findings of {len(result['codes_found'])} codes; "
            f"{len(codes)} codes x --select/--ignore: {verdict} "
            f"(whole run {result['whole_run_seconds']:.1f} s, each selection {result['seconds_per_selection']:.2f} s)"
        )
        for problem in result["problems"]:
            print(f"    {problem}")
    if options.json is not None:
        options.json.write_text(json.dumps({"codes": codes, "libraries": results}, indent=2) + "\n", encoding="utf-8")
    return 1 if any(result["problems"] for result in results) else 0


if __name__ == "__main__":
    sys.exit(main())
