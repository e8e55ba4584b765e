"""Files written whole or not at all: under a temporary name in the same folder, then
renamed over the target, so a reader sees the old file or the new one, never a part, and
a failed write leaves the old file as it was."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

_UMASK = os.umask(0o22)
os.umask(_UMASK)


@contextlib.contextmanager
def atomic_file(path: Path, mode: int | None = None) -> Iterator[BinaryIO]:
    """``mode``: the new file's permission bits (default: an ordinary file's, not mkstemp's 0600)."""
    # Imported here: a run that writes nothing need not pay for it.
    import tempfile

    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            yield stream
        os.chmod(temporary, mode if mode is not None else 0o666 & ~_UMASK)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
