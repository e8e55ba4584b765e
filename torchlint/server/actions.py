"""Code actions: a finding's fix as a quick fix (safe ones preferred, unsafe ones said to be),
a `# noqa: CODE` comment, and fix-all for the safe fixes of a file.

Every edit is checked as `--fix` checks its passes: a text that would not compile is never
offered.
"""

from __future__ import annotations

from dataclasses import dataclass

from lsprotocol import types

from torchlint.fix.fix_edits import splice
from torchlint.fix.fixing import compile_error, fix_text
from torchlint.report.diagnostic import Applicability, Diagnostic, Edit, Location
from torchlint.report.suppression import LINE_NOQA
from torchlint.server.convert import Positions, text_edit, whole_text_edit
from torchlint.server.live_project import LiveProject

FIX_ALL = "source.fixAll.torchlint"


def _keeps_compiling(text: str, new: str, uri: str) -> bool:
    """Whether an edit leaves a text that compiled compiling (one that did not is the user's
    to mend: a fix elsewhere in it is judged by the parse the check made)."""
    return compile_error(new, uri) is None or compile_error(text, uri) is not None


@dataclass(frozen=True)
class Target:
    """The document an action edits, and the form of edit its client takes."""

    uri: str
    version: int | None
    # the client announced `workspace.workspaceEdit.documentChanges`: edits name the version
    document_changes: bool


def _workspace_edit(target: Target, edits: list[types.TextEdit]) -> types.WorkspaceEdit:
    if not target.document_changes:
        return types.WorkspaceEdit(changes={target.uri: edits})
    document = types.OptionalVersionedTextDocumentIdentifier(uri=target.uri, version=target.version)
    return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(text_document=document, edits=edits)])


def quick_fix(
    diagnostic: Diagnostic, shown: types.Diagnostic, text: str, positions: Positions, target: Target
) -> types.CodeAction | None:
    fix = diagnostic.fix
    if fix is None or fix.applicability is Applicability.DISPLAY_ONLY or not fix.edits:
        return None
    if not _keeps_compiling(text, splice(text, fix.edits), target.uri):
        return None
    safe = fix.applicability is Applicability.SAFE
    title = f"{diagnostic.code}: {fix.message}" + ("" if safe else " (unsafe fix)")
    return types.CodeAction(
        title=title,
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[shown],
        is_preferred=safe,
        edit=_workspace_edit(target, [text_edit(edit, positions) for edit in fix.edits]),
    )


def noqa_edit(diagnostic: Diagnostic, lines: list[str]) -> Edit | None:
    """The edit that suppresses the finding: its code added to the `# noqa` of the row the
    finding's statement starts on, or a new comment at the row's end; None where the row's
    comment already covers every code."""
    row = diagnostic.noqa_row or diagnostic.location.row
    if not 1 <= row <= len(lines):
        return None
    line = lines[row - 1].rstrip("\r\n")
    existing = LINE_NOQA.search(line)
    if existing is not None:
        if existing.group("codes") is None:
            return None  # a bare noqa comment covers every code already
        column = existing.end("codes") + 1
        return Edit(f", {diagnostic.code}", Location(row, column), Location(row, column))
    end = len(line) + 1
    return Edit(f"  # noqa: {diagnostic.code}", Location(row, end), Location(row, end))


def noqa_action(
    diagnostic: Diagnostic, shown: types.Diagnostic, text: str, positions: Positions, target: Target
) -> types.CodeAction | None:
    edit = noqa_edit(diagnostic, list(positions.lines))
    if edit is None or not _keeps_compiling(text, splice(text, [edit]), target.uri):
        return None
    return types.CodeAction(
        title=f"{diagnostic.code}: add `# noqa: {diagnostic.code}`",
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[shown],
        edit=_workspace_edit(target, [text_edit(edit, positions)]),
    )


def fixed_text(project: LiveProject, path: str, text: str) -> str | None:
    """``text`` with every safe fix applied, pass after pass as `--fix` applies them; None
    where there is nothing to fix."""
    result = fix_text(text, lambda current: project.findings_of_text(path, current), False, path)
    return result.text if result.fixed and result.text != text else None


def fix_all_action(target: Target, new: str, positions: Positions) -> types.CodeAction:
    return types.CodeAction(
        title="torchlint: fix all safe fixes",
        kind=FIX_ALL,
        edit=_workspace_edit(target, [whole_text_edit(new, positions)]),
    )
