"""Where verify targets are declared: the public `torchlint_targets()` convention.

A file declares what to run with a module-level function::

    def torchlint_targets():
        model = Block()
        return {"block": (model, (torch.randn(2, 16, 32),))}

Each value is ``(callable, args)`` or ``(callable, args, kwargs)``, built on the CPU;
verify moves tensors and modules to the device it runs on. The file need not import
torchlint. Finding the files is a text test, so no user code runs in this process.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

TARGETS_FUNCTION = "torchlint_targets"


@dataclass(frozen=True)
class TargetFile:
    path: Path
    # One target by name (`file.py::name`), or None for all of the file's targets.
    only: str | None = None


def parse_target_argument(argument: str) -> tuple[Path, str | None]:
    """`models/net.py::block` -> (models/net.py, "block"); a plain path -> (path, None)."""
    path, separator, name = argument.partition("::")
    return Path(path), (name or None) if separator else None


def declares_targets(path: Path) -> bool:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return f"def {TARGETS_FUNCTION}(" in text
