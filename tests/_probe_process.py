"""Runs a probe script on one file in a fresh interpreter and returns its JSON result."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TIMEOUT_S = 240
# Lines for `input()`; `breakpoint()` returns at once.
STDIN = "1\n" * 100


def run_probe(script: Path, target: Path) -> dict:
    env = dict(os.environ, PYTHONBREAKPOINT="0")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    completed = subprocess.run(
        [sys.executable, str(script), str(target)],
        input=STDIN,
        capture_output=True,
        text=True,
        env=env,
        timeout=TIMEOUT_S,
    )
    if not completed.stdout.strip():
        raise AssertionError(f"{script.name} gave no result for {target.name}:\n{completed.stderr[-4000:]}")
    return json.loads(completed.stdout)


def probe_main(probe, argv: list[str]) -> int:
    """The body of a probe script: run ``probe`` on the file named in argv, print its JSON."""
    import contextlib

    # What the probed code prints goes to stderr; stdout carries only the result.
    with contextlib.redirect_stdout(sys.stderr):
        result = probe(Path(argv[1]).resolve())
    print(json.dumps(result, indent=1))
    return 1 if result["problems"] else 0
