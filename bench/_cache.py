"""Where the benchmarks keep what they download: outside the repository, always."""

from __future__ import annotations

import os
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CACHE = Path("~/.cache/torchlint-bench")


def cache_dir(option: str | None) -> Path:
    """`--cache-dir`, else $TORCHLINT_BENCH_CACHE, else ~/.cache/torchlint-bench."""
    chosen = option or os.environ.get("TORCHLINT_BENCH_CACHE") or str(DEFAULT_CACHE)
    path = Path(chosen).expanduser().resolve()
    # Wheels and third-party packages must not show up in `git status`.
    if path == REPO_ROOT or REPO_ROOT in path.parents:
        sys.exit(f"error: the cache folder {path} lies inside the repository; choose one outside it")
    return path
