"""The code of the methods `dataclasses` writes, compiled once and kept between commands.

For each of libcst's 230-odd dataclasses, `dataclasses` writes `__init__`, `__repr__`,
`__eq__` and the rest as source text and compiles it: the same texts, in every command,
about half of the 0.3 s it takes to import libcst. While torchlint imports what a command
needs, `dataclasses` is handed the code compiled for the same text last time, from a file
in the user's cache folder (`$XDG_CACHE_HOME/torchlint`, else `~/.cache/torchlint`), one
per Python build. Nothing else changes: the code is what compiling that text again gives.

The file holds code that runs, so it is read only from a folder that its owner alone may
write to, and only when it carries the MAC of this user's cache key (`user_cache`): a file
torchlint did not write for this user, or one that cannot be read or is not such code, is
passed over and written again.
`TORCHLINT_NO_CODE_CACHE=1` turns all of this off.
"""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
import marshal
import os
import sys
import zlib
from collections.abc import Iterator

from torchlint.user_cache import cache_key, checked_body, owned_alone, signed, user_cache_folder

DISABLE = "TORCHLINT_NO_CODE_CACHE"
# Texts of older versions of libcst or torchlint are dropped once the file grows past this.
_MAX_ENTRIES = 5000
_CODE = type(compile("", "<string>", "exec"))
_MAGIC = b"torchlint-dataclass-code 2\n"


def cache_file() -> str | None:
    folder = user_cache_folder()
    if folder is None:
        return None
    build = zlib.crc32(sys.version.encode())  # marshal's format and the bytecode follow the build
    return os.path.join(folder, f"dataclass-code-{sys.implementation.cache_tag}-{build:08x}.marshal")


def _load(path: str, key: bytes) -> dict[str, object]:
    # Neither the folder nor the file may be another user's, or writable by anyone else.
    if not (owned_alone(os.path.dirname(path), 0o022) and owned_alone(path, 0o022)):
        return {}
    try:
        with open(path, "rb") as stream:
            body = checked_body(key, os.path.basename(path), _MAGIC, stream.read())
        loaded = marshal.loads(body) if body is not None else None
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if not isinstance(loaded, dict):
        return {}
    return {text: code for text, code in loaded.items() if isinstance(text, str) and type(code) is _CODE}


def _save(path: str, key: bytes, known: dict[str, object], added: dict[str, object]) -> None:
    entries = {**known, **added} if len(known) + len(added) <= _MAX_ENTRIES else added
    body = marshal.dumps(entries)
    temporary = f"{path}.{os.getpid()}.tmp"
    try:
        with os.fdopen(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as stream:
            stream.write(_MAGIC + body + signed(key, os.path.basename(path), body))
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)


@contextlib.contextmanager
def kept_between_commands() -> Iterator[None]:
    """While inside, dataclasses defined anywhere compile each method's text only if no
    earlier command did."""
    path = cache_file()
    # Without a key (no home folder, no owners as on Windows) nothing tells who wrote the file.
    key = cache_key() if path is not None and not os.environ.get(DISABLE) else None
    if path is None or key is None:
        yield
        return
    known = _load(path, key)
    added: dict[str, object] = {}

    def exec_kept(source, globals=None, locals=None):
        if type(source) is str:
            code = known.get(source)
            if code is None:
                # As `exec` would: the text alone decides, with no `__future__` of the caller's.
                code = added[source] = compile(source, "<string>", "exec", dont_inherit=True)
            source = code
        return builtins.exec(source, globals, locals)

    # `dataclasses` calls `exec` by name: a module global of that name comes before the builtin.
    dataclasses.exec = exec_kept  # type: ignore[attr-defined]
    try:
        yield
    finally:
        if vars(dataclasses).get("exec") is exec_kept:
            del dataclasses.exec  # type: ignore[attr-defined]
        if added:
            _save(path, key, known, added)
