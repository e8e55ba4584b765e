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
    """Relative to ``cwd`` when under it, else the absolute path; "-" stays "-"."""
    relative = relative_to_cwd(path, cwd)
    return path if relative is None else str(relative)


def _spellings(cwd: Path) -> list[Path]:
    spellings = [cwd]
    try:
        resolved = cwd.resolve()
    except OSError:
        return spellings
    if resolved != cwd:
        spellings.append(resolved)
    return spellings
