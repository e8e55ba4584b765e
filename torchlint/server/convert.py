"""torchlint's records in the protocol's terms: positions, diagnostics and edits.

torchlint counts rows and columns from 1, columns in characters (code points); the
protocol counts from 0, in the units the client and server agreed on (UTF-16 unless the
client offers another), so a column moves past a character outside the Basic Multilingual
Plane by two in UTF-16 and by one here.
"""

from __future__ import annotations

from collections.abc import Sequence

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from torchlint.report.diagnostic import Diagnostic, Edit, FileError, Location, Severity

SOURCE = "torchlint"

_SEVERITY = {Severity.ERROR: types.DiagnosticSeverity.Error, Severity.WARNING: types.DiagnosticSeverity.Warning}


class Positions:
    """Converts between torchlint's locations and the client's positions in one text."""

    def __init__(self, lines: Sequence[str], codec: PositionCodec) -> None:
        self.lines = lines
        self.codec = codec

    def position(self, location: Location) -> types.Position:
        row = max(location.row - 1, 0)
        if row >= len(self.lines):
            # A finding at the end of a file that ends without a newline.
            return types.Position(line=len(self.lines), character=0)
        at = types.Position(line=row, character=max(location.column - 1, 0))
        return self.codec.position_to_client_units(self.lines, at)

    def range(self, start: Location, end: Location) -> types.Range:
        return types.Range(start=self.position(start), end=self.position(end))

    def location(self, position: types.Position) -> Location:
        at = self.codec.position_from_client_units(self.lines, position)
        return Location(at.line + 1, at.character + 1)


def to_lsp(diagnostic: Diagnostic, uri: str, positions: Positions) -> types.Diagnostic:
    """One finding as the client shows it: its code linked to PyTorch's page for the break,
    the graph-break ids in the message (where a reader looks), related places beside it."""
    message = diagnostic.message
    if diagnostic.gb_ids:
        message += f" [{', '.join(diagnostic.gb_ids)}]"
    related = [
        types.DiagnosticRelatedInformation(
            location=types.Location(uri=uri, range=positions.range(item.location, item.end_location)),
            message=f"{item.code} {item.message}",
        )
        for item in diagnostic.related
    ]
    return types.Diagnostic(
        range=positions.range(diagnostic.location, diagnostic.end_location),
        message=message,
        severity=_SEVERITY.get(diagnostic.severity, types.DiagnosticSeverity.Error),
        code=diagnostic.code,
        code_description=types.CodeDescription(href=diagnostic.url) if diagnostic.url else None,
        source=SOURCE,
        related_information=related or None,
        # What a code action needs to find the finding again: the client sends it back.
        data={"code": diagnostic.code, "gb_ids": list(diagnostic.gb_ids)},
    )


def file_error(error: FileError) -> types.Diagnostic:
    """A file torchlint could not check at all (too large, undecodable): said on its first line."""
    return types.Diagnostic(
        range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)),
        message=f"torchlint could not check this file: {error.message}",
        severity=types.DiagnosticSeverity.Error,
        source=SOURCE,
    )


def text_edit(edit: Edit, positions: Positions) -> types.TextEdit:
    return types.TextEdit(range=positions.range(edit.location, edit.end_location), new_text=edit.content)


def whole_text_edit(new: str, positions: Positions) -> types.TextEdit:
    """Replace the whole text ``positions`` counts in by ``new`` (fix-all's result, as ruff's
    server sends it)."""
    end = types.Position(line=len(positions.lines), character=0)
    return types.TextEdit(range=types.Range(start=types.Position(line=0, character=0), end=end), new_text=new)


def overlaps(diagnostic: types.Diagnostic, wanted: types.Range) -> bool:
    start, end = diagnostic.range.start, diagnostic.range.end
    before = (end.line, end.character) < (wanted.start.line, wanted.start.character)
    after = (start.line, start.character) > (wanted.end.line, wanted.end.character)
    return not (before or after)
