"""Writing the report to `-o`'s file, which may be a named pipe or a device."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from torchlint.files.source import os_error_cause


def write_report(report: str, path: Path) -> str | None:
    """Write ``report`` (UTF-8) to ``path``; why not, where it cannot be written.

    Opened without blocking, so a named pipe that no process reads is an error at once
    instead of a wait for a reader that may never come."""
    data = report.encode("utf-8")
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NONBLOCK", 0), 0o666)
    except OSError as error:
        if error.errno == errno.ENXIO and _is_pipe(path):
            return "no process reads the named pipe"
        return os_error_cause(error)
    try:
        if hasattr(os, "set_blocking"):
            os.set_blocking(descriptor, True)  # a pipe's reader may take the report slower than it is written
        with open(descriptor, "wb", closefd=False) as stream:
            stream.write(data)
    except OSError as error:
        return os_error_cause(error)
    finally:
        os.close(descriptor)
    return None


def _is_pipe(path: Path) -> bool:
    try:
        return stat.S_ISFIFO(os.stat(path).st_mode)
    except OSError:
        return False
