"""The files and folders inside the cache folder, used only as what torchlint makes there:
plain folders and plain files.

A cache folder may come with a repository or be changed between runs, so nothing found in
it is trusted for what its name says. Every name is looked up from an open descriptor of
its folder without following a symbolic link (a folder swapped for a link while a run goes
on is not followed either); a file is read only once it is open, without blocking, and
shown to be a regular file (a named pipe would wait for a writer, a device may never end);
a file is written as a new file beside it, renamed over the name, which replaces a link or
a pipe found there instead of writing through it. So nothing is ever read from or written
to outside the cache folder.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

# Where names cannot be looked up from a folder's descriptor, or opened without following
# a link (Windows), the cache is not used.
AVAILABLE = os.open in os.supports_dir_fd and hasattr(os, "O_NOFOLLOW")
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_FOLDER = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | _NONBLOCK
_READ = os.O_RDONLY | _NOFOLLOW | _NONBLOCK
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW


@contextlib.contextmanager
def open_folder(path: Path, create: bool = False) -> Iterator[int]:
    """A descriptor of the folder ``path``, made (with its parents) when missing and
    ``create``. A link there is not followed (OSError): it is not the caller's to replace."""
    if not AVAILABLE:
        raise OSError(errno.ENOTSUP, "no safe way to open the cache's files here", str(path))
    try:
        descriptor = os.open(path, _FOLDER)
    except FileNotFoundError:
        if not create:
            raise
        path.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(path, _FOLDER)
    try:
        yield descriptor
    finally:
        os.close(descriptor)


@contextlib.contextmanager
def open_subfolder(parent: int, name: str, create: bool = False) -> Iterator[int]:
    """A descriptor of the folder ``name`` in ``parent``. With ``create``, a missing one is
    made and anything else found under its name (a link, a file, a pipe) is replaced by it."""
    try:
        descriptor = os.open(name, _FOLDER, dir_fd=parent)
    except OSError as error:
        if not create or error.errno not in (errno.ENOENT, errno.ELOOP, errno.ENOTDIR):
            raise
        if error.errno != errno.ENOENT:
            # Removes a link itself, never what it points to; gone already when a concurrent run did
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name, dir_fd=parent)
        with contextlib.suppress(FileExistsError):  # made meanwhile by a concurrent run
            os.mkdir(name, dir_fd=parent)
        descriptor = os.open(name, _FOLDER, dir_fd=parent)
    try:
        yield descriptor
    finally:
        os.close(descriptor)


def is_regular(folder: int, name: str) -> bool:
    """Whether ``name`` in ``folder`` is a regular file (not a link to one)."""
    try:
        return stat.S_ISREG(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode)
    except OSError:
        return False


def read_regular(folder: int, name: str, with_time: bool = False) -> tuple[bytes, int | None]:
    """The bytes of the regular file ``name`` in ``folder``, and (``with_time``) its
    modification time; OSError for anything else."""
    descriptor = os.open(name, _READ, dir_fd=folder)
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", name)
        with open(descriptor, "rb", closefd=False) as handle:
            return handle.read(), status.st_mtime_ns if with_time else None
    finally:
        os.close(descriptor)


@contextlib.contextmanager
def replaced(folder: int, name: str, modified: int | None = None) -> Iterator[BinaryIO]:
    """A new file that replaces ``name`` in ``folder`` whole once the block ends, or leaves
    it as it was when the block fails: a reader sees the old file or the new one.
    ``modified``: the time (ns) the file is given."""
    temporary = _new_file(folder, name)
    try:
        with open(temporary[1], "wb") as stream:
            yield stream
            if modified is not None:
                stream.flush()
                os.utime(stream.fileno(), ns=(modified, modified))
        os.replace(temporary[0], name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary[0], dir_fd=folder)
        raise


def _new_file(folder: int, name: str) -> tuple[str, int]:
    """A file of a name no one else uses, beside ``name``, opened for writing; an
    ordinary file's permissions (the umask applies), not 0600."""
    for _ in range(100):
        temporary = f".{name}.{os.urandom(6).hex()}.tmp"
        try:
            return temporary, os.open(temporary, _NEW, 0o666, dir_fd=folder)
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name", name)
