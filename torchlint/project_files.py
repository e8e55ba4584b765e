"""The project a named file belongs to: the other files whose calls reach into it.

pre-commit and editors name only the files that changed, but a `print` in `utils.py` is a
graph break only because `model.py` calls it from compiled code. So a run that names files
also reads the rest of their project (from the cache when unchanged) and reports only the
named files. The project's root is the folder of the configuration file that applies to a
file; without one, its top package. A file in no package and under no configuration has the
files beside it for its project (not the folders below: that could be a home folder).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from torchlint.config import ConfigResolver
from torchlint.discovery import discover


def outside_packages(folder: Path) -> Path:
    """``folder``, or the first folder above it that is not a package (holds no
    `__init__.py`): where the top package of what ``folder`` holds sits."""
    while folder != folder.parent and (folder / "__init__.py").is_file():
        folder = folder.parent
    return folder


def project_root(path: Path, resolver: ConfigResolver) -> Path:
    settings = resolver.for_path(path)
    if settings.config_path is not None:
        return Path(os.path.abspath(settings.root))
    start = path if path.is_dir() else path.parent
    outside = outside_packages(start)
    if outside == start:
        return start
    return outside / start.relative_to(outside).parts[0]  # the top package


def _whole_tree(root: Path, resolver: ConfigResolver) -> bool:
    """Whether the project is everything under ``root``, or only the files in it."""
    return resolver.for_path(root).config_path is not None or (root / "__init__.py").is_file()


def project_roots(files: Iterable[Path], resolver: ConfigResolver) -> list[Path]:
    """The roots of the projects ``files`` belong to, once each."""
    by_folder: dict[Path, Path] = {}
    roots: set[Path] = set()
    for file in files:
        folder = Path(os.path.abspath(file)).parent
        if folder not in by_folder:
            by_folder[folder] = project_root(Path(os.path.abspath(file)), resolver)
        roots.add(by_folder[folder])
    return sorted(roots)


def _covers(folder: Path, root: Path) -> bool:
    return folder == root or folder in root.parents


def other_project_files(
    named: Sequence[str | Path], files: Sequence[Path], resolver: ConfigResolver
) -> list[Path]:
    """The files of the projects of ``files`` that the run did not name, excludes applied.

    A named folder that holds a whole project needs nothing more: `torchlint check .`
    reads nothing twice."""
    folders = [Path(os.path.abspath(path)) for path in named if Path(path).is_dir()]
    outside = [root for root in project_roots(files, resolver) if not any(_covers(f, root) for f in folders)]
    if not outside:
        return []
    searched = []
    for root in outside:
        if _whole_tree(root, resolver):
            searched.append(root)
        else:
            searched.extend(sorted(path for path in root.iterdir() if path.suffix in (".py", ".pyi") and path.is_file()))
    # Excludes apply to the files beside a named one as to those found in folders.
    found = discover(searched, resolver, force_exclude=True)
    already = {Path(os.path.abspath(path)) for path in files}
    return [path for path in found.files if Path(os.path.abspath(path)) not in already]
