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
from dataclasses import dataclass
from pathlib import Path

from torchlint.settings.config import ConfigResolver
from torchlint.files.discovery import WALK_SETTINGS_FILES, discover, folder_names

# (st_mtime_ns, st_size, st_ino): a file whose stat is unchanged is taken to be unchanged.
Stamp = tuple[int, int, int]
# A folder or file changed this recently before it was looked at may change again within
# the same tick of the file system's clock, leaving its time as it was: its time vouches
# for nothing. What a run saw is kept as it was; whether a time vouches is decided when it
# is read back, against when that run started (`vouches`), so the same files always
# give the same record.
_RECENT_NS = 2_000_000_000


def vouches(modified: int | None, started: int | None) -> bool:
    """Whether a file or folder last modified at ``modified`` (ns) was already that old when
    a run that started at ``started`` looked at it: changed since, it has another time."""
    return modified is not None and started is not None and modified < started - _RECENT_NS


def stamp_of(path: str | Path) -> Stamp | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return (stat.st_mtime_ns, stat.st_size, stat.st_ino)


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


@dataclass(frozen=True)
class Listing:
    """What a walk of whole project folders found, and what tells whether it still holds:
    each folder walked with its modification time and the names the walk took from it,
    and the files that steer the walk (`.gitignore`, configuration, `.git/info/exclude`),
    in those folders and above them. Adding, removing or renaming an entry changes its
    folder's time; a folder whose time changed holds while its names are the same."""

    searched: tuple[str, ...]
    files: tuple[str, ...]
    # (folder, st_mtime_ns, names)
    folders: tuple[tuple[str, int, tuple[str, ...]], ...]
    # a file that steers the walk, and its stamp (None: absent)
    steering: tuple[tuple[str, Stamp | None], ...]

    def refreshed(self, started: int | None) -> Listing | None:
        """This listing with the times as they are now, when what it found still holds;
        None when the walk must be done again. ``started``: when the run that made it
        started (a folder's time from just before then is checked by its names)."""
        folders = []
        for folder, modified, names in self.folders:
            try:
                current = os.stat(folder).st_mtime_ns
            except OSError:
                return None
            if current != modified or not vouches(modified, started):
                try:
                    with os.scandir(folder) as iterator:
                        if folder_names(iterator) != names:
                            return None
                except OSError:
                    return None
            folders.append((folder, current, names))
        for path, stamp in self.steering:
            if _steering_stamp(path) != stamp or (stamp is not None and not vouches(stamp[0], started)):
                return None
        return Listing(self.searched, self.files, tuple(folders), self.steering)


def _steering_stamp(path: str) -> Stamp | None:
    """A steering file's stamp; only whether it exists for `.git`, whose folder every git
    command touches."""
    if os.path.basename(path) == ".git":
        return (0, 0, 0) if os.path.lexists(path) else None
    return stamp_of(path)


def _steering_files(roots: Sequence[Path], folders: Iterable[tuple[str, int, tuple[str, ...]]]) -> list[str]:
    """The files that may steer a walk of ``roots``: in every folder above them (up to the
    file system's root) and in every folder walked that holds them."""
    paths: list[str] = []
    above = {str(folder) for root in roots for folder in root.parents}
    for folder in sorted(above):
        paths.extend(os.path.join(folder, name) for name in (*WALK_SETTINGS_FILES, ".git"))
        paths.append(os.path.join(folder, ".git", "info", "exclude"))
    for folder, _, names in folders:
        paths.extend(os.path.join(folder, name) for name in WALK_SETTINGS_FILES if name in names)
        if ".git" in names or ".git/" in names:
            paths.append(os.path.join(folder, ".git", "info", "exclude"))
    return paths


def _walk(searched: list[Path], resolver: ConfigResolver) -> tuple[list[Path], Listing | None]:
    # Excludes apply to the files beside a named one as to those found in folders.
    whole = all(path.is_dir() for path in searched)
    found = discover(searched, resolver, force_exclude=True, keep_folders=whole)
    if not whole or resolver.explicit is not None:
        return found.files, None
    steering = tuple((path, _steering_stamp(path)) for path in _steering_files(searched, found.folders))
    listing = Listing(tuple(map(str, searched)), tuple(map(str, found.files)), tuple(found.folders), steering)
    return found.files, listing


def _files_in(folder: Path) -> list[Path]:
    """The Python files directly in ``folder``; none where it cannot be listed, such as the
    folder of an editor's buffer that is yet to be made."""
    try:
        return sorted(path for path in folder.iterdir() if path.suffix in (".py", ".pyi") and path.is_file())
    except OSError:
        return []


def other_project_files(
    named: Sequence[str | Path],
    files: Sequence[Path],
    resolver: ConfigResolver,
    known: Listing | None = None,
    known_started: int | None = None,
) -> tuple[list[Path], Listing | None]:
    """The files of the projects of ``files`` that the run did not name, excludes applied,
    and the listing of the walk that found them (None where there is none to keep).

    ``known``: the listing of an earlier walk (by a run that started at ``known_started``); while it holds, its files are taken
    without walking again. A named folder that holds a whole project needs nothing more:
    `torchlint check .` reads nothing twice."""
    folders = [Path(os.path.abspath(path)) for path in named if Path(path).is_dir()]
    outside = [root for root in project_roots(files, resolver) if not any(_covers(f, root) for f in folders)]
    if not outside:
        return [], None
    searched = []
    for root in outside:
        if _whole_tree(root, resolver):
            searched.append(root)
        else:
            searched.extend(_files_in(root))
    listing = known.refreshed(known_started) if known is not None and known.searched == tuple(map(str, searched)) else None
    if listing is not None:
        found = [Path(path) for path in listing.files]
    else:
        found, listing = _walk(searched, resolver)
    already = {os.path.abspath(path) for path in files}
    return [path for path in found if str(path) not in already], listing
