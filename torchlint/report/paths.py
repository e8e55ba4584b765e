"""How a finding's file is named to the reader."""

from __future__ import annotations

from pathlib import Path, PurePath

STDIN = "-"


def relative_to_cwd(path: str, cwd: Path) -> PurePath | None:
    """``path`` relative to ``cwd``, or None when it lies outside (or is stdin)."""
    if path == STDIN:
        return None
    absolute = Path(path)
    # Paths may have been resolved while cwd was not (a symlinked checkout), so try both.
    for base in _spellings(cwd):
        try:
            return absolute.relative_to(base)
        except ValueError:
            continue
    return None


def display_path(path: str, cwd: Path) -> str:
    """Relative to ``cwd`` when under it, else the absolute path; "-" stays "-". Printable:
    see `readable`."""
    return readable(os_path(path, cwd))


def os_path(path: str, cwd: Path) -> str:
    """`display_path` as the operating system spells it, for a program to open (a diff's
    header): the bytes of a name that is not UTF-8 kept as they are."""
    relative = relative_to_cwd(path, cwd)
    return path if relative is None else str(relative)


def readable(text: str) -> str:
    """``text`` that any stream or file takes: a name's bytes that are not UTF-8, which
    Python keeps as lone surrogates, are shown as \\xNN."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate that no file name gives: shown as \\udNNN
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _spellings(cwd: Path) -> list[Path]:
    spellings = [cwd]
    try:
        resolved = cwd.resolve()
    except OSError:
        return spellings
    if resolved != cwd:
        spellings.append(resolved)
    return spellings
