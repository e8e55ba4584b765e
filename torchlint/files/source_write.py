"""Writing a fixed source file over the one that was read, as the user's editor would
save it: the same file, with its owner, group, mode and links, holding the new text.

A file is written only while it still holds the bytes the fixes were made from; a user's
save in between wins, and the file is left alone. A read-only file is left alone too, as
ruff leaves it, even where the user (root) could write it. The new text goes to a
temporary file beside it, given the old one's mode, owner and group, and renamed over it,
so a reader sees the old file or the new one, never a part. Where a rename would change
what the file is (a second hard link would keep the old text; the new file could not be
given the old owner or group; the folder cannot take a new file), the file is written in
place instead, its space reserved first so that a full disk fails before the file is
touched, with Ctrl-C held back until the write is done.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

from torchlint.files.atomic_write import atomic_file
from torchlint.files.source import os_error_cause

_HELD_SIGNALS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}


class NotWritten(Exception):
    """Why a fixed file was left as it was; the message names the cause, not the path."""


def write_source(path: Path, data: bytes, expected: bytes) -> None:
    """Replace the file at ``path`` (through a symbolic link, at its target) with ``data``
    if it still holds ``expected``; NotWritten says why not."""
    target = Path(os.path.realpath(path))
    try:
        before = _current(target)
        if before.data != expected:
            raise NotWritten("changed since it was checked; fixes not written")
        if before.status.st_mode & 0o222 == 0 or not os.access(target, os.W_OK):
            raise NotWritten("read-only; fixes not written")
        if before.status.st_nlink > 1 or not _replaced_whole(target, data, before.status):
            _write_in_place(target, data, expected)
    except OSError as error:
        raise NotWritten(f"fixes not written: {os_error_cause(error)}") from None


class _Current:
    def __init__(self, data: bytes, status: os.stat_result) -> None:
        self.data = data
        self.status = status


def _current(path: Path) -> _Current:
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise NotWritten("no longer a regular file; fixes not written")
        with open(descriptor, "rb", closefd=False) as handle:
            return _Current(handle.read(), status)
    finally:
        os.close(descriptor)


def _replaced_whole(path: Path, data: bytes, before: os.stat_result) -> bool:
    """Write by a new file renamed over ``path``; False, with nothing changed, where the
    new file cannot be what the old one was (its folder refuses it, or its owner or group
    cannot be kept)."""
    try:
        with _signals_held(), atomic_file(path, stat.S_IMODE(before.st_mode)) as stream:
            stream.write(data)
            stream.flush()
            _keep_owner(stream.fileno(), before)
    except _OwnerNotKept:
        return False
    except PermissionError:
        if os.access(path, os.W_OK):
            return False  # a folder that takes no new file, around a file that may be written
        raise
    return True


class _OwnerNotKept(Exception):
    pass


def _keep_owner(descriptor: int, before: os.stat_result) -> None:
    now = os.fstat(descriptor)
    if (now.st_uid, now.st_gid) == (before.st_uid, before.st_gid):
        return
    try:
        os.fchown(descriptor, before.st_uid, before.st_gid)
    except OSError:
        raise _OwnerNotKept from None


def _write_in_place(path: Path, data: bytes, expected: bytes) -> None:
    """Overwrite ``path`` itself: every name and attribute of the file stays."""
    descriptor = os.open(path, os.O_RDWR | getattr(os, "O_NONBLOCK", 0))
    try:
        with _signals_held():
            if hasattr(os, "posix_fallocate") and len(data) > len(expected):
                os.posix_fallocate(descriptor, 0, len(data))
            os.lseek(descriptor, 0, os.SEEK_SET)
            view = memoryview(data)
            while view:
                view = view[os.write(descriptor, view):]
            os.ftruncate(descriptor, len(data))
    finally:
        os.close(descriptor)


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Ctrl-C, SIGTERM and SIGHUP wait until the block is done: a file is never left half
    written by them (a pending one is delivered at the end)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_sigmask"):
        yield
        return
    held = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
