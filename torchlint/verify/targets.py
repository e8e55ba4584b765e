"""Where verify targets are declared: the public `torchlint_targets()` convention.

A file declares what to run with a module-level function::

    def torchlint_targets():
        model = Block()
        return {"block": (model, (torch.randn(2, 16, 32),))}

Each value is ``(callable, args)`` or ``(callable, args, kwargs)``, built on the CPU;
verify moves tensors and modules to the device it runs on. The file need not import
torchlint. Finding the files is a text test, so no user code runs in this process.

A file inside a package (`src/pkg/model.py`, with `src/pkg/__init__.py`) is imported as
`pkg.model` from `src`, so its relative imports work without setting PYTHONPATH; a file
outside any package is imported from its own folder, as a script runs (module_import.py).

A value may also be several calls, made in order: a list of such tuples, or an iterator or
generator yielding them. Code of a generator between its yields runs eagerly, so a target
can change state between calls, as a training loop does::

    def epochs():
        model = Scaled()
        for epoch in range(10):
            model.epoch = epoch
            yield model, (torch.randn(4, 8),)

    def torchlint_targets():
        return {"epochs": epochs()}

The same callable (by identity) across the calls of one target is compiled once and reused,
so `torchlint verify --recompiles` sees it compile again; a callable the target already
compiled (`torch.compile(model)`, a function `@torch.compile` wrapped, a module whose
`.compile()` was called) is called as it is. Plain `torchlint verify` runs a target's
first call.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


def one_call(entry: Any) -> tuple[Any, tuple, dict]:
    """``(callable, args)`` or ``(callable, args, kwargs)`` as (callable, args, kwargs)."""
    if not isinstance(entry, tuple) or len(entry) not in (2, 3) or not callable(entry[0]):
        raise TypeError("a target is (callable, args) or (callable, args, kwargs), or a list or iterator of them")
    kwargs = dict(entry[2]) if len(entry) == 3 else {}
    return entry[0], tuple(entry[1]), kwargs


def calls_of(entry: Any) -> Iterator[tuple[Any, tuple, dict]]:
    """The calls a target's value stands for, in order: one for a tuple, each item of a list
    or an iterator (a generator runs on between them)."""
    if isinstance(entry, tuple):
        yield one_call(entry)
        return
    if not isinstance(entry, list) and not hasattr(entry, "__next__"):
        raise TypeError("a target is (callable, args) or (callable, args, kwargs), or a list or iterator of them")
    for item in entry:
        yield one_call(item)
