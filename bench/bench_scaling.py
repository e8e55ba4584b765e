"""Time the `torchlint check` command on generated model files of growing size.

    python bench/bench_scaling.py [--sizes 1000,10000,50000] [--repeat R] [--json PATH]

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
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_SIZES = (1_000, 10_000, 50_000)
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


def time_check(path: Path, repeat: int) -> tuple[float, int]:
    """Best wall time of `torchlint check path` over ``repeat`` runs, and its exit code."""
    command = [sys.executable, "-m", "torchlint", "check", str(path)]
    best, code = float("inf"), -1
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True)
        best = min(best, time.perf_counter() - start)
        code = done.returncode
        if code not in (0, 1):
            sys.exit(f"error: torchlint failed on {path} (exit {code}):\n{done.stdout}{done.stderr}")
    return best, code


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
            seconds, code = time_check(path, repeat if lines >= _SHORT_LINES else max(repeat, _SHORT_REPEAT))
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
    parser.add_argument("--repeat", type=int, default=1, metavar="R", help="runs per file; the best counts (default: 1)")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the figures to this JSON file")
    arguments = parser.parse_args(argv)
    if arguments.repeat < 1:
        parser.error("--repeat must be at least 1")
    return arguments


def main(argv: list[str] | None = None) -> int:
    arguments = parse_arguments(argv)
    with tempfile.TemporaryDirectory(prefix="torchlint-scaling-") as folder:
        startup = startup_seconds(arguments.repeat, Path(folder))
        rows = measure(arguments.sizes, arguments.repeat, Path(folder), startup)
    print(report(rows, arguments.repeat, startup), end="")
    if arguments.json is not None:
        result = {
            "python": platform.python_version(),
            "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
            "repeat": arguments.repeat,
            "startup_seconds": startup,
            "rows": rows,
        }
        arguments.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
