"""What earlier runs worked out, kept on disk so an unchanged file is never analysed twice.

Every entry is the result of a pure step (a file's outline and findings, the project's
solved facts) under a key that hashes everything the step reads: torchlint's own code and
the torch, Python and libcst it runs with, the file's bytes, its settings and what the
project told it. A hit is therefore the step's
answer, never a guess. The entries one run used are written back as one file per project
root, by a temporary file and a rename, so a reader sees the old file or the new one and
two concurrent runs cannot interleave. A file that does not check out (truncated,
corrupted, written by another version, or holding anything but torchlint's own data
classes) is ignored, and so is anything in the cache folder that is not a plain file or
folder (`cache_files`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import hashlib
import io
import os
import pickle
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import torchlint
from torchlint.run.cache_files import is_regular, open_folder, open_subfolder, read_regular, replaced
from torchlint.settings.profile import distribution_version, installed_torch_version

DEFAULT_FOLDER = ".torchlint_cache"

_MAGIC = b"torchlint-cache\n"
_DIGEST_SIZE = 32
_CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by torchlint.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)
_MARKERS = ((".gitignore", "# Automatically created by torchlint.\n*\n"), ("CACHEDIR.TAG", _CACHEDIR_TAG))
# Only these may be rebuilt from a cache file: a pickle naming anything else is foreign.
_TRUSTED_MODULES = ("torchlint.",)
_TRUSTED_BUILTINS = {("builtins", "frozenset"), ("builtins", "set"), ("pathlib", "PosixPath"), ("pathlib", "WindowsPath")}


def digest(*parts: object) -> str:
    """A stable hash of plain values: the same on every run and in every process, whatever
    the order sets and dicts were built in (``hash()`` of a string is not)."""
    hasher = hashlib.blake2b(digest_size=_DIGEST_SIZE)
    for part in parts:
        hasher.update(_canonical(part).encode("utf-8", "surrogatepass"))
        hasher.update(b"\0")
    return hasher.hexdigest()


def _canonical(value: object) -> str:
    if isinstance(value, (str, int, float, bool, type(None), bytes)):
        return repr(value)
    if isinstance(value, enum.Enum):
        return f"{type(value).__qualname__}.{value.name}"
    if isinstance(value, Path):
        return repr(str(value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = ",".join(f"{f.name}={_canonical(getattr(value, f.name))}" for f in dataclasses.fields(value))
        return f"{type(value).__qualname__}({fields})"
    if isinstance(value, dict):
        items = sorted(f"{_canonical(k)}:{_canonical(v)}" for k, v in value.items())
        return "{" + ",".join(items) + "}"
    if isinstance(value, (set, frozenset)):
        return "{" + ",".join(sorted(_canonical(item) for item in value)) + "}"
    if isinstance(value, (tuple, list)):
        return "(" + ",".join(_canonical(item) for item in value) + ")"
    raise TypeError(f"no stable form for {type(value).__name__}")


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


class _TrustedUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if module.startswith(_TRUSTED_MODULES) or (module, name) in _TRUSTED_BUILTINS:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name} is not torchlint's")


class Cache:
    """The entries of one project root. ``Cache(None)`` keeps nothing (`--no-cache`).

    Each value is pickled on its own and unpickled only when asked for: a run on one
    changed file reads back the few entries it needs, not the whole project's."""

    def __init__(self, folder: Path | None, scope: str = "") -> None:
        self.folder = folder
        # The subfolder of this torchlint and environment, and the name of the project's files in it
        self._subfolder = environment_fingerprint()[:16] if folder is not None else ""
        self._name = digest(scope)[:16]
        # key -> (owner, pickled value); the owner is the file an entry is about ("" for the
        # project). Read on first use: a run that a record answers never reads it.
        self._entries: dict[str, tuple[str, bytes]] | None = None
        # key -> what its record file held when first read
        self._records: dict[str, Any] = {}
        # key -> (owner, value) of the entries this run used or made
        self._used: dict[str, tuple[str, object]] = {}
        # keys this run gave a value: a stored one is replaced
        self._put: set[str] = set()
        self.hits = 0
        self.misses = 0

    @property
    def enabled(self) -> bool:
        return self.folder is not None

    @property
    def _stored(self) -> dict[str, tuple[str, bytes]]:
        if self._entries is None:
            self._entries = self._read() if self.folder is not None else {}
        return self._entries

    def _record_file(self, key: str) -> str:
        return f"{self._name}-{key[:16]}.record"

    def _read_file(self, name: str) -> bytes:
        """The file ``name`` of the subfolder; nothing when it is missing or is not
        a plain file."""
        try:
            with open_folder(self.folder) as top, open_subfolder(top, self._subfolder) as folder:
                return read_regular(folder, name)
        except OSError:
            return b""

    @contextlib.contextmanager
    def _writing(self, name: str) -> Iterator[BinaryIO]:
        """A new file ``name`` in the subfolder, made with the cache folder and its markers."""
        with open_folder(self.folder, create=True) as top:
            _mark(top)
            with open_subfolder(top, self._subfolder, create=True) as folder, replaced(folder, name) as stream:
                yield stream

    def record(self, key: str) -> Any | None:
        """The value ``write_record`` last kept under ``key``, from a file of its own: small,
        so reading it does not cost reading every entry of the project."""
        if self.folder is None:
            return None
        if key not in self._records:
            body = _checked_body(self._read_file(self._record_file(key)))
            self._records[key] = _trusted_load(body.tobytes()) if body is not None else None
        return self._records[key]

    def write_record(self, key: str, value: object) -> None:
        """Keep ``value`` under ``key`` at once, by a temporary file and a rename; skipped
        silently when it cannot be written, as the cache is."""
        if self.folder is None:
            return
        try:
            data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
            with self._writing(self._record_file(key)) as stream:
                stream.write(_MAGIC)
                stream.write(data)
                stream.write(hashlib.blake2b(data, digest_size=_DIGEST_SIZE).digest())
        except (OSError, pickle.PicklingError, TypeError, AttributeError, RecursionError):
            return

    def get(self, key: str) -> Any | None:
        entry = self._used.get(key)
        if entry is None and key in self._stored:
            owner, blob = self._stored[key]
            value = _trusted_load(blob)
            if value is not None:
                entry = self._used[key] = (owner, value)
        if entry is None:
            self.misses += 1
            return None
        self.hits += 1
        return entry[1]

    @property
    def owners_used(self) -> set[str]:
        """The files (and "" for the project) whose entries this run read or wrote."""
        return {owner for owner, _ in self._used.values()}

    def put(self, key: str, value: object, owner: str) -> None:
        if self.folder is not None:
            self._used[key] = (owner, value)
            self._put.add(key)

    def _kept(self) -> Iterator[tuple[str, str, bytes]]:
        """(key, owner, pickled value) of the entries this run used, and of those about
        files it did not look at (a run on one file keeps what the others' runs stored);
        stale entries of the files it did look at drop out."""
        touched = self.owners_used
        for key, (owner, blob) in self._stored.items():
            if owner not in touched and key not in self._used:
                yield key, owner, blob
        for key, (owner, value) in self._used.items():
            stored = self._stored.get(key)
            fresh = stored is None or key in self._put
            yield key, owner, pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL) if fresh else stored[1]

    def _read(self) -> dict[str, tuple[str, bytes]]:
        body = _checked_body(self._read_file(f"{self._name}.pickle"))
        if body is None:
            return {}
        entries = {}
        stream = io.BytesIO(body)
        while stream.tell() < len(body):
            record = _trusted_load(stream)
            if not (
                isinstance(record, tuple)
                and len(record) == 3
                and isinstance(record[0], str)
                and isinstance(record[1], str)
                and isinstance(record[2], bytes)
            ):
                return {}
            entries[record[0]] = (record[1], record[2])
        return entries

    def save(self) -> None:
        """Write the entries worth keeping, one record at a time (a project's cache is tens
        of megabytes); a cache that cannot be written is skipped silently: it only ever
        saves time."""
        if self.folder is None:
            return
        if not self._put and not self._drops_stale():
            return
        try:
            with self._writing(f"{self._name}.pickle") as stream:
                stream.write(_MAGIC)
                hasher = hashlib.blake2b(digest_size=_DIGEST_SIZE)
                for record in self._kept():
                    data = pickle.dumps(record, protocol=pickle.HIGHEST_PROTOCOL)
                    hasher.update(data)
                    stream.write(data)
                stream.write(hasher.digest())
        except (OSError, pickle.PicklingError, TypeError, AttributeError, RecursionError):
            return

    def _drops_stale(self) -> bool:
        if self._entries is None:
            return False  # never read: nothing of it was used
        touched = self.owners_used
        return any(owner in touched and key not in self._used for key, (owner, _) in self._stored.items())


def _checked_body(data: bytes) -> memoryview | None:
    """What a cache file holds between its magic line and its checksum; None when the
    checksum does not match (truncated, damaged, not a cache file)."""
    if not data.startswith(_MAGIC) or len(data) < len(_MAGIC) + _DIGEST_SIZE:
        return None
    body = memoryview(data)[len(_MAGIC):-_DIGEST_SIZE]
    if hashlib.blake2b(body, digest_size=_DIGEST_SIZE).digest() != data[-_DIGEST_SIZE:]:
        return None
    return body


def _trusted_load(data: bytes | io.BytesIO) -> Any | None:
    try:
        return _TrustedUnpickler(data if isinstance(data, io.BytesIO) else io.BytesIO(data)).load()
    except Exception:  # noqa: BLE001 - whatever is wrong with it, it is not used
        return None


def _mark(folder: int) -> None:
    """What tells git and backup tools to leave the cache folder alone. A marker found as
    anything but a plain file (a link to a file elsewhere) is replaced; one that cannot be
    (a folder of that name) is left out."""
    for name, text in _MARKERS:
        if not is_regular(folder, name):
            with contextlib.suppress(OSError), replaced(folder, name) as stream:
                stream.write(text.encode("utf-8"))
