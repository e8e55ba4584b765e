"""The user's own cache folder (`$XDG_CACHE_HOME/torchlint`, else `~/.cache/torchlint`) and
the secret key in it that signs every file torchlint caches.

A project's cache folder travels with the project: a repository can commit one, a Docker
image or a shared checkout can hold one another user wrote. So each cache file carries a MAC
under a key that lives outside every project, readable by this user alone: a file that
torchlint did not write for this user does not check out, and is written again.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import stat
from functools import lru_cache

KEY_FILE = "cache-key"
_KEY_SIZE = 32
_MAC_SIZE = 32
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def user_cache_folder() -> str | None:
    """None where there is no home folder to keep it in (a relative path would land in
    whatever folder the command runs in)."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):  # as the XDG specification says: a relative one is ignored
        base = os.path.join(os.path.expanduser("~"), ".cache")
    if not os.path.isabs(base):
        return None
    return os.path.join(base, "torchlint")


def owned_alone(path: str, others: int) -> bool:
    """A file or folder this user owns whose permission bits in ``others`` are all clear."""
    try:
        status = os.stat(path)
    except OSError:
        return False
    return status.st_uid == os.getuid() and status.st_mode & others == 0


def cache_key() -> bytes | None:
    """This user's key, made on first use; None where it cannot be kept safely (no home
    folder, a folder others may write to, no owners at all as on Windows): then nothing
    cached can be trusted, and the cache is off."""
    folder = user_cache_folder()
    if folder is None or not hasattr(os, "getuid"):
        return None
    return _key_in(folder)


@lru_cache(maxsize=None)
def _key_in(folder: str) -> bytes | None:
    with contextlib.suppress(OSError):
        os.makedirs(folder, mode=0o700, exist_ok=True)
    if not owned_alone(folder, 0o022):
        return None
    path = os.path.join(folder, KEY_FILE)
    key = _read_key(path)
    if key is None and not os.path.lexists(path):
        _make_key(folder, path)
        key = _read_key(path)
    return key


def _read_key(path: str) -> bytes | None:
    try:
        descriptor = os.open(path, os.O_RDONLY | _NOFOLLOW)
    except OSError:
        return None
    try:
        status = os.fstat(descriptor)
        # Another user's key, or one others could read, signs nothing of this user's.
        if not stat.S_ISREG(status.st_mode) or status.st_uid != os.getuid() or status.st_mode & 0o077:
            return None
        key = os.read(descriptor, _KEY_SIZE + 1)
    except OSError:
        return None
    finally:
        os.close(descriptor)
    return key if len(key) == _KEY_SIZE else None


def _make_key(folder: str, path: str) -> None:
    """Written whole under a name of its own, then linked into place: two commands starting
    at once agree on whichever key was linked first, and none reads half a key."""
    temporary = os.path.join(folder, f".{KEY_FILE}.{os.urandom(6).hex()}.tmp")
    try:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
        try:
            os.write(descriptor, os.urandom(_KEY_SIZE))
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
        with contextlib.suppress(FileExistsError):
            os.link(temporary, path)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary)


def signed(key: bytes, label: str, body: bytes | memoryview) -> bytes:
    """The MAC of ``body`` kept under ``label`` (where it is kept: a file moved to another
    name or folder does not check out there)."""
    mac = hmac.new(key, label.encode("utf-8", "surrogatepass") + b"\0", hashlib.sha256)
    mac.update(body)
    return mac.digest()


def checked_body(key: bytes, label: str, magic: bytes, data: bytes) -> memoryview | None:
    """What ``data`` holds between ``magic`` and its MAC; None where it is not a file
    signed with ``key`` under ``label``."""
    if not data.startswith(magic) or len(data) < len(magic) + _MAC_SIZE:
        return None
    body = memoryview(data)[len(magic):-_MAC_SIZE]
    if not hmac.compare_digest(signed(key, label, body), data[-_MAC_SIZE:]):
        return None
    return body
