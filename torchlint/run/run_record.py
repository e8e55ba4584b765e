"""What a project run did with each of its files, kept so that a later run on a few edited
files can redo only their steps.

A project run is a chain of pure per-file steps. Each takes what the project told the
file so far (facts solved from every file's earlier steps) and gives back what the file
tells the project (its outline, the kinds its calls pass). When every other file is
unchanged and an edited file gives back, step for step, what it gave before, no file is
told anything new: every other step, and so the end of the run, is as recorded. The
pre-commit and editor case (one file edited inside a function) is then one file's work.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass, field, replace
from pathlib import Path

from torchlint.files.project_files import Listing, Stamp, stamp_of, trusted_stamp
from torchlint.project.index import ProjectFacts

# One step of a file: (what it is, what it was given, what it gave back)
#   ("config", None, digest of its `torch._dynamo.config` assignments)
#   ("outline", parse_always, digest of the outline)
#   ("naming", key of the names searched for, whether the text names one)
#   ("lint", cache key of the facts it was linted with, digest of what its kinds tell the project)
Step = tuple[str, object, object]
__all__ = ["FileRecord", "RunRecord", "Stamp", "Step", "content_hash", "file_content", "stamp_of"]


@dataclass(frozen=True)
class FileRecord:
    content: str  # hash of the bytes the steps read
    stamp: Stamp | None  # the file's stat when they were read
    settings: str  # digest of its settings
    steps: tuple[Step, ...]


@dataclass(frozen=True)
class RunRecord:
    # the facts every file starts from: the project's `torch._dynamo.config`
    plain: ProjectFacts
    files: dict[str, FileRecord] = field(default_factory=dict)
    # key of a "naming" step -> the class names it searched for
    namings: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # key of a "lint" step -> the facts it linted with
    facts: dict[str, ProjectFacts] = field(default_factory=dict)
    # how the files of the project were found, for the next run to find them without a walk
    listing: Listing | None = None

    def with_files(self, changed: dict[str, FileRecord], listing: Listing | None) -> RunRecord:
        return replace(self, files={**self.files, **changed}, listing=listing)


def content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=32).hexdigest()


def file_content(path: Path, known: FileRecord | None) -> tuple[str | None, Stamp | None]:
    """A hash of the file's bytes and its stamp when they were read; (None, None) when it
    cannot be read. Where ``known`` has the same stamp, its hash stands and the bytes are
    not read; the file is still opened, so one made unreadable since, or replaced by
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
        if known is not None and known.stamp == stamp:
            return known.content, stamp
        with open(descriptor, "rb", closefd=False) as handle:
            # A file saved this recently may be saved again within the same tick of the file
            # system's clock, with the same size: its stamp vouches for nothing next time.
            return content_hash(handle.read()), trusted_stamp(stamp)
    except OSError:
        return None, None
    finally:
        os.close(descriptor)
