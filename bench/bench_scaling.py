"""Time the `torchlint check` command on generated model files of growing size, and on
generated projects of a growing number of files.

    python bench/bench_scaling.py [--sizes 1000,10000,50000] [--files 10,30,60,120]
                                  [--part lines|files|all] [--repeat R] [--json PATH]

Each per-file step must be linear (or n log n) in the file's size, so the cost per line
should stay flat from the smallest file to the largest: the report divides each file's
cost per line by the smallest file's. Two shapes of file are generated:

- `models`: nn.Module classes with `__init__` and `forward`, helper functions that
  `forward` calls, the same few names reassigned in every method, and a graph break here
  and there (`print`, `.item()`, an `if` on a tensor, `sorted` with a tensor key);
- `one-name`: a single `forward` that reassigns one name on every line, the shape that
  makes any "what did this name hold before here" lookup that scans earlier assignments
  quadratic.

Each check runs as its own `python -m torchlint check FILE` process, end to end
(start-up, parse, regions, rules, report); the best of R runs counts, and of at least
five for files under 5,000 lines, whose short times vary the most. The same command
on a one-line file gives the start-up time, which the per-line figures leave out: it is
paid once per run, whatever the size, and would make the smallest file look dearest.

The `files` part checks that the project's steps (finding the files, the solve across them,
facts handed from file to file) are linear in the number of files: it generates a package
of N modules chained as in tests/test_project_depth.py (`m0`'s `forward` hands a tensor to
`f1` of `m1`, each `fK` hands it on to the next module, and the last branches on it, a
TL201 that only the whole chain makes) and times `python -m torchlint check pkg --no-cache
-j 1` in the project's folder, cold, best of R (at least three). Two shapes: every module
imports torch, or only `m0` does (the others are parsed only once compiled code is found to
call into them). The start-up is the same command on a project of one module; the report
gives seconds per file less it, and the per-file cost at the largest size over that at the
smallest. **Target: linear, the per-file cost at 120 files at most 1.5x that at 10.** Every
run must report the chain's one TL201, in the last module.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_SIZES = (1_000, 10_000, 50_000)
DEFAULT_FILES = (10, 30, 60, 120)
DEFAULT_MODULE_LINES = 80
# Largest per-file cost over the smallest's that still counts as linear growth.
FILES_TARGET = 1.5
_PROJECT_REPEAT = 7
# Short runs are cheap and the noisiest relative to their length: they get more tries.
_SHORT_LINES = 5_000
_SHORT_REPEAT = 5

_HEADER = """\
import torch
import torch.nn.functional as F
from torch import nn

"""

# One block of model code; {i} makes every name in it unique to the block.
_MODEL_BLOCK = '''\
def scale_{i}(x, factor):
    y = x * factor
    y = y + 1
    y = torch.tanh(y)
    return y


def mask_{i}(x):
    keep = x > 0
    x = x * keep
    x = x.clamp(min=0)
    return x


class Block{i}(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)
        self.scale = 0.5

    def forward(self, x):
        h = self.norm(x)
        h = self.proj(h)
        h = F.gelu(h)
        h = scale_{i}(h, self.scale)
        h = mask_{i}(h)
        if h.sum() > 0:
            h = h * 2
        total = h.mean().item()
        rows = sorted(h, key=lambda row: row.sum())
        h = torch.stack(rows)
        h = h + total
        print(h.shape)
        x = x + h
        return x


'''

_ONE_NAME_HEAD = """\
class Deep(nn.Module):
    def forward(self, x):
        h = x
"""
# Four lines that reassign `h`; the `sorted` asks what `h` held before it.
_ONE_NAME_STEP = """\
        h = h + {i}
        h = sorted(h, key=lambda row: row.sum())
        h = torch.stack(h)
        h = h * 2
"""
_ONE_NAME_TAIL = """\
        print(h)
        return h
"""


def model_code(lines: int) -> str:
    """About ``lines`` lines of model code: as many blocks as fit."""
    block_lines = _MODEL_BLOCK.count("\n")
    blocks = max(1, (lines - _HEADER.count("\n")) // block_lines)
    return _HEADER + "".join(_MODEL_BLOCK.format(i=i) for i in range(blocks))


def one_name_code(lines: int) -> str:
    """About ``lines`` lines, nearly all reassigning one name in one `forward`."""
    fixed = _HEADER.count("\n") + _ONE_NAME_HEAD.count("\n") + _ONE_NAME_TAIL.count("\n")
    steps = max(1, (lines - fixed) // _ONE_NAME_STEP.count("\n"))
    return _HEADER + _ONE_NAME_HEAD + "".join(_ONE_NAME_STEP.format(i=i) for i in range(steps)) + _ONE_NAME_TAIL


SHAPES = {"models": model_code, "one-name": one_name_code}


def time_check(path: Path, repeat: int, *options: str, cwd: Path | None = None) -> tuple[float, int, str]:
    """Best wall time of `torchlint check path OPTIONS` (run in ``cwd``) over ``repeat`` runs,
    its exit code and what it printed."""
    command = [sys.executable, "-m", "torchlint", "check", str(path), *options]
    best, code, printed = float("inf"), -1, ""
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, cwd=cwd)
        best = min(best, time.perf_counter() - start)
        code, printed = done.returncode, done.stdout
        if code not in (0, 1):
            sys.exit(f"error: torchlint failed on {path} (exit {code}):\n{done.stdout}{done.stderr}")
    return best, code, printed


def startup_seconds(repeat: int, folder: Path) -> float:
    """The check of a one-line file: interpreter, imports, discovery and report."""
    path = folder / "one_line.py"
    path.write_text("import torch\n", encoding="utf-8")
    return time_check(path, max(repeat, _SHORT_REPEAT))[0]


def measure(sizes: list[int], repeat: int, folder: Path, startup: float) -> list[dict]:
    rows = []
    for shape, generate in SHAPES.items():
        first_per_line = None
        for size in sizes:
            path = folder / f"{shape.replace('-', '_')}_{size}.py"
            text = generate(size)
            path.write_text(text, encoding="utf-8")
            lines = text.count("\n")
            seconds, code, _ = time_check(path, repeat if lines >= _SHORT_LINES else max(repeat, _SHORT_REPEAT))
            # A run that took no longer than the start-up has no cost per line to show.
            checking = seconds - startup if seconds > startup else None
            per_line = checking / lines if checking else None
            first_per_line = first_per_line or per_line
            rows.append(
                {
                    "shape": shape,
                    "lines": lines,
                    "seconds": seconds,
                    "seconds_without_startup": checking,
                    "lines_per_second": lines / checking if checking else None,
                    "per_line_vs_smallest": per_line / first_per_line if per_line and first_per_line else None,
                    "exit_code": code,
                }
            )
    return rows


def report(rows: list[dict], repeat: int, startup: float) -> str:
    out = [
        f"torchlint check, end to end, best of {repeat}; start-up (a one-line file) {startup:.2f} s",
        "",
        f"{'shape':<10}{'lines':>9}{'seconds':>10}{'less start-up':>15}{'lines/s':>10}{'per line vs smallest':>23}",
    ]
    for row in rows:
        checking, rate, ratio = row["seconds_without_startup"], row["lines_per_second"], row["per_line_vs_smallest"]
        out.append(
            f"{row['shape']:<10}{row['lines']:>9,}{row['seconds']:>10.2f}"
            + (f"{checking:>15.2f}" if checking else f"{'n/a':>15}")
            + (f"{rate:>10,.0f}" if rate else f"{'n/a':>10}")
            + (f"{ratio:>22.2f}x" if ratio else f"{'n/a':>23}")
        )
    return "\n".join(out) + "\n"


_CHAIN_HEAD = """\
import torch
from torch import nn

"""
_CHAIN_FORWARD = """\

class Net(nn.Module):
    def forward(self, x):
        y = torch.relu(x)
        return {call}
"""
_CHAIN_BRANCH = """\
    if x > 0:
        return x * 2
    return x
"""
# The project of one module the start-up is measured on: the same break, in `forward` itself.
_ONE_MODULE = _CHAIN_HEAD + """\

class Net(nn.Module):
    def forward(self, x):
        y = torch.relu(x)
        if y > 0:
            return y * 2
        return y
"""


# Eight lines of plain Python: what a module holds besides its link of the chain, so that
# each file has some work to show against the start-up. Nothing compiled calls it.
_FILLER = """\


def tally_{i}(values, factor):
    total = 0
    for value in values:
        total += value * factor
    if total > {i}:
        total = total / 2
    return total
"""


def _filler(lines: int) -> str:
    return "".join(_FILLER.format(i=i) for i in range(lines // _FILLER.count("\n")))


def chain_project(folder: Path, files: int, every_module_imports_torch: bool, module_lines: int = 0) -> Path:
    """A package ``pkg`` of ``files`` modules under ``folder``: `m0`'s `forward` hands a tensor
    down the chain and the last module branches on it (one TL201, in the last module); each
    module also holds about ``module_lines`` lines of plain functions. With one module, a
    bare `forward` that branches itself. Returns the last module."""
    package = folder / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    if files == 1:
        (package / "m0.py").write_text(_ONE_MODULE, encoding="utf-8")
        return package / "m0.py"
    filler = _filler(module_lines)
    forward = _CHAIN_HEAD + "from pkg.m1 import f1\n\n" + _CHAIN_FORWARD.format(call="f1(y)")
    (package / "m0.py").write_text(forward + filler, encoding="utf-8")
    head = "import torch\n\n" if every_module_imports_torch else ""
    for index in range(1, files):
        if index < files - 1:
            body = f"from pkg.m{index + 1} import f{index + 1}\n\n\ndef f{index}(x):\n    return f{index + 1}(x)\n"
        else:
            body = f"def f{index}(x):\n" + _CHAIN_BRANCH
        (package / f"m{index}.py").write_text(head + body + filler, encoding="utf-8")
    return package / f"m{files - 1}.py"


CHAIN_SHAPES = {"every module imports torch": True, "only m0 imports torch": False}


def _time_project(
    folder: Path, files: int, every_module_imports_torch: bool, repeat: int, jobs: int, module_lines: int = 0
) -> float:
    """Best seconds of `torchlint check pkg --no-cache -j JOBS` on a fresh chain of ``files``
    modules; the run must report the chain's TL201 in the last module and nothing else."""
    root = folder / f"chain_{files}_{'torch' if every_module_imports_torch else 'plain'}"
    last = chain_project(root, files, every_module_imports_torch, module_lines)
    seconds, code, printed = time_check(
        Path("pkg"), max(repeat, _PROJECT_REPEAT), "--no-cache", "-j", str(jobs), "--output-format", "concise",
        cwd=root,
    )
    found = [line for line in printed.splitlines() if " TL" in line]
    expected_file = f"pkg/{last.name}:"
    if code != 1 or len(found) != 1 or not found[0].startswith(expected_file) or " TL201 " not in found[0]:
        sys.exit(f"error: the chain of {files} files should report one TL201 in {expected_file} (exit {code}):\n{printed}")
    return seconds


def measure_files(
    counts: list[int], repeat: int, folder: Path, jobs: int, module_lines: int
) -> tuple[float, list[dict]]:
    """The start-up (a project of one module) and, per shape and file count, the cold check."""
    startup = _time_project(folder / "startup", 1, True, repeat, jobs)
    rows = []
    for shape, imports in CHAIN_SHAPES.items():
        first_per_file = None
        for files in counts:
            seconds = _time_project(folder, files, imports, repeat, jobs, module_lines)
            checking = seconds - startup if seconds > startup else None
            per_file = checking / files if checking else None
            first_per_file = first_per_file or per_file
            rows.append(
                {
                    "shape": shape,
                    "files": files,
                    "seconds": seconds,
                    "seconds_without_startup": checking,
                    "seconds_per_file": per_file,
                    "per_file_vs_smallest": per_file / first_per_file if per_file and first_per_file else None,
                }
            )
    return startup, rows


def report_files(rows: list[dict], startup: float, repeat: int, jobs: int, module_lines: int) -> str:
    out = [
        f"torchlint check pkg --no-cache -j {jobs} on a chain of N modules of about {module_lines} lines, "
        f"best of {max(repeat, _PROJECT_REPEAT)}; "
        f"start-up (a project of one module) {startup:.2f} s",
        "",
        f"{'shape':<28}{'files':>6}{'seconds':>10}{'less start-up':>15}{'s/file':>10}{'per file vs smallest':>22}",
    ]
    for row in rows:
        checking, per_file, ratio = row["seconds_without_startup"], row["seconds_per_file"], row["per_file_vs_smallest"]
        out.append(
            f"{row['shape']:<28}{row['files']:>6}{row['seconds']:>10.2f}"
            + (f"{checking:>15.2f}" if checking else f"{'n/a':>15}")
            + (f"{per_file:>10.4f}" if per_file else f"{'n/a':>10}")
            + (f"{ratio:>21.2f}x" if ratio else f"{'n/a':>22}")
        )
    out.append("")
    for shape in CHAIN_SHAPES:
        mine = [row for row in rows if row["shape"] == shape]
        first, last = mine[0], mine[-1]
        ratio = last["per_file_vs_smallest"]
        if ratio is None:
            out.append(f"{shape}: no cost per file to compare")
            continue
        verdict = "met" if ratio <= FILES_TARGET else "MISSED"
        out.append(
            f"{shape}: per file at {last['files']} files {ratio:.2f}x that at {first['files']} "
            f"(target at most {FILES_TARGET}x: {verdict})"
        )
    return "\n".join(out) + "\n"


def _counts(text: str) -> list[int]:
    counts = sorted({int(part) for part in text.split(",") if part.strip()})
    if not counts or counts[0] < 2:
        raise argparse.ArgumentTypeError("file counts are numbers of modules of at least 2, comma separated")
    return counts


def _sizes(text: str) -> list[int]:
    sizes = sorted({int(part) for part in text.split(",") if part.strip()})
    # Smaller files take little longer than the start-up, which leaves nothing to compare.
    if not sizes or sizes[0] < 1_000:
        raise argparse.ArgumentTypeError("sizes are line counts of at least 1000, comma separated")
    return sizes


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes", type=_sizes, default=list(DEFAULT_SIZES), metavar="N,N,...",
        help="file sizes in lines (default: 1000,10000,50000)",
    )
    parser.add_argument(
        "--files", type=_counts, default=list(DEFAULT_FILES), metavar="N,N,...",
        help="project sizes in modules (default: 10,30,60,120)",
    )
    parser.add_argument(
        "--part", choices=("lines", "files", "all"), default="all",
        help="lines: one file of growing size; files: projects of a growing number of files (default: all)",
    )
    parser.add_argument("--jobs", type=int, default=1, metavar="J", help="worker processes for the files part (default: 1)")
    parser.add_argument(
        "--module-lines", type=int, default=DEFAULT_MODULE_LINES, metavar="L",
        help=f"lines of plain functions in each module of the files part (default: {DEFAULT_MODULE_LINES})",
    )
    parser.add_argument("--repeat", type=int, default=1, metavar="R", help="runs per file; the best counts (default: 1)")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the figures to this JSON file")
    arguments = parser.parse_args(argv)
    if arguments.repeat < 1:
        parser.error("--repeat must be at least 1")
    if arguments.jobs < 1:
        parser.error("--jobs must be at least 1")
    if arguments.module_lines < 0:
        parser.error("--module-lines must be at least 0")
    return arguments


def main(argv: list[str] | None = None) -> int:
    arguments = parse_arguments(argv)
    # An installed torchlint has its bytecode; a checkout run with PYTHONDONTWRITEBYTECODE
    # would compile every module at each start instead.
    import torchlint

    compileall.compile_dir(Path(torchlint.__file__).parent, quiet=1)
    result: dict = {
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
        "repeat": arguments.repeat,
    }
    with tempfile.TemporaryDirectory(prefix="torchlint-scaling-") as folder:
        if arguments.part in ("lines", "all"):
            startup = startup_seconds(arguments.repeat, Path(folder))
            rows = measure(arguments.sizes, arguments.repeat, Path(folder), startup)
            print(report(rows, arguments.repeat, startup), end="")
            result.update(startup_seconds=startup, rows=rows)
        if arguments.part in ("files", "all"):
            if arguments.part == "all":
                print()
            project_startup, file_rows = measure_files(
                arguments.files, arguments.repeat, Path(folder) / "projects", arguments.jobs, arguments.module_lines
            )
            print(report_files(file_rows, project_startup, arguments.repeat, arguments.jobs, arguments.module_lines), end="")
            result.update(
                project_startup_seconds=project_startup, project_jobs=arguments.jobs,
                project_module_lines=arguments.module_lines, project_rows=file_rows,
            )
    if arguments.json is not None:
        arguments.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
