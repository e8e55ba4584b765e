"""Reading a Python file into text, decoded the way the interpreter would decode it."""

from __future__ import annotations

import codecs
import io
import os
import re
import stat
import tokenize
from pathlib import Path

# What ends a line for Python's tokenizer (and ruff): `\r\n`, `\r` or `\n`; a form feed or
# `\x85` does not, though `str.splitlines` splits there.
LINE_END = re.compile(r"\r\n?|\n")


def split_lines(text: str) -> list[str]:
    """The lines of ``text`` as Python counts them, without their endings; a final ending
    adds no empty line."""
    lines = LINE_END.split(text)
    if lines[-1] == "":
        lines.pop()
    return lines


class SourceError(Exception):
    """A file that cannot be read as Python text; the message names the cause, not the path."""


def os_error_cause(error: OSError) -> str:
    """A short, lower-case cause for an OSError, without the path it carries."""
    if isinstance(error, FileNotFoundError):
        return "no such file or directory"
    if isinstance(error, PermissionError):
        return "permission denied"
    if isinstance(error, IsADirectoryError):
        return "is a directory"
    return error.strerror or str(error)


_NOT_REGULAR = (
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def not_a_regular_file(mode: int) -> str | None:
    """Why a file of this mode cannot be source code, or None for a regular file.

    Reading a named pipe blocks until a writer comes, and a device may never end, so
    only regular files are read."""
    if stat.S_ISDIR(mode):
        return "is a directory"
    for test, kind in _NOT_REGULAR:
        if test(mode):
            return f"not a regular file ({kind})"
    return None


def read_source(path: Path) -> str:
    return decode_source(read_bytes(path))


def read_bytes(path: Path) -> bytes:
    """The bytes of a regular file; SourceError naming the cause for anything else."""
    try:
        # Opened without blocking, so a named pipe is refused instead of waited on.
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as error:
        if isinstance(error, FileNotFoundError) and Path(path).is_symlink():
            raise SourceError("broken symbolic link") from None
        raise SourceError(os_error_cause(error)) from None
    try:
        reason = not_a_regular_file(os.fstat(descriptor).st_mode)
        if reason is not None:
            raise SourceError(reason)
        with open(descriptor, "rb", closefd=False) as handle:
            data = handle.read()
    except OSError as error:
        raise SourceError(os_error_cause(error)) from None
    finally:
        os.close(descriptor)
    return data


def decode_source(data: bytes) -> str:
    if b"\0" in data:
        raise SourceError("binary file (contains NUL bytes)")
    encoding = _declared_encoding(data)
    body, skipped = data, 0
    if encoding == "utf-8-sig":
        # Decode the body as plain UTF-8 so error offsets count from the file's first byte.
        encoding = "utf-8"
        if data.startswith(codecs.BOM_UTF8):
            body, skipped = data[len(codecs.BOM_UTF8) :], len(codecs.BOM_UTF8)
    try:
        return body.decode(encoding)
    except UnicodeDecodeError as error:
        offset = error.start + skipped
        raise SourceError(f"cannot decode as {encoding}: {error.reason} at offset {offset}") from None
    except (UnicodeError, LookupError) as error:
        # A cookie may name a codec that exists but does not turn bytes into text (e.g. "hex").
        raise SourceError(f"cannot decode as {encoding}: {error}") from None


def _declared_encoding(data: bytes) -> str:
    """The encoding a BOM or PEP 263 cookie asks for, as tokenize reads it."""
    has_bom = data.startswith(codecs.BOM_UTF8)
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:
        message = str(error)
        if message.startswith("unknown encoding"):
            name = message.rpartition(": ")[2]
            raise SourceError(f"unknown encoding in coding cookie: {name}") from None
        if has_bom and message.startswith("encoding problem"):
            raise SourceError("a UTF-8 byte order mark conflicts with the coding cookie") from None
        # The first lines are not valid UTF-8 and carry no cookie: decoding them as
        # UTF-8 gives the precise reason and offset.
        return "utf-8-sig" if has_bom else "utf-8"
    return encoding


def encode_source(text: str, original: bytes) -> bytes:
    """``text`` in the encoding ``original`` was read in, its byte order mark kept."""
    encoding = _declared_encoding(original)
    if encoding == "utf-8-sig":
        return codecs.BOM_UTF8 + text.encode("utf-8", "surrogatepass")
    return text.encode(encoding)
