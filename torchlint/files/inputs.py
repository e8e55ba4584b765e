"""Whether a file is one of a run's inputs, so that `-o` never writes a report over one.

A named file is compared by identity as well as by name: a symbolic link, a hard link or
another spelling of it is still the file. A walk finds only Python files, so a report such
as `report.sarif` is no input of a named folder and costs no walk; only a report with a
Python name is looked for among the files the folders hold.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence

from torchlint.settings.config import ConfigResolver
from torchlint.files.discovery import PYTHON_SUFFIXES, discover


def _stat(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except (OSError, ValueError):
        return None


def is_input(path: str | os.PathLike[str], named: Sequence[str], resolver: ConfigResolver, *, force_exclude: bool) -> bool:
    """Whether ``path`` is one of ``named`` or a file a walk of the named folders finds."""
    target = os.path.abspath(path)
    identity = _stat(target)
    folders = []
    for raw in named:
        if os.path.abspath(raw) == target:
            return True  # even a file that does not exist yet: the run means that file
        found = _stat(raw)
        if found is None:
            continue
        if stat.S_ISDIR(found.st_mode):
            folders.append(raw)
        elif identity is not None and os.path.samestat(found, identity):
            return True
    if identity is None or not folders or not target.endswith(PYTHON_SUFFIXES):
        return False
    walked = discover(folders, resolver, force_exclude=force_exclude)
    return any(
        (found := _stat(str(file))) is not None and os.path.samestat(found, identity) for file in walked.files
    )
