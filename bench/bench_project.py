"""Time the `torchlint check` command on a whole package against a bare parse of its files.

    python bench/bench_project.py [--transformers-version V] [--cache-dir DIR] [--repeat R] [--json PATH]

What users run, end to end: `torchlint check <package>` on every Python file of a pinned
transformers release (discovery, the project's cross-file analysis, rules, report), with one
worker and with two, each from an empty cache; the -j 2 run again (what a warm re-run costs,
read from the cache); and `torchlint check <one file>` after that file changed, ten times
with a new edit each (what pre-commit and editors run: the rest of the project comes from
the cache; the median counts), whose findings for that file must equal the whole run's, and the same after an edit that adds a function
(the project is solved again). The floor is `libcst.parse_module` over the same files in
this process, on one core; for the one-file run, a fresh Python importing libcst and
parsing that file.
"""

from __future__ import annotations

import argparse
import compileall
import gc
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import libcst

import torchlint

from _cache import cache_dir
from bench_check import DEFAULT_TRANSFORMERS, fetch_wheel

PACKAGE_PREFIX = "transformers/"
EXTRACTED_MARKER = ".extracted"
# The model file a pre-commit run is timed on: one big, typical model.
CHANGED_FILE = "models/llama/modeling_llama.py"
# Runs after an edit of that file; the median counts.
SINGLE_RUNS = 10
# The targets: -j 1 over the bare parse, -j 1 over -j 2, a warm re-run over the cold -j 2 run,
# the one-file run's median seconds, and the peak memory of any run.
TARGET_J1_TO_PARSE = 1.8
TARGET_SPEEDUP_J2 = 1.8
TARGET_AGAIN_TO_COLD = 0.02
TARGET_ONE_FILE_SECONDS = 0.3
TARGET_PEAK_MIB = 300


def extract_package(wheel: Path, destination: Path) -> Path:
    """Unzips every `transformers/**.py`; returns the package folder."""
    marker = destination / EXTRACTED_MARKER
    if not marker.is_file():
        with zipfile.ZipFile(wheel) as archive:
            members = [n for n in archive.namelist() if n.startswith(PACKAGE_PREFIX) and n.endswith(".py")]
            archive.extractall(destination, members)
        marker.write_text(f"{wheel.name}\n{len(members)} files\n", encoding="utf-8")
    return destination / PACKAGE_PREFIX


def time_start_and_parse(path: Path, cwd: Path) -> float:
    """Seconds for a fresh Python to import libcst and parse one file: what any libcst-based
    check of a changed file costs at the least."""
    code = f"import libcst; libcst.parse_module(open({str(path)!r}, encoding='utf-8').read())"
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], cwd=cwd, check=True)
    return time.perf_counter() - started


def time_parse(files: list[Path]) -> tuple[float, int]:
    """Seconds to parse every file (read and decoded before the clock starts), and the lines."""
    texts = [path.read_bytes().decode("utf-8") for path in files]
    gc.collect()
    started = time.perf_counter()
    for text in texts:
        try:
            libcst.parse_module(text)
        except libcst.ParserSyntaxError:
            pass
    return time.perf_counter() - started, sum(text.count("\n") for text in texts)


@dataclass
class CommandRun:
    seconds: float
    peak_mib: float
    findings: int
    exit_code: int
    # (file, row, column, code) of each finding
    found: list = field(default_factory=list, repr=False)

    def figures(self) -> dict:
        return {"seconds": round(self.seconds, 2), "peak_mib": round(self.peak_mib), "findings": self.findings,
                "exit_code": self.exit_code}

    def of_file(self, name: str) -> list:
        return sorted(found for found in self.found if found[0].endswith(name))


def _environment() -> dict[str, str]:
    """The bench's own settings only, never the user's."""
    return {k: v for k, v in os.environ.items() if not k.startswith("TORCHLINT_")}


# Starts a command from a fresh, small Python and reports its seconds, exit code and peak memory.
# Linux counts in a child's peak the memory of the process it was forked from, and this script
# holds every parsed file: started from here directly, each command would report at least that.
_MEASURED_RUN = """
import json, os, sys, time
argv, cwd, env = json.loads(sys.stdin.read())
os.chdir(cwd)
started = time.perf_counter()
pid = os.posix_spawn(argv[0], argv, env, file_actions=[(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)])
_, status, usage = os.wait4(pid, 0)
print(json.dumps([time.perf_counter() - started, os.waitstatus_to_exitcode(status), usage.ru_maxrss]))
"""


def run_check(arguments: list[str], cwd: Path) -> CommandRun:
    """One `torchlint check` process; its wall time and the peak memory of it and its workers."""
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "report.json"
        command = [sys.executable, "-m", "torchlint", "check", *arguments, "--output-format", "json",
                   "-o", str(report), "--exit-zero", "--quiet"]
        request = json.dumps([command, str(cwd), _environment()])
        measured = subprocess.run([sys.executable, "-c", _MEASURED_RUN], input=request, capture_output=True,
                                  text=True, check=True)
        seconds, exit_code, maxrss = json.loads(measured.stdout)
        found = json.loads(report.read_text(encoding="utf-8")) if report.is_file() else None
    peak = maxrss / (1024 * 1024) if sys.platform == "darwin" else maxrss / 1024
    listed = [(f["filename"], f["location"]["row"], f["location"]["column"], f["code"]) for f in found or ()]
    return CommandRun(seconds, peak, len(found) if found is not None else -1, exit_code, listed)


def best(runs: list[CommandRun]) -> CommandRun:
    return min(runs, key=lambda run: run.seconds)


def median(runs: list[CommandRun]) -> CommandRun:
    return sorted(runs, key=lambda run: run.seconds)[len(runs) // 2]


def verdict(met: bool) -> str:
    return "met" if met else "MISSED"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--transformers-version", default=DEFAULT_TRANSFORMERS)
    parser.add_argument("--cache-dir", metavar="DIR", help="where the wheel and the package go (default ~/.cache/torchlint-bench)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each measurement; the best counts")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the figures to this file")
    options = parser.parse_args()

    cache = cache_dir(options.cache_dir)
    wheel = fetch_wheel(options.transformers_version, cache)
    package = extract_package(wheel, cache / f"transformers-{options.transformers_version}-package")
    project = package.parent
    files = sorted(package.rglob("*.py"))
    changed = package / CHANGED_FILE
    original = changed.read_bytes()

    # An installed torchlint has its bytecode (pip compiles it); a checkout run with
    # PYTHONDONTWRITEBYTECODE would compile every module at each start instead.
    compileall.compile_dir(Path(torchlint.__file__).parent, quiet=1)
    parse, one, two, again, single, reshaped, floor = [], [], [], [], [], [], []
    lines = 0
    try:
        for _ in range(options.repeat):
            seconds, lines = time_parse(files)
            parse.append(seconds)
            with tempfile.TemporaryDirectory() as caches:
                # Each cold run starts from an empty cache (and fills it, as a user's first run does).
                one.append(run_check(["transformers", "-j", "1", "--cache-dir", f"{caches}/one"], project))
                warm = ["--cache-dir", f"{caches}/two"]
                two.append(run_check(["transformers", "-j", "2", *warm], project))
                again.append(run_check(["transformers", "-j", "2", *warm], project))
                # One edited file, as pre-commit passes it after a commit that touched only that
                # file: the rest of the project comes from the cache. Each of the runs edits the
                # file anew, so none finds its own last answer.
                for edit in range(SINGLE_RUNS):
                    changed.write_bytes(original + f"\n# edited {edit}\n".encode())
                    single.append(run_check([str(changed.relative_to(project)), *warm], project))
                # An edit that changes what the file tells the project (a new function): the
                # project is solved again, from the cache.
                changed.write_bytes(original + b"\n\ndef _edited(x):\n    return x\n")
                reshaped.append(run_check([str(changed.relative_to(project)), *warm], project))
                changed.write_bytes(original)
                floor.append(time_start_and_parse(changed, project))
    finally:
        changed.write_bytes(original)

    parse_best = min(parse)
    one_file = median(single)
    peak = max(run.peak_mib for run in (*one, *two, *again, *single, *reshaped))
    figures = {
        "transformers": options.transformers_version,
        "python": platform.python_version(),
        "files": len(files),
        "lines": lines,
        "parse_seconds": round(parse_best, 2),
        "check_j1": best(one).figures(),
        "check_j2": best(two).figures(),
        "check_j2_again": best(again).figures(),
        "check_one_changed_file_median": one_file.figures(),
        "check_one_changed_file_seconds": sorted(round(run.seconds, 3) for run in single),
        "one_changed_file_same_findings": all(run.of_file(CHANGED_FILE) == best(two).of_file(CHANGED_FILE) for run in single),
        "check_one_file_new_function": best(reshaped).figures(),
        "start_and_parse_one_file_seconds": round(min(floor), 2),
        "ratio_one_file_to_start_and_parse": round(one_file.seconds / min(floor), 2),
        "ratio_j1_to_parse": round(best(one).seconds / parse_best, 2),
        "speedup_j2": round(best(one).seconds / best(two).seconds, 2),
        "ratio_again_to_cold": round(best(again).seconds / best(two).seconds, 4),
        "peak_mib": round(peak),
    }
    print(f"transformers {options.transformers_version}: {len(files)} files, {lines:,} lines, "
          f"Python {platform.python_version()}, best of {options.repeat}")
    print(f"{'measurement':<40} {'seconds':>8} {'peak MiB':>9} {'findings':>8}")
    print(f"{'libcst.parse_module, one core':<40} {parse_best:>8.1f}")
    for label, run in [("torchlint check -j 1", best(one)), ("torchlint check -j 2", best(two)),
                       ("torchlint check -j 2, run again", best(again)),
                       (f"check {CHANGED_FILE}, median of {len(single)}", one_file),
                       ("  the same, after a new function", best(reshaped))]:
        print(f"{label:<40} {run.seconds:>8.2f} {run.peak_mib:>9.0f} {run.findings:>8}")
    print(f"\n-j 1 / parse: {figures['ratio_j1_to_parse']:.2f}x "
          f"(target at most {TARGET_J1_TO_PARSE}x: {verdict(figures['ratio_j1_to_parse'] <= TARGET_J1_TO_PARSE)})")
    print(f"-j 1 / -j 2: {figures['speedup_j2']:.2f}x "
          f"(target at least {TARGET_SPEEDUP_J2}x: {verdict(figures['speedup_j2'] >= TARGET_SPEEDUP_J2)})")
    print(f"run again / first -j 2 run: {figures['ratio_again_to_cold']:.4f}x "
          f"(target at most {TARGET_AGAIN_TO_COLD}x: {verdict(figures['ratio_again_to_cold'] <= TARGET_AGAIN_TO_COLD)})")
    print(f"one changed file: median {one_file.seconds:.3f} s of {len(single)} "
          f"(target at most {TARGET_ONE_FILE_SECONDS} s: {verdict(one_file.seconds <= TARGET_ONE_FILE_SECONDS)}); "
          f"the same findings for it as the whole run: {figures['one_changed_file_same_findings']}")
    print(f"  a fresh Python importing libcst and parsing that file: {min(floor):.2f} s; the check is "
          f"{figures['ratio_one_file_to_start_and_parse']:.2f}x that")
    print(f"peak memory: {peak:.0f} MiB (target under {TARGET_PEAK_MIB} MiB: {verdict(peak < TARGET_PEAK_MIB)})")
    if options.json:
        options.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
