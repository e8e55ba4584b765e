"""Time torchlint against a bare libcst parse over the model code of a pinned transformers.

    python bench/bench_check.py [--files N] [--transformers-version V] [--repeat R] [--json PATH]

Parsing is the floor: torchlint parses every file once with libcst, so the ratio of the
two times is what the rest of torchlint (summary, regions, rules, suppressions) costs.
Both run in this one process, single-threaded, over the same already-decoded texts.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import resource
import subprocess
import sys
import time
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from importlib.metadata import version as installed_version
from pathlib import Path

import libcst

from _cache import DEFAULT_CACHE, cache_dir
from torchlint.settings.config import Settings
from torchlint.project.resolve import lint_text

DEFAULT_TRANSFORMERS = "4.57.1"
TARGET_RATIO = 2.0
MODELS_PREFIX = "transformers/models/"
# Written last, so an interrupted extraction is redone rather than trusted.
EXTRACTED_MARKER = ".extracted"


@dataclass
class Corpus:
    root: Path
    paths: list[Path]
    texts: list[str]

    @property
    def lines(self) -> int:
        return sum(len(text.splitlines()) for text in self.texts)


@dataclass
class Timing:
    runs: list[float] = field(default_factory=list)

    @property
    def best(self) -> float:
        return min(self.runs)


def fetch_wheel(transformers_version: str, cache: Path) -> Path:
    pattern = f"transformers-{transformers_version}-*.whl"
    found = sorted(cache.glob(pattern))
    if found:
        return found[0]
    cache.mkdir(parents=True, exist_ok=True)
    command = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
        f"transformers=={transformers_version}", "-d", str(cache),
    ]
    print("fetching:", " ".join(command), file=sys.stderr)
    subprocess.run(command, check=True)
    found = sorted(cache.glob(pattern))
    if not found:
        sys.exit(f"error: pip did not leave a {pattern} in {cache}")
    return found[0]


def extract_models(wheel: Path, destination: Path) -> Path:
    """Unzips `transformers/models/**.py` only; returns the models folder."""
    models = destination / MODELS_PREFIX
    marker = destination / EXTRACTED_MARKER
    if marker.is_file():
        return models
    with zipfile.ZipFile(wheel) as archive:
        members = [name for name in archive.namelist() if name.startswith(MODELS_PREFIX) and name.endswith(".py")]
        archive.extractall(destination, members)
    marker.write_text(f"{wheel.name}\n{len(members)} files\n", encoding="utf-8")
    return models


def load_corpus(models: Path, limit: int | None) -> Corpus:
    paths = sorted(models.rglob("*.py"), key=lambda path: path.relative_to(models).as_posix())
    if limit is not None:
        paths = paths[:limit]
    texts = [path.read_bytes().decode("utf-8") for path in paths]
    return Corpus(models, paths, texts)


def time_parse(corpus: Corpus) -> tuple[float, int]:
    """Seconds to parse every text, and how many failed to parse."""
    failures = 0
    gc.collect()
    start = time.perf_counter()
    for text in corpus.texts:
        try:
            libcst.parse_module(text)
        except libcst.ParserSyntaxError:
            failures += 1
    return time.perf_counter() - start, failures


def time_lint(corpus: Corpus, settings: Settings) -> tuple[float, Counter[str]]:
    """Seconds to lint every text, and the findings per rule code."""
    findings: Counter[str] = Counter()
    gc.collect()
    start = time.perf_counter()
    for path, text in zip(corpus.paths, corpus.texts):
        findings.update(diagnostic.code for diagnostic in lint_text(text, str(path), settings))
    return time.perf_counter() - start, findings


def peak_rss_mib() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # Linux reports KiB, macOS bytes.
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def measure(corpus: Corpus, repeat: int) -> dict:
    settings = Settings(root=corpus.root)
    parse, lint = Timing(), Timing()
    findings: Counter[str] = Counter()
    parse_failures = 0
    rss_after_parse = 0.0
    # Interleaved, so neither side always runs on a warmer process than the other.
    for round_number in range(repeat):
        seconds, parse_failures = time_parse(corpus)
        parse.runs.append(seconds)
        if round_number == 0:
            rss_after_parse = peak_rss_mib()
        seconds, findings = time_lint(corpus, settings)
        lint.runs.append(seconds)
    lines = corpus.lines
    return {
        "files": len(corpus.paths),
        "lines": lines,
        "repeat": repeat,
        "parse": _rates(parse, len(corpus.paths), lines),
        "torchlint": _rates(lint, len(corpus.paths), lines),
        "ratio": lint.best / parse.best,
        "target_ratio": TARGET_RATIO,
        "parse_failures": parse_failures,
        "peak_rss_mib_after_parse": round(rss_after_parse, 1),
        "peak_rss_mib": round(peak_rss_mib(), 1),
        "findings": dict(sorted(findings.items())),
        "findings_total": sum(findings.values()),
    }


def _rates(timing: Timing, files: int, lines: int) -> dict:
    best = timing.best
    return {
        "seconds": best,
        "all_seconds": timing.runs,
        "files_per_second": files / best if best else None,
        "lines_per_second": lines / best if best else None,
    }


def report(result: dict) -> str:
    parse, lint = result["parse"], result["torchlint"]
    verdict = "met" if result["ratio"] <= result["target_ratio"] else "NOT met"
    rows = [
        f"corpus   transformers {result['transformers_version']} models: "
        f"{result['files']:,} files, {result['lines']:,} lines (best of {result['repeat']})",
        f"python   {result['python']}, libcst {result['libcst_version']}, torchlint {result['torchlint_version']}",
        "",
        f"{'':<22}{'seconds':>10}{'files/s':>10}{'lines/s':>12}",
        f"{'libcst.parse_module':<22}{parse['seconds']:>10.2f}{parse['files_per_second']:>10.1f}{parse['lines_per_second']:>12,.0f}",
        f"{'torchlint lint_text':<22}{lint['seconds']:>10.2f}{lint['files_per_second']:>10.1f}{lint['lines_per_second']:>12,.0f}",
        "",
        f"ratio    torchlint/parse = {result['ratio']:.2f}x (target <= {result['target_ratio']:.1f}x: {verdict})",
        f"memory   peak RSS {result['peak_rss_mib']:,.0f} MiB (after the first parse pass: {result['peak_rss_mib_after_parse']:,.0f} MiB)",
    ]
    if result["parse_failures"]:
        rows.append(f"parse    {result['parse_failures']} files did not parse")
    rows.append(f"findings {result['findings_total']:,} in all")
    rows.extend(f"  {code:<8}{count:>8,}" for code, count in result["findings"].items())
    return "\n".join(rows) + "\n"


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, metavar="N", help="only the first N files, sorted by path (default: all)")
    parser.add_argument("--transformers-version", default=DEFAULT_TRANSFORMERS, metavar="V")
    parser.add_argument("--cache-dir", metavar="DIR", help=f"where the wheel is kept (default: $TORCHLINT_BENCH_CACHE or {DEFAULT_CACHE})")
    parser.add_argument("--repeat", type=int, default=1, metavar="R", help="runs of each measurement; the best counts (default: 1)")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the numbers to this JSON file")
    arguments = parser.parse_args(argv)
    if arguments.files is not None and arguments.files < 1:
        parser.error("--files must be at least 1")
    if arguments.repeat < 1:
        parser.error("--repeat must be at least 1")
    return arguments


def main(argv: list[str] | None = None) -> int:
    arguments = parse_arguments(argv)
    cache = cache_dir(arguments.cache_dir)
    wheel = fetch_wheel(arguments.transformers_version, cache)
    models = extract_models(wheel, cache / f"transformers-{arguments.transformers_version}")
    corpus = load_corpus(models, arguments.files)
    if not corpus.paths:
        sys.exit(f"error: no Python files under {models}")
    result = {
        "transformers_version": arguments.transformers_version,
        "python": platform.python_version(),
        "libcst_version": installed_version("libcst"),
        "torchlint_version": installed_version("torchlint"),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
        **measure(corpus, arguments.repeat),
    }
    print(report(result), end="")
    if arguments.json is not None:
        arguments.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
