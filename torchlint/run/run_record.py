"""What the last run found of each file of a project, kept so that the next one neither
reads an unchanged file again nor walks the project's folders again, nor solves the project
again while what it reads of every file is the same.

A file whose stat is what the record says holds the bytes it held then (its hash stands);
the listing says which files the project has while its folders are unchanged; the solved
project says what each file reported, and how the project answered its findings' facts.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from torchlint.analysis.plain_data import loads
from torchlint.analysis.project_hints import FileHints, ProjectHints
from torchlint.files.project_files import Listing, Stamp, stamp_of, vouches

__all__ = ["FileRecord", "RunRecord", "SolvedFile", "SolvedProject", "Stamp", "content_hash", "file_content", "stamp_of"]


@dataclass(frozen=True)
class FileRecord:
    content: str  # hash of the bytes read
    stamp: Stamp | None  # the file's stat when they were read


@dataclass(frozen=True)
class SolvedFile:
    """One file as the last solve of its project saw it."""

    inputs: str  # a digest of what its analysis read: its content and settings
    interface: str  # what the solve read of the analysis (`FileAnalysis.interface`)
    parse_always: bool  # parsed because the solve needed it, whatever the text test says
    # FileHints as plain data: what its text tells the project before any file is analysed (read
    # only for the files a run changed, so the record loads without building them all)
    encoded_hints: bytes
    # the cache entry of {Fact: bool}: the project's answer to each fact its findings ask
    answers: str
    # as plain data: its findings kept after `noqa` (a list of Diagnostic), or why it has none (FileError)
    outcome: bytes

    @property
    def hints(self) -> FileHints:
        found = loads(self.encoded_hints)
        return found if isinstance(found, FileHints) else FileHints()


@dataclass(frozen=True)
class SolvedProject:
    """The last solve of a project: where every file's interface is still the same, so is the
    solution, and a changed file's findings are answered from it."""

    files: dict[str, SolvedFile]
    hints: ProjectHints
    # what made the solve parse files the text test skips: those files, and class names
    # whose constructions it looked for in them
    unparsed_needed: frozenset[str]
    constructions_needed: frozenset[str]
    # the configured entry points that named a function (a run this solve answers measures
    # the entry points its settings name against them)
    entry_points_matched: frozenset[str] = frozenset()


@dataclass(frozen=True)
class RunRecord:
    files: dict[str, FileRecord] = field(default_factory=dict)
    # how the files of the project were found, for the next run to find them without a walk
    listing: Listing | None = None
    solved: SolvedProject | None = None


def content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=32).hexdigest()


def file_content(path: Path, known: FileRecord | None, known_started: int | None = None) -> tuple[str | None, Stamp | None]:
    """A hash of the file's bytes and its stamp when they were read; (None, None) when it
    cannot be read. Where ``known`` (kept by a run that started at ``known_started``) has
    the same stamp, and one old enough then to vouch for the bytes, its hash stands and they
    are not read; the file is still opened, so one made unreadable since, or replaced by
    something that is not a regular file, is an error as it is without the cache."""
    try:
        # Opened without blocking: a named pipe is refused instead of waited on.
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None, None
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            return None, None
        stamp = (status.st_mtime_ns, status.st_size, status.st_ino)
        # A file saved just before it was read may be saved again within the same tick of
        # the file system's clock, with the same size: then its stamp vouches for nothing.
        if known is not None and known.stamp == stamp and vouches(stamp[0], known_started):
            return known.content, stamp
        with open(descriptor, "rb", closefd=False) as handle:
            return content_hash(handle.read()), stamp
    except OSError:
        return None, None
    finally:
        os.close(descriptor)
