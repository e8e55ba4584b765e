"""`torchlint server` driven over stdio by a real language client (pytest-lsp), on a real
project on disk: open, change, code actions, applying their edits, hover, fix-all, a
buffer that does not parse, shutdown. What the server publishes is what `torchlint check`
reports for the same text."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

pytest.importorskip("pygls")
pytest_lsp = pytest.importorskip("pytest_lsp")

from lsprotocol import types  # noqa: E402
from pygls.uris import from_fs_path  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient  # noqa: E402

from editor_project import HELPERS, MODEL, checked, start_session, write_project  # noqa: E402

# waiting for the server's answer, at most
TIMEOUT_S = 60


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(tmp_path)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "torchlint", "server"]))
async def client(lsp_client: LanguageClient, project: Path):
    lsp_client.registrations = []
    await start_session(lsp_client, project, lsp_client.registrations)
    yield
    await lsp_client.shutdown_session()


def _uri(path: Path) -> str:
    return from_fs_path(str(path))


def _open(client: LanguageClient, path: Path, text: str | None = None) -> None:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=_uri(path), language_id="python", version=1, text=text if text is not None else path.read_text()
            )
        )
    )


def _replace(client: LanguageClient, path: Path, text: str, version: int) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=_uri(path), version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


async def _diagnostics(client: LanguageClient, path: Path, until=lambda found: True) -> list[types.Diagnostic]:
    """The diagnostics published for ``path`` once ``until`` holds for them."""
    uri = _uri(path)
    deadline = asyncio.get_running_loop().time() + TIMEOUT_S
    while asyncio.get_running_loop().time() < deadline:
        found = client.diagnostics.get(uri)
        if found is not None and until(list(found)):
            return list(found)
        await asyncio.sleep(0.05)
    raise AssertionError(f"no diagnostics as expected for {path.name}: {client.diagnostics.get(uri)}")


def _codes(found: list[types.Diagnostic]) -> list[str]:
    return sorted(str(d.code) for d in found)


def _as_check(found: list[types.Diagnostic]) -> list[tuple[str, int, int]]:
    return sorted((str(d.code), d.range.start.line + 1, d.range.start.character + 1) for d in found)


def _apply(text: str, edits: list[types.TextEdit]) -> str:
    """``text`` with the edits made (positions in UTF-16; the test texts are ASCII)."""
    lines = text.splitlines(keepends=True)

    def offset(position: types.Position) -> int:
        return sum(len(line) for line in lines[: position.line]) + position.character

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end) :]
    return text


async def _code_actions(
    client: LanguageClient, path: Path, at: types.Range, diagnostics: list[types.Diagnostic], only: list[str] | None = None
) -> list[types.CodeAction]:
    return await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=_uri(path)),
            range=at,
            context=types.CodeActionContext(diagnostics=diagnostics, only=only),
        )
    )


async def _opened_actions(client: LanguageClient, path: Path, code: str) -> list[types.CodeAction]:
    """The code actions offered on the first ``code`` finding of ``path``, once opened."""
    _open(client, path)
    found = await _diagnostics(client, path, lambda found: bool(found))
    shown = next(d for d in found if d.code == code)
    return await _code_actions(client, path, shown.range, [shown])


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "torchlint", "server"]))
async def unversioned_client(lsp_client: LanguageClient, project: Path):
    """A client that did not announce `workspace.workspaceEdit.documentChanges`."""
    from pytest_lsp import client_capabilities

    capabilities = client_capabilities("visual-studio-code")
    capabilities.workspace.workspace_edit.document_changes = False
    await start_session(lsp_client, project, capabilities=capabilities)
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_a_client_without_document_changes_gets_plain_changes(unversioned_client: LanguageClient, project: Path):
    model = project / "pkg" / "model.py"
    offered = await _opened_actions(unversioned_client, model, "TL101")
    assert offered and all(action.edit.document_changes is None and list(action.edit.changes) == [_uri(model)] for action in offered)
    noqa = next(action for action in offered if "noqa" in action.title)
    fixed = _apply(model.read_text(), action_edits := noqa.edit.changes[_uri(model)])
    assert action_edits and "# noqa: TL101" in fixed


def _edits(action: types.CodeAction) -> list[types.TextEdit]:
    assert action.edit is not None and action.edit.document_changes
    return [edit for change in action.edit.document_changes for edit in change.edits]


@pytest.mark.asyncio
async def test_findings_on_open_equal_check_and_carry_codes_links_and_ids(client: LanguageClient, project: Path):
    model = project / "pkg" / "model.py"
    _open(client, model)
    found = await _diagnostics(client, model, lambda found: bool(found))
    assert _as_check(found) == checked(project, model)
    assert _codes(found) == ["TL101", "TL201", "TL301", "TL505"]
    by_code = {str(d.code): d for d in found}
    assert by_code["TL301"].code_description.href == "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0124.html"
    assert "[GB0124" in by_code["TL301"].message
    assert by_code["TL301"].severity == types.DiagnosticSeverity.Error
    assert all(d.source == "torchlint" for d in found)


@pytest.mark.asyncio
async def test_an_edit_in_a_helper_refreshes_the_open_model(client: LanguageClient, project: Path):
    model, helpers = project / "pkg" / "model.py", project / "pkg" / "helpers.py"
    _open(client, model)
    await _diagnostics(client, model, lambda found: "TL201" in _codes(found))
    _open(client, helpers)
    # The helper stops returning a tensor: `if m > 0` in the model no longer branches on one.
    plain = HELPERS.replace("return x.mean()", "return 1.0")
    _replace(client, helpers, plain, version=2)
    found = await _diagnostics(client, model, lambda found: "TL201" not in _codes(found))
    assert _codes(found) == ["TL101", "TL301", "TL505"]
    assert _as_check(found) == _check_with_buffer(project, helpers, plain, model)


def _check_with_buffer(project: Path, edited: Path, text: str, reported: Path) -> list[tuple[str, int, int]]:
    """`torchlint check` of ``reported`` while ``edited`` holds ``text`` on disk."""
    before = edited.read_text()
    edited.write_text(text)
    try:
        return checked(project, reported)
    finally:
        edited.write_text(before)


@pytest.mark.asyncio
async def test_quick_fixes_noqa_and_fix_all_apply_and_clear_their_findings(client: LanguageClient, project: Path):
    model = project / "pkg" / "model.py"
    result = await _opened_actions(client, model, "TL505")
    titles = [action.title for action in result]
    fix = next(action for action in result if action.kind == types.CodeActionKind.QuickFix and "noqa" not in action.title)
    assert fix.is_preferred, titles
    assert any("# noqa: TL505" in title for title in titles), titles
    text = _apply(MODEL, _edits(fix))
    assert "graph_break" not in text
    _replace(client, model, text, version=2)
    found = await _diagnostics(client, model, lambda found: "TL505" not in _codes(found))
    assert _codes(found) == ["TL101", "TL201", "TL301"]

    # Unsafe fixes are offered, and say so; a noqa comment silences the finding.
    printing = next(d for d in found if d.code == "TL101")
    result = await _code_actions(client, model, printing.range, [printing])
    unsafe = next(action for action in result if "unsafe" in action.title)
    assert not unsafe.is_preferred
    noqa = next(action for action in result if "noqa" in action.title)
    text = _apply(text, _edits(noqa))
    assert "print(x.shape)  # noqa: TL101" in text
    _replace(client, model, text, version=3)
    found = await _diagnostics(client, model, lambda found: "TL101" not in _codes(found))
    assert _as_check(found) == checked(project, model, text)

    # Fix-all takes the safe fixes: the explicit graph break.
    _replace(client, model, MODEL, version=4)
    await _diagnostics(client, model, lambda found: "TL505" in _codes(found))
    start = types.Position(line=0, character=0)
    result = await _code_actions(client, model, types.Range(start=start, end=start), [], only=["source.fixAll.torchlint"])
    (fix_all,) = result
    fixed = _apply(MODEL, _edits(fix_all))
    assert "graph_break" not in fixed and "print(x.shape)" in fixed


@pytest.mark.asyncio
async def test_hover_shows_why_use_instead_and_the_graph_break_page(client: LanguageClient, project: Path):
    model = project / "pkg" / "model.py"
    _open(client, model)
    found = await _diagnostics(client, model, lambda found: bool(found))
    item = next(d for d in found if d.code == "TL301")
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=_uri(model)), position=item.range.start)
    )
    assert hover is not None
    text = hover.contents.value
    assert "### Use instead" in text and "### Why" in text
    assert "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0124.html" in text
    assert "torchlint rule TL301" in text


@pytest.mark.asyncio
async def test_a_buffer_that_does_not_parse_gives_tl901_and_the_project_goes_on(client: LanguageClient, project: Path):
    model, helpers = project / "pkg" / "model.py", project / "pkg" / "helpers.py"
    _open(client, model)
    await _diagnostics(client, model, lambda found: "TL201" in _codes(found))
    _open(client, helpers)
    _replace(client, helpers, HELPERS + "def broken(:\n", version=2)
    found = await _diagnostics(client, helpers, lambda found: "TL901" in _codes(found))
    assert _codes(found) == ["TL901"]
    # The model keeps the findings the helper's last good outline gives.
    _replace(client, model, MODEL + "\n", version=2)
    found = await _diagnostics(client, model, lambda found: len(found) == 4)
    assert _codes(found) == ["TL101", "TL201", "TL301", "TL505"]
    # Mended, the helper is clean again.
    _replace(client, helpers, HELPERS, version=3)
    assert await _diagnostics(client, helpers, lambda found: not found) == []


@pytest.mark.asyncio
async def test_closing_a_buffer_clears_its_diagnostics(client: LanguageClient, project: Path):
    model = project / "pkg" / "model.py"
    _open(client, model)
    await _diagnostics(client, model, lambda found: bool(found))
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=_uri(model))))
    assert await _diagnostics(client, model, lambda found: not found) == []


@pytest.mark.asyncio
async def test_editor_settings_select_what_is_shown_and_others_settings_leave_them(client: LanguageClient, project: Path):
    model = project / "pkg" / "model.py"
    _open(client, model)
    await _diagnostics(client, model, lambda found: "TL101" in _codes(found))
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"torchlint": {"ignore": ["TL101"]}}))
    found = await _diagnostics(client, model, lambda found: found and "TL101" not in _codes(found))
    assert _codes(found) == ["TL201", "TL301", "TL505"]
    # A client's empty settings (sent after start-up by some) change nothing.
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={}))
    _replace(client, model, MODEL + "\n", version=2)
    await asyncio.sleep(0.5)
    assert _codes(await _diagnostics(client, model, lambda found: bool(found))) == ["TL201", "TL301", "TL505"]


@pytest.mark.asyncio
async def test_a_broken_configuration_is_shown_and_mending_it_on_disk_brings_the_findings_back(client: LanguageClient, project: Path):
    model = project / "pkg" / "model.py"
    config = project / "pyproject.toml"
    config.write_text("[tool.torchlint]\nselect = 5\n")
    _open(client, model)
    (broken,) = await _diagnostics(client, model, lambda found: bool(found))
    assert broken.message.startswith("torchlint could not check this file:") and "select" in broken.message
    config.write_text("[tool.torchlint]\n")
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(changes=[types.FileEvent(uri=_uri(config), type=types.FileChangeType.Changed)])
    )
    found = await _diagnostics(client, model, lambda found: "TL201" in _codes(found))
    assert _as_check(found) == checked(project, model)


@pytest.mark.asyncio
async def test_a_file_changed_on_disk_refreshes_the_open_files_that_depend_on_it(client: LanguageClient, project: Path):
    model, helpers = project / "pkg" / "model.py", project / "pkg" / "helpers.py"
    _open(client, model)
    await _diagnostics(client, model, lambda found: "TL201" in _codes(found))
    helpers.write_text(HELPERS.replace("return x.mean()", "return 1.0"))
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(changes=[types.FileEvent(uri=_uri(helpers), type=types.FileChangeType.Changed)])
    )
    found = await _diagnostics(client, model, lambda found: "TL201" not in _codes(found))
    assert _as_check(found) == checked(project, model)


@pytest.mark.asyncio
async def test_a_file_created_on_disk_joins_the_project(client: LanguageClient, project: Path):
    model = project / "pkg" / "model.py"
    text = MODEL.replace("from .helpers import stats", "from .ops import stats")
    _open(client, model, text)
    # `stats` comes from a module that does not exist yet: nothing says it returns a tensor.
    found = await _diagnostics(client, model, lambda found: bool(found))
    assert "TL201" not in _codes(found)
    ops = project / "pkg" / "ops.py"
    ops.write_text(HELPERS)
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(changes=[types.FileEvent(uri=_uri(ops), type=types.FileChangeType.Created)])
    )
    found = await _diagnostics(client, model, lambda found: "TL201" in _codes(found))
    assert _as_check(found) == checked(project, model, text)
