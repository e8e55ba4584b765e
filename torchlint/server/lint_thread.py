"""The one thread that analyses: the latest text of each edited file is linted (keystrokes
that arrive meanwhile are taken together), and a project whose interface changed is solved
once typing pauses.

The protocol's event loop only hands work over and answers from what was published, so
it never waits on an analysis; the workspace is touched by this thread alone.
"""

from __future__ import annotations

import threading
import time
import traceback
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from torchlint.report.diagnostic import FileResult
from torchlint.server.workspace import Workspace

# Seconds of no edits before a project whose interface changed is solved again: a solve of
# a large project takes a second or more, and an edit that arrives meanwhile waits for it.
SOLVE_DELAY_S = 0.4

# (path, version, result): the findings of a file to publish
Publish = Callable[[str, "int | None", FileResult], None]


@dataclass
class _Edit:
    text: str | None
    version: int | None


class LintThread:
    def __init__(self, workspace: Workspace, publish: Publish, on_error: Callable[[str], None]) -> None:
        self.workspace = workspace
        self.publish = publish
        self.on_error = on_error
        self._edits: dict[str, _Edit] = {}
        self._jobs: list[tuple[Callable[[Workspace], Any], Future[Any]]] = []
        self._solve_due: float | None = None
        self._stopped = False
        self._wake = threading.Condition()
        # path -> version of the text last linted
        self.linted: dict[str, int | None] = {}
        self._thread = threading.Thread(target=self._run, name="torchlint-lint", daemon=True)
        self._thread.start()

    def edit(self, path: str, text: str | None, version: int | None) -> None:
        """Lint ``path`` with ``text`` (None: the file on disk) next. An edit is not held back for
        the next keystroke: those that arrive while a text is analysed wait, and only the latest
        of them is analysed; a result whose text was superseded meanwhile is not published."""
        with self._wake:
            self._edits[path] = _Edit(text, version)
            self._wake.notify()

    def solve_soon(self) -> None:
        """Solve the projects that need it once no edit is waiting."""
        with self._wake:
            self._solve_due = time.monotonic() + SOLVE_DELAY_S
            self._wake.notify()

    def pending(self, path: str) -> bool:
        with self._wake:
            return path in self._edits

    def submit(self, job: Callable[[Workspace], Any]) -> Future[Any]:
        """Run ``job(workspace)`` on this thread, before the edits waiting."""
        future: Future[Any] = Future()
        with self._wake:
            self._jobs.append((job, future))
            self._wake.notify()
        return future

    def stop(self) -> None:
        with self._wake:
            self._stopped = True
            self._wake.notify()
        self._thread.join(timeout=10)
        self.workspace.close()

    def _run(self) -> None:
        while True:
            with self._wake:
                jobs, edits, solve = self._wait()
                if self._stopped:
                    return
            for job, future in jobs:
                if future.set_running_or_notify_cancel():
                    try:
                        future.set_result(job(self.workspace))
                    except BaseException as error:  # noqa: BLE001 - handed to whoever waits
                        future.set_exception(error)
            for path, edit in edits.items():
                self._guarded(lambda: self._lint(path, edit))
            if solve:
                self._guarded(self._solve)

    def _wait(self) -> tuple[list[tuple[Callable[[Workspace], Any], Future[Any]]], dict[str, _Edit], bool]:
        """Sleep until there is something to do: jobs first, then the edits waiting, then a
        solve once it is due and no edit is waiting."""
        while not self._stopped:
            if self._jobs:
                jobs, self._jobs = self._jobs, []
                return jobs, {}, False
            if self._edits:
                edits, self._edits = self._edits, {}
                return [], edits, False
            now = time.monotonic()
            if self._solve_due is not None and self._solve_due <= now:
                self._solve_due = None
                return [], {}, True
            self._wake.wait(timeout=self._solve_due - now if self._solve_due is not None else None)
        return [], {}, False

    def _guarded(self, work: Callable[[], None]) -> None:
        """One file's or one solve's trouble is reported, and the server goes on."""
        try:
            work()
        except Exception as error:  # noqa: BLE001 - the server must outlive any one buffer
            self.on_error(f"torchlint: internal error: {type(error).__name__}: {error}\n{traceback.format_exc()}")

    def _lint(self, path: str, edit: _Edit) -> None:
        result, project = self.workspace.lint(path, edit.text)
        self.linted[path] = edit.version
        if not self.pending(path):  # a newer text is on its way: this one is stale
            self.publish(path, edit.version, result)
        if project is not None and (project.needs_solve or project.needs_rebuild):
            self.solve_soon()

    def _solve(self) -> None:
        """Solve the projects that need it, and publish every open file of theirs again."""
        for project in list(self.workspace.projects.values()):
            if project.needs_rebuild:
                for path in self.workspace.open_in(project):
                    self.edit(path, self.workspace.texts.get(path), self.linted.get(path))
                continue
            if not project.needs_solve:
                continue
            project.solve()
            for path in self.workspace.open_in(project):
                if not self.pending(path):
                    result = self.workspace.with_setting_errors(project.result(path), project)
                    self.publish(path, self.linted.get(path), result)
