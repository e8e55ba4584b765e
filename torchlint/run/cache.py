"""What earlier runs worked out, kept on disk so an unchanged file is never analysed twice.

Every entry is the result of a pure step (a file's outline and findings, the project's
solved facts) under a key that hashes everything the step reads: torchlint's own code and
the torch, Python and libcst it runs with, the file's bytes, its settings and what the
project told it. A hit is therefore the step's
answer, never a guess. Each entry is a file of its own, written by a temporary file and a
rename, so a reader sees the old file or the new one and two concurrent runs cannot
interleave.

The cache folder travels with the project (a repository can commit it, an image can hold
one another user wrote), so nothing in it is trusted for being there. Each file holds plain
data only (`plain_data`: its decoder builds torchlint's own data classes field by field and
can call nothing), and carries an HMAC-SHA256, under this user's key kept outside every
project (`user_cache`), of its body and the name it is kept under. A file that does not
check out (truncated, corrupted, written by another version or another user, planted, or
copied from another name) is a miss and is written again; so is anything in the cache
folder that is not a plain file or folder (`cache_files`). Without a key (no home folder,
or one that others may write to) nothing can be trusted, and the cache is off.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torchlint
from torchlint.analysis.plain_data import dumps, loads
from torchlint.analysis.stable_digest import digest
from torchlint.run.cache_files import is_regular, open_folder, open_subfolder, read_regular, replaced
from torchlint.settings.profile import distribution_version, installed_torch_version
from torchlint.user_cache import cache_key, checked_body, signed

DEFAULT_FOLDER = ".torchlint_cache"

_MAGIC = b"torchlint-cache 2\n"
# Why a value is not written: the folder refuses it, or the value is not plain data (an
# object of no registered class, one missing a field) or is nested past the stack.
_UNWRITABLE = (OSError, TypeError, ValueError, AttributeError, RecursionError)
_CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by torchlint.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)
_MARKERS = ((".gitignore", "# Automatically created by torchlint.\n*\n"), ("CACHEDIR.TAG", _CACHEDIR_TAG))


def code_fingerprint() -> str:
    """torchlint's version and the files it is made of: an edited rule is a new torchlint."""
    package = Path(torchlint.__file__).parent
    stamps = []
    for path in sorted(package.rglob("*.py")):
        try:
            stat = path.stat()
        except OSError:
            continue
        stamps.append((path.relative_to(package).as_posix(), stat.st_size, stat.st_mtime_ns))
    return digest(torchlint.__version__, stamps)


def environment_fingerprint() -> str:
    """What torchlint reads of the environment it runs in, besides the settings: the
    installed torch (rules hold for some releases only, and `target-torch` defaults to it),
    the Python (its standard library's module names are never the project's) and libcst
    (which parses). Like torchlint's code, it names a cache folder of its own: an upgrade of
    any of them never meets the entries of before."""
    python = (sys.implementation.name, *sys.version_info[:2])
    return digest(code_fingerprint(), installed_torch_version(), python, distribution_version("libcst"))


def cache_folder(option: Path | None, root: Path) -> Path:
    """`--cache-dir` (or $TORCHLINT_CACHE_DIR), else `.torchlint_cache` in ``root``.

    A folder the user named is taken where it leads: a link to a folder elsewhere is their
    choice, so it is followed, here and only here. What is inside is checked as in the
    default folder."""
    return Path(os.path.realpath(option)) if option is not None else root / DEFAULT_FOLDER


def refused_folder(folder: Path) -> str | None:
    """Why the default cache folder is not used: it is a symbolic link (committed with a
    repository, it would send the cache, and the markers that keep git and backups away
    from it, wherever it points) or not a folder at all. None for a folder, or none yet."""
    try:
        mode = os.lstat(folder).st_mode
    except OSError:
        return None  # made when first written, or not written at all
    if stat.S_ISLNK(mode):
        return "is a symbolic link"
    return None if stat.S_ISDIR(mode) else "is not a folder"


class Cache:
    """The entries of one project root, each in a file of its own. ``Cache(None)`` keeps
    nothing (`--no-cache`).

    A run reads only the entries it asks for and writes only those it made: a run on one
    changed file of a large project costs one small file, not the project's."""

    def __init__(self, folder: Path | None, scope: str = "") -> None:
        self._key = cache_key() if folder is not None else None
        self.folder = folder if self._key is not None else None
        # Before this run looks at any file: a time a file had before then is one it had when looked at.
        self.started = time.time_ns()
        # The subfolder of this torchlint and environment, and the prefix of the project's files in it
        self._subfolder = environment_fingerprint()[:16] if self.folder is not None else ""
        self._name = digest(scope)[:16]
        # key -> what its record file held when first read, and when the run that wrote it started
        self._records: dict[str, tuple[Any, int | None]] = {}
        # key -> the value of each entry this run read or made
        self._values: dict[str, object] = {}
        # keys this run gave a value: written by ``save``
        self._put: set[str] = set()
        self.hits = 0
        self.misses = 0

    @property
    def enabled(self) -> bool:
        return self.folder is not None

    def _record_file(self, key: str) -> str:
        return f"{self._name}-{key[:16]}.record"

    def _entry_file(self, key: str) -> str:
        return f"{self._name}.{key[:32]}.entry"

    @contextlib.contextmanager
    def _reading(self) -> Iterator[int | None]:
        """A descriptor of the subfolder, or None where there is none to read."""
        try:
            with open_folder(self.folder) as top, open_subfolder(top, self._subfolder) as folder:
                yield folder
        except OSError:
            yield None

    @contextlib.contextmanager
    def _writing(self) -> Iterator[int]:
        """A descriptor of the subfolder, made with the cache folder and its markers."""
        with open_folder(self.folder, create=True) as top:
            _mark(top)
            with open_subfolder(top, self._subfolder, create=True) as folder:
                yield folder

    def record(self, key: str) -> Any | None:
        """The value ``write_record`` last kept under ``key``, from a file of its own."""
        return self._stored_record(key)[0]

    def record_started(self, key: str) -> int | None:
        """When the run that wrote the record under ``key`` started (ns), None where there
        is none: what it saw of a file vouches for the file only where the file was older."""
        return self._stored_record(key)[1]

    def _stored_record(self, key: str) -> tuple[Any | None, int | None]:
        if self.folder is None:
            return None, None
        if key not in self._records:
            found: tuple[Any | None, int | None] = (None, None)
            with self._reading() as folder:
                if folder is not None:
                    found = self._load(folder, self._record_file(key), with_time=True)
            self._records[key] = found
        return self._records[key]

    def write_record(self, key: str, value: object) -> None:
        """Keep ``value`` under ``key`` at once, by a temporary file and a rename; skipped
        silently when it cannot be written, as the cache is. The file's time is when this
        run started (see `record_started`): the bytes are the value's alone."""
        if self.folder is None:
            return
        try:
            with self._writing() as folder:
                self._write(folder, self._record_file(key), value, modified=self.started)
        except _UNWRITABLE:
            return
        self._records[key] = (value, self.started)

    def get(self, key: str) -> Any | None:
        return self.get_many([key])[0]

    def get_many(self, keys: list[str]) -> list[Any | None]:
        """The value kept under each key (None where there is none that checks out)."""
        missing = [key for key in keys if key not in self._values]
        if missing and self.folder is not None:
            with self._reading() as folder:
                for key in missing if folder is not None else ():
                    stored = self._load(folder, self._entry_file(key))[0]
                    # The file names a prefix of the key: the entry says its whole key.
                    if isinstance(stored, tuple) and len(stored) == 2 and stored[0] == key:
                        self._values[key] = stored[1]
        found = [self._values.get(key) for key in keys]
        for value in found:
            if value is None:
                self.misses += 1
            else:
                self.hits += 1
        return found

    def put(self, key: str, value: object) -> None:
        if self.folder is not None:
            self._values[key] = value
            self._put.add(key)

    def save(self, keep_only_used: bool = False) -> None:
        """Write the entries this run made, each by a temporary file and a rename, so a
        reader sees the old file or the new one. ``keep_only_used``: the run looked at every
        file of the project, so entries it did not use are of contents no longer there (or of
        other settings): once they outnumber the used ones they are removed. A cache that
        cannot be written is skipped silently: it only ever saves time."""
        if self.folder is None or not (self._put or keep_only_used):
            return
        try:
            with self._writing() as folder:
                for key in sorted(self._put):
                    self._write(folder, self._entry_file(key), (key, self._values[key]))
                if keep_only_used:
                    self._drop_unused(folder)
        except _UNWRITABLE:
            return
        self._put.clear()

    def _label(self, name: str) -> str:
        # A file signed for one name, subfolder or version does not check out under another.
        return f"{self._subfolder}/{name}"

    def _load(self, folder: int, name: str, with_time: bool = False) -> tuple[Any | None, int | None]:
        """What the cache file ``name`` holds, and its time, or None where it is missing, not
        a plain file, or does not check out."""
        assert self._key is not None
        try:
            data, modified = read_regular(folder, name, with_time)
        except OSError:
            return None, None
        body = checked_body(self._key, self._label(name), _MAGIC, data)
        value = loads(body) if body is not None else None
        return value, modified if value is not None else None

    def _write(self, folder: int, name: str, value: object, modified: int | None = None) -> None:
        assert self._key is not None
        body = dumps(value)
        with replaced(folder, name, modified) as stream:
            stream.write(_MAGIC)
            stream.write(body)
            stream.write(signed(self._key, self._label(name), body))

    def _drop_unused(self, folder: int) -> None:
        used = {self._entry_file(key) for key in self._values}
        prefix = f"{self._name}."
        unused = [name for name in os.listdir(folder) if name.startswith(prefix) and name not in used]
        if len(unused) > len(used):
            for name in unused:
                with contextlib.suppress(OSError):
                    os.unlink(name, dir_fd=folder)


def _mark(folder: int) -> None:
    """What tells git and backup tools to leave the cache folder alone. A marker found as
    anything but a plain file (a link to a file elsewhere) is replaced; one that cannot be
    (a folder of that name) is left out."""
    for name, text in _MARKERS:
        if not is_regular(folder, name):
            with contextlib.suppress(OSError), replaced(folder, name) as stream:
                stream.write(text.encode("utf-8"))
