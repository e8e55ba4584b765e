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

from dataclasses import dataclass, field, replace

from torchlint.project_files import Listing, Stamp, stamp_of
from torchlint.semantic.project import ProjectFacts

# One step of a file: (what it is, what it was given, what it gave back)
#   ("config", None, digest of its `torch._dynamo.config` assignments)
#   ("outline", parse_always, digest of the outline)
#   ("naming", key of the names searched for, whether the text names one)
#   ("lint", cache key of the facts it was linted with, digest of what its kinds tell the project)
Step = tuple[str, object, object]
__all__ = ["FileRecord", "RunRecord", "Stamp", "Step", "stamp_of"]


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
