"""`torchlint server`: the language server, over stdio.

Diagnostics are pushed on open, change and save (keystrokes that arrive during an analysis
are taken together), each the findings `torchlint check` gives for the buffer's text in its project; a
project's first read shows as progress. Code actions and hover answer from what was last
published for the document's current version, so they never wait on an analysis; fix-all
runs its passes on the lint thread.
"""

from __future__ import annotations

import asyncio
import itertools
import os
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from torchlint import __version__
from torchlint.report.diagnostic import Diagnostic, FileResult
from torchlint.server import actions
from torchlint.server.convert import Positions, file_error, overlaps, to_lsp
from torchlint.server.hover import hover_markdown
from torchlint.server.lint_thread import LintThread
from torchlint.server.workspace import SETTING_KEYS, ClientSettings, Workspace
from torchlint.settings.config import ConfigError, SettingError

_CONFIG_FILES = ("pyproject.toml", "torchlint.toml")


@dataclass(frozen=True)
class Published:
    """What was last published for a document, and the text its positions count in."""

    version: int | None
    text: str
    positions: Positions
    findings: tuple[tuple[Diagnostic, types.Diagnostic], ...]


class TorchlintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("torchlint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.lint: LintThread | None = None
        # the protocol's event loop: the lint thread hands what it found to it
        self.loop: asyncio.AbstractEventLoop | None = None
        self.published: dict[str, Published] = {}
        self.said: set[str] = set()
        self._tokens = itertools.count(1)

    # -- started and stopped

    def start(self, root: Path, raw_settings: object) -> None:
        self.loop = asyncio.get_running_loop()
        try:
            settings = ClientSettings.read(raw_settings)
        except ConfigError as error:
            self.say(types.MessageType.Error, str(error))
            settings = ClientSettings()
        workspace = Workspace(root, settings, progress=self._progress)
        self.lint = LintThread(workspace, self._publish_from_thread, self._log_from_thread)

    def stop(self) -> None:
        if self.lint is not None:
            self.lint.stop()
            self.lint = None

    # -- messages to the client

    def say(self, kind: types.MessageType, message: str) -> None:
        """Show ``message`` once: a configuration error is not worth a dialog per keystroke."""
        if message not in self.said:
            self.said.add(message)
            self.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def _on_loop(self, callback: Callable[..., object], *args: object) -> None:
        """Hand ``callback(*args)`` from the lint thread to the protocol's event loop, the one
        thread that writes to the client."""
        assert self.loop is not None  # set when the session was initialized
        self.loop.call_soon_threadsafe(callback, *args)

    def _log_from_thread(self, message: str) -> None:
        self._on_loop(self.window_log_message, types.LogMessageParams(type=types.MessageType.Error, message=message))

    def _publish_from_thread(self, path: str, version: int | None, result: FileResult) -> None:
        self._on_loop(self._publish, path, version, result)

    def _publish(self, path: str, version: int | None, result: FileResult) -> None:
        uri = from_fs_path(path)
        if uri is None:
            return
        document = self.workspace.text_documents.get(uri)
        if document is None:
            # closed since: it shows nothing
            self.published.pop(uri, None)
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
            return
        if version is not None and document.version is not None and document.version != version:
            return  # a newer text is being linted
        positions = Positions(document.lines, document.position_codec)
        findings = tuple((d, to_lsp(d, uri, positions)) for d in result.diagnostics)
        shown = [lsp for _, lsp in findings]
        for error in result.errors:
            if isinstance(error, SettingError):
                # the configuration's, not this file's: said once, as `check` says it once
                self.say(types.MessageType.Error, f"torchlint: {error.path}: {error.message}")
                continue
            shown.append(file_error(error))
        self.published[uri] = Published(version, document.source, positions, findings)
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, version=version, diagnostics=shown)
        )

    @property
    def takes_document_changes(self) -> bool:
        """Whether the client announced versioned edits (`workspace.workspaceEdit.documentChanges`);
        one that did not takes plain `changes` only."""
        workspace = self.client_capabilities.workspace
        edit = workspace.workspace_edit if workspace is not None else None
        return bool(edit is not None and edit.document_changes)

    def _progress(self, title: str) -> tuple[Callable[[int, int], None], Callable[[], None]]:
        """Callbacks for the lint thread that show a project's first read as work-done
        progress, where the client takes it."""
        supported = bool(self.client_capabilities.window and self.client_capabilities.window.work_done_progress)
        if not supported:
            return (lambda done, total: None), (lambda: None)
        token = f"torchlint-{next(self._tokens)}"
        assert self.loop is not None  # set when the session was initialized
        created = asyncio.run_coroutine_threadsafe(self._begin(token, title), self.loop)
        last = [-1]

        def report(done: int, total: int) -> None:
            percentage = 100 * done // max(total, 1)
            if percentage != last[0]:
                last[0] = percentage
                self._on_loop(self._report, created, token, f"{done}/{total} files", percentage)

        def end() -> None:
            self._on_loop(self._end, created, token)

        return report, end

    async def _begin(self, token: str, title: str) -> bool:
        try:
            await self.work_done_progress.create_async(token)
        except Exception:  # noqa: BLE001 - a client that refuses the token gets no progress
            return False
        self.work_done_progress.begin(token, types.WorkDoneProgressBegin(title=title, percentage=0, cancellable=False))
        return True

    def _report(self, created: Future[bool], token: str, message: str, percentage: int) -> None:
        if created.done() and created.result():
            self.work_done_progress.report(token, types.WorkDoneProgressReport(message=message, percentage=percentage))

    def _end(self, created: Future[bool], token: str) -> None:
        async def end() -> None:
            if await asyncio.wrap_future(created):
                self.work_done_progress.end(token, types.WorkDoneProgressEnd(message="done"))

        asyncio.ensure_future(end())

    # -- documents

    def changed(self, uri: str) -> None:
        path = _path(uri)
        if path is None or self.lint is None:
            return
        document = self.workspace.get_text_document(uri)
        self.lint.edit(path, document.source, document.version)

    def closed(self, uri: str) -> None:
        path = _path(uri)
        self.published.pop(uri, None)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        if path is not None and self.lint is not None:
            self.lint.edit(path, None, None)

    def relint_open(self) -> None:
        for uri in list(self.workspace.text_documents):
            self.changed(uri)

    def files_changed(self, changes: list[types.FileEvent]) -> None:
        """Files changed on disk (a checkout, another tool): configuration read again, a
        changed file read again unless its buffer is open, a file added or removed read
        with the project's new listing."""
        if self.lint is None:
            return
        paths = [(path, change.type) for change in changes if (path := _path(change.uri)) is not None]
        configuration = any(os.path.basename(path) in _CONFIG_FILES for path, _ in paths)
        open_paths = {_path(uri) for uri in self.workspace.text_documents}
        sources = [(path, kind) for path, kind in paths if path.endswith(".py") and path not in open_paths]

        def job(workspace: Workspace) -> None:
            if configuration:
                workspace.reconfigure()
                return
            for path, kind in sources:
                for project in workspace.projects.values():
                    if kind != types.FileChangeType.Changed:
                        project.needs_rebuild = True
                    elif project.holds(path):
                        project.set_text(path, None)

        self.lint.submit(job).add_done_callback(lambda _: self._on_loop(self._after_disk_change))

    def _after_disk_change(self) -> None:
        if self.lint is not None:
            self.lint.solve_soon()
        self.relint_open()

    def configure(self, raw_settings: object) -> None:
        try:
            settings = ClientSettings.read(raw_settings)
        except ConfigError as error:
            self.say(types.MessageType.Error, str(error))
            return
        if self.lint is not None:
            self.lint.submit(lambda workspace: workspace.reconfigure(settings))
            self.relint_open()

    # -- requests answered from what was published

    def current(self, uri: str) -> Published | None:
        published = self.published.get(uri)
        document = self.workspace.text_documents.get(uri)
        if published is None or document is None or published.text != document.source:
            return None  # stale: the findings are of another text
        return published


def _path(uri: str) -> str | None:
    if not uri.startswith("file:"):
        return None
    path = to_fs_path(uri)
    return os.path.abspath(path) if path else None


server = TorchlintServer()


@server.feature(types.INITIALIZE)
def _initialize(ls: TorchlintServer, params: types.InitializeParams) -> None:
    root = None
    if params.workspace_folders:
        root = _path(params.workspace_folders[0].uri)
    if root is None and params.root_uri:
        root = _path(params.root_uri)
    options = params.initialization_options
    raw = options.get("settings", options) if isinstance(options, dict) else None
    ls.start(Path(root or os.getcwd()), raw)


@server.feature(types.INITIALIZED)
def _initialized(ls: TorchlintServer, params: types.InitializedParams) -> None:
    watched = ls.client_capabilities.workspace and ls.client_capabilities.workspace.did_change_watched_files
    if watched and watched.dynamic_registration:
        watchers = [types.FileSystemWatcher(glob_pattern=pattern) for pattern in ("**/*.py", "**/pyproject.toml", "**/torchlint.toml")]
        registration = types.Registration(
            id="torchlint-watched-files",
            method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=watchers),
        )
        ls.client_register_capability(types.RegistrationParams(registrations=[registration]))


@server.feature(types.SHUTDOWN)
def _shutdown(ls: TorchlintServer, params: None) -> None:
    ls.stop()


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def _did_open(ls: TorchlintServer, params: types.DidOpenTextDocumentParams) -> None:
    ls.changed(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def _did_change(ls: TorchlintServer, params: types.DidChangeTextDocumentParams) -> None:
    ls.changed(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def _did_save(ls: TorchlintServer, params: types.DidSaveTextDocumentParams) -> None:
    ls.changed(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def _did_close(ls: TorchlintServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.closed(params.text_document.uri)


@server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def _did_change_watched(ls: TorchlintServer, params: types.DidChangeWatchedFilesParams) -> None:
    ls.files_changed(list(params.changes))


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
def _did_change_configuration(ls: TorchlintServer, params: types.DidChangeConfigurationParams) -> None:
    raw = params.settings
    if isinstance(raw, dict) and "torchlint" in raw:
        raw = raw["torchlint"]
    elif not (isinstance(raw, dict) and raw.keys() & SETTING_KEYS):
        # Nothing of ours (clients send `{}` or their other servers' settings after
        # start-up): the settings given at initialization stand.
        return
    ls.configure(raw)


@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, actions.FIX_ALL], resolve_provider=False),
)
async def _code_action(ls: TorchlintServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    uri = params.text_document.uri
    published = ls.current(uri)
    if published is None:
        return []
    wanted = params.context.only
    target = actions.Target(uri, published.version, ls.takes_document_changes)
    found: list[types.CodeAction] = []
    if not wanted or any(types.CodeActionKind.QuickFix.startswith(kind) or kind.startswith(types.CodeActionKind.QuickFix) for kind in wanted):
        for diagnostic, shown in published.findings:
            if not overlaps(shown, params.range):
                continue
            for make in (actions.quick_fix, actions.noqa_action):
                action = make(diagnostic, shown, published.text, published.positions, target)
                if action is not None:
                    found.append(action)
    if wanted and any(actions.FIX_ALL.startswith(kind) for kind in wanted):
        action = await _fix_all(ls, target, published)
        if action is not None:
            found.append(action)
    return found


async def _fix_all(ls: TorchlintServer, target: actions.Target, published: Published) -> types.CodeAction | None:
    uri = target.uri
    path = _path(uri)
    if path is None or ls.lint is None or not any(d.fix_applies(False) for d, _ in published.findings):
        return None
    text = published.text
    new = await asyncio.wrap_future(ls.lint.submit(lambda workspace: actions.fixed_text(workspace.project_of(path), path, text)))
    if new is None or ls.current(uri) is not published:
        return None  # nothing to do, or the text changed meanwhile
    return actions.fix_all_action(target, new, published.positions)


@server.feature(types.TEXT_DOCUMENT_HOVER)
def _hover(ls: TorchlintServer, params: types.HoverParams) -> types.Hover | None:
    published = ls.current(params.text_document.uri)
    if published is None:
        return None
    at = types.Range(start=params.position, end=params.position)
    for diagnostic, shown in published.findings:
        if overlaps(shown, at):
            value = hover_markdown(diagnostic)
            return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=value), range=shown.range)
    return None


def serve() -> None:
    """Speak the protocol on stdin and stdout until the client exits."""
    server.start_io()
