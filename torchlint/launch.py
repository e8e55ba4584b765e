"""The console entry point: what a short run (a pre-commit hook on one file, an editor's
buffer) must not pay for at every start is set up here, then the command runs."""

from __future__ import annotations

import gc


def main() -> None:
    from torchlint.dataclass_code import kept_between_commands

    with kept_between_commands():
        from torchlint.cli import main as run_here

        try:
            run_here()
        finally:
            # All the command built goes when the process ends. Python's last collection would
            # walk it first: about 0.08 s of a one-file run, for nothing.
            gc.freeze()
