"""A temporary copy of the code that fixes changed, for running targets again without
touching the user's files.

Python finds a module by its import root (the folder above its top package, or a lone
module's folder), so each changed file's whole top-level package is copied, with the fixed
texts written over the copies; with the copies' roots first on the path, the fixed code is
imported in place of the original and every other module still resolves.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from torchlint.fix.fixing import write_fixed


def import_root(path: Path) -> tuple[Path, Path]:
    """(the folder Python imports ``path`` from, the top package folder or lone module under it)."""
    top = path
    while (top.parent / "__init__.py").is_file() and top.parent != top.parent.parent:
        top = top.parent
    return top.parent, top


@dataclass
class FixedCopy:
    folder: Path
    # original import root -> its copy
    roots: dict[Path, Path] = field(default_factory=dict)
    # path of a copied file -> the original (the files that ran again are named by their copies)
    originals: dict[str, str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    @property
    def import_path(self) -> list[str]:
        return [str(copy) for copy in self.roots.values()]

    def copy_of(self, path: Path) -> Path:
        root, _ = import_root(path)
        return self.roots[root] / path.relative_to(root)

    def original_of(self, path: str) -> str:
        """The original of a file under a copy's root (its own path where it is no copy)."""
        if path in self.originals:
            return self.originals[path]
        for root, copy in self.roots.items():
            if Path(path).is_relative_to(copy):
                return str(root / Path(path).relative_to(copy))
        return path


def _link_vendored_libraries(root: Path, root_copy: Path) -> None:
    """A wheel repaired by auditwheel keeps the shared libraries its extension modules load in a
    `<name>.libs` folder beside its package, which they find relative to their own folder: the
    copy's root links to each."""
    for libraries in root.glob("*.libs"):
        link = root_copy / libraries.name
        if libraries.is_dir() and not link.exists():
            link.symlink_to(libraries, target_is_directory=True)


def make_copy(fixed: Mapping[str, str], also: Iterable[Path], folder: Path) -> FixedCopy:
    """Copy the packages of the files in ``fixed`` (path -> fixed text) and of ``also`` (files
    to run from the copy, such as target files) into ``folder``, then write the fixed texts."""
    folder = folder.resolve()
    copy = FixedCopy(folder)
    tops: dict[Path, Path] = {}
    for path in [*map(Path, fixed), *also]:
        path = Path(os.path.realpath(path))
        root, top = import_root(path)
        if root not in copy.roots:
            copy.roots[root] = folder / f"root{len(copy.roots)}"
            copy.roots[root].mkdir(parents=True)
        tops[top] = copy.roots[root] / top.name
    for root, root_copy in copy.roots.items():
        _link_vendored_libraries(root, root_copy)
    for top, target in tops.items():
        if top.is_dir():
            shutil.copytree(top, target, ignore=shutil.ignore_patterns("__pycache__"), dirs_exist_ok=True)
        else:
            shutil.copy2(top, target)
    for path, text in fixed.items():
        original = Path(os.path.realpath(path))
        target = copy.copy_of(original)
        copy.originals[str(target)] = str(original)
        try:
            failure = write_fixed(target, text, target.read_bytes())
        except OSError as error:
            failure = str(error)
        if failure is not None:
            copy.errors.append(f"{path}: the fixed copy could not be written: {failure}")
    for path in also:
        original = Path(os.path.realpath(path))
        copy.originals[str(copy.copy_of(original))] = str(original)
    return copy
