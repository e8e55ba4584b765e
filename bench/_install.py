"""The measured libraries, installed outside the repository where torch is never resolved."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from _cache import REPO_ROOT

# Written last, so an interrupted install is redone rather than trusted.
INSTALLED_MARKER = ".installed"


def install(site: Path, requirements: list[str]) -> float:
    """Install ``requirements`` into ``site`` unless they are all there already; the seconds it took.

    Everything goes in with --no-deps: each library's dependencies are pinned in the corpus,
    and pip never resolves torch (the constraints file holds it at the CPU build too).
    """
    marker = site / INSTALLED_MARKER
    installed = set(marker.read_text(encoding="utf-8").split()) if marker.is_file() else set()
    if set(requirements) <= installed:
        return 0.0
    started = time.perf_counter()
    site.mkdir(parents=True, exist_ok=True)
    marker.unlink(missing_ok=True)
    command = [
        sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
        "--no-deps", "--upgrade", "--target", str(site),
        "-c", str(REPO_ROOT / "constraints.txt"), *requirements,
    ]
    print(f"installing {len(requirements)} requirements into {site}", file=sys.stderr)
    subprocess.run(command, check=True)
    marker.write_text("\n".join(sorted(requirements)) + "\n", encoding="utf-8")
    return time.perf_counter() - started
