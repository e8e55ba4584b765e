"""The plain records every part of torchlint passes around."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"


class Applicability(str, enum.Enum):
    """How safe a fix is, in ruff's vocabulary."""

    SAFE = "safe"
    UNSAFE = "unsafe"
    DISPLAY_ONLY = "display-only"


@dataclass(frozen=True, order=True)
class Location:
    """A 1-based row and a 1-based column counted in characters."""

    row: int
    column: int


@dataclass(frozen=True)
class Edit:
    content: str
    location: Location
    end_location: Location


@dataclass(frozen=True)
class Fix:
    message: str
    applicability: Applicability
    edits: tuple[Edit, ...]


@dataclass(frozen=True)
class Related:
    """Another place a finding points at: the break inside a loop that a TL6xx finding reports."""

    location: Location
    end_location: Location
    code: str
    message: str


@dataclass(frozen=True)
class Diagnostic:
    """One finding in one file."""

    path: str
    code: str
    name: str
    message: str
    location: Location
    end_location: Location
    severity: Severity = Severity.ERROR
    suggestion: str | None = None
    gb_ids: tuple[str, ...] = ()
    url: str | None = None
    fix: Fix | None = None
    # Row a `# noqa` comment belongs on: the first line of the enclosing statement.
    noqa_row: int | None = None
    related: tuple[Related, ...] = ()

    @property
    def fixable(self) -> bool:
        return self.fix is not None and self.fix.applicability is not Applicability.DISPLAY_ONLY

    def fix_applies(self, unsafe: bool) -> bool:
        """Whether `--fix` applies the fix: a safe one, or an unsafe one with `--unsafe-fixes`."""
        fix = self.fix
        return fix is not None and (
            fix.applicability is Applicability.SAFE or (unsafe and fix.applicability is Applicability.UNSAFE)
        )

    def sort_key(self) -> tuple[str, Location, str]:
        return (self.path, self.location, self.code)


@dataclass(frozen=True)
class FileError:
    """A file torchlint could not check at all (unreadable, undecodable, internal error)."""

    path: str
    message: str


@dataclass
class FileResult:
    path: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    # Source lines, kept only where a reporter shows excerpts.
    source: str | None = None
    # The hash of the bytes the findings were made from (None where they could not be read):
    # `--fix` edits a file only while it still holds those bytes.
    content: str | None = None
