"""One project kept in memory while an editor works on it.

`torchlint check` reads a project, solves it and exits. The language server keeps the
project's analyses and its solution between edits: an edited buffer is analysed alone (in
a worker process, a few tens of milliseconds for a model file) and its findings answered
from the solution at hand. Only where what the solve reads of the file (its interface)
changed is the project solved again, from the outlines in memory; until then the file's
findings are those the last solution gives, and the solve then refreshes every open file.

A buffer that does not parse (the state of most keystrokes) reports TL901, and the rest
of the project keeps the file's last outline that parsed: a half-typed line must not make
every other open file lose the findings that depend on it.
"""

from __future__ import annotations

import os
from pathlib import Path

from torchlint.analysis.engine import FileAnalysis
from torchlint.analysis.project_hints import project_hints
from torchlint.files.discovery import is_excluded
from torchlint.files.project_files import other_project_files
from torchlint.project.resolve import answers_of, kept
from torchlint.report.diagnostic import Diagnostic, FileResult
from torchlint.run.cache import Cache
from torchlint.run.memo import Analysed, Item, Memo, Progress
from torchlint.run.project_run import ProjectRun
from torchlint.run.runner import cache_for, remember_files
from torchlint.run.workers import Workers
from torchlint.settings.config import ConfigResolver, SettingError

UNPARSABLE = "TL901"
# The server has threads of its own (the protocol's, the lint thread): a forked worker
# would inherit the locks they hold at that moment.
_START_METHOD = "spawn"


class LiveProject:
    """The project one file belongs to, analysed and solved once, then kept up to date."""

    def __init__(
        self,
        anchor: Path,
        resolver: ConfigResolver,
        cache_dir: Path | None,
        texts: dict[str, str],
        progress: Progress | None = None,
        jobs: int | None = None,
    ) -> None:
        self.resolver = resolver
        # the open buffers, shared with every project of the workspace
        self.texts = texts
        files = [anchor, *other_project_files([anchor], [anchor], resolver)[0]]
        work = [(path, resolver.for_path(path)) for path in files]
        self.cache: Cache = cache_for(cache_dir, [anchor], resolver)
        with Workers(min(jobs or os.cpu_count() or 1, max(1, len(work) // 16)), _START_METHOD) as cold:
            memo = Memo(cold, self.cache, texts, progress)
            remember_files(memo, self.cache)
            self.run = ProjectRun(work, memo, keep_sources=False)
        self.cache.save()
        # One warm worker for the edits: a buffer is analysed away from the server's own
        # process, as every file is, so a parser fault costs the file, not the server.
        self.workers = Workers(1, _START_METHOD)
        memo.workers = self.workers
        memo.progress = None
        # Buffers are not kept: each edit is a text of its own, and the cache holds what it
        # keeps in memory until it is saved.
        memo.cache = Cache(None)
        self.memo = memo
        # files whose buffer does not parse: their analysis now (TL901); the run keeps the last
        self._unparsable: dict[str, Analysed] = {}
        self.needs_solve = False
        # the project's hints changed (a `torch._dynamo.config` write, a new alias): every
        # file's analysis depends on them, so the project is read again, not only solved
        self.needs_rebuild = False

    def holds(self, path: str) -> bool:
        return path in self.run.work

    def close(self) -> None:
        self.workers.close()

    def excluded(self, path: str) -> bool:
        return is_excluded(Path(path), self.resolver.for_path(path))

    def set_text(self, path: str, text: str | None) -> FileResult:
        """The file as the editor holds it (``text``), or as it is on disk again (None: the
        buffer was closed, or the file changed on disk), and its findings now: final unless
        `needs_solve` (or `needs_rebuild`) says the project must be solved first."""
        if text is None:
            self.texts.pop(path, None)
        else:
            self.texts[path] = text
        self.memo.forget(path)
        run = self.run
        if path not in run.work:
            run.work[path] = (Path(path), self.resolver.for_path(path))
            self.needs_solve = True
        analysed = self.memo.analyze([self._item(path, self.texts.get(path))], rows=False, from_last_parse=True)[0]
        old = run.analysed.get(path)
        if self._does_not_parse(analysed):
            self._unparsable[path] = analysed
            return self.result(path)
        self._unparsable.pop(path, None)
        run.replace(path, analysed)
        if analysed.hints != run.hints.get(path):
            run.hints[path] = analysed.hints
            if project_hints(run.hints[p] for p in sorted(run.hints)) != run.profile.hints:
                self.needs_rebuild = True
        if old is None or _interface(old) != _interface(analysed):
            self.needs_solve = True
        return self.result(path)

    def _item(self, path: str, text: str | None) -> Item:
        """The analysis step's work for ``path`` with ``text`` (None: as on disk)."""
        file, settings = self.run.work[path]
        return (file, settings, self.run.profile(settings), text, path in self.run.parsed_on_demand)

    def _does_not_parse(self, analysed: Analysed) -> bool:
        analysis = analysed.analysis
        return analysis is not None and any(p.diagnostic.code == UNPARSABLE for p in analysis.pending)

    def solve(self) -> None:
        """Solve the project again from the outlines in memory."""
        self.needs_solve = False
        self.run.solve()

    def result(self, path: str) -> FileResult:
        """The file's findings, as `torchlint check` reports them for the same texts."""
        broken = self._unparsable.get(path)
        if broken is not None:
            assert broken.analysis is not None
            return FileResult(path, self._answered(path, broken.analysis))
        return self.run.result(path)

    def _answered(self, path: str, analysis: FileAnalysis) -> list[Diagnostic]:
        """What is printed of ``analysis`` in place of the file's, answered by the solution."""
        return self.run.shown(path, kept(analysis, answers_of(path, self.run.solution)))

    def findings_of_text(self, path: str, text: str) -> list[Diagnostic]:
        """The findings ``text`` would have in place of the file, answered from the project
        as it stands (for fix-all's passes): the project itself is left as it was."""
        scratch = Memo(self.workers, Cache(None), {path: text})
        analysed = scratch.analyze([self._item(path, text)], rows=False)[0]
        return [] if analysed.analysis is None else self._answered(path, analysed.analysis)

    def setting_errors(self) -> list[SettingError]:
        return self.run.setting_errors()


def _interface(analysed: Analysed) -> str | None:
    return analysed.analysis.interface if analysed.analysis is not None else None

