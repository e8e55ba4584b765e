"""A run that finds its project as the last solve saw it.

The solution is a function of what the solve reads of each file (its interface: outline and
the facts its findings ask). Where every file's interface is what the last solve read, the
solution is the same: an unchanged file reports what it reported then, and a changed one
(a comment, a body whose outline and facts are the same) is analysed and its findings
answered from the facts kept for it. Anything else (a file added or removed, another
`torch._dynamo.config`, a changed interface) is solved again, whole.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from torchlint.analysis.plain_data import dumps, loads
from torchlint.analysis.project_hints import project_hints
from torchlint.project.entry_points import EntryPointCheck
from torchlint.project.resolve import kept, selected
from torchlint.report.diagnostic import Diagnostic, FileError, FileResult
from torchlint.run.memo import Analysed, Memo, read_text
from torchlint.run.project_run import Profiles, mentions
from torchlint.run.run_record import SolvedFile, SolvedProject
from torchlint.settings.config import Settings, SettingError


class ReusedRun:
    """Results read from the last solve, and the changed files' answered from its facts."""

    def __init__(
        self,
        work: dict[str, tuple[Path, Settings]],
        memo: Memo,
        solved: SolvedProject,
        fresh: dict[str, Analysed],
        answers: dict[str, dict],
        keep_sources: bool,
    ) -> None:
        self.answers = answers
        self.work = work
        self.keep_sources = keep_sources
        self.memo = memo
        self.stored = solved
        self.fresh = fresh
        self.entry_points = EntryPointCheck(solved.entry_points_matched)
        self._kept: dict[str, list[Diagnostic] | FileError] = {}

    def _outcome(self, path: str) -> list[Diagnostic] | FileError:
        found = self._kept.get(path)
        if found is None:
            analysed = self.fresh.get(path)
            if analysed is None:
                found = loads(self.stored.files[path].outcome)
            elif analysed.analysis is None:
                found = analysed.error
            else:
                found = kept(analysed.analysis, self.answers[path].__getitem__)
            self._kept[path] = found
        return found

    def result(self, path: str) -> FileResult:
        file, settings = self.work[path]
        content = self.memo.content(file)
        outcome = self._outcome(path)
        if isinstance(outcome, FileError):
            return FileResult(path, errors=[outcome], content=content)
        diagnostics = self.entry_points.fixable(selected(outcome, path, settings), settings)
        source = self.memo.source(file, settings) if diagnostics and self.keep_sources else None
        return FileResult(path, diagnostics, source=source, content=content)

    def setting_errors(self) -> list[SettingError]:
        """The configured entry points that name no function of the files read."""
        return self.entry_points.errors(settings for _, settings in self.work.values())

    def solved(self) -> SolvedProject:
        """The last solve, with the changed files as they are now."""
        files = dict(self.stored.files)
        for path in self.fresh:
            file, settings = self.work[path]
            inputs = self.memo.inputs(file, settings)
            assert inputs is not None  # analysed from bytes it read
            files[path] = replace(
                files[path], inputs=inputs, encoded_hints=dumps(self.fresh[path].hints), outcome=dumps(self._outcome(path))
            )
        return replace(self.stored, files=files)


def reuse(
    work: list[tuple[Path, Settings]], memo: Memo, solved: SolvedProject, keep_sources: bool
) -> ReusedRun | None:
    """The run answered from the last solve, or None where the project must be solved again."""
    files = {str(path): (path, settings) for path, settings in work}
    if files.keys() != solved.files.keys():
        return None
    changed = []
    for path, (file, settings) in files.items():
        inputs = memo.inputs(file, settings)
        if inputs is None:
            return None
        if inputs != solved.files[path].inputs:
            changed.append(path)
    if not changed:
        return ReusedRun(files, memo, solved, {}, {}, keep_sources)
    # Analysed under the project's hints as they were: where a changed file changes them
    # (its `torch._dynamo.config`, a disabled function's name), the project is solved again.
    profile = Profiles(solved.hints)
    items = [
        (file, settings, profile(settings), memo.texts.get(path), solved.files[path].parse_always)
        for path in changed
        for file, settings in (files[path],)
    ]
    fresh = dict(zip(changed, memo.analyze(items, rows=False)))
    if any(fresh[path].hints != solved.files[path].hints for path in changed) and (
        project_hints(fresh[path].hints if path in fresh else solved.files[path].hints for path in sorted(files))
        != solved.hints
    ):
        return None
    for path, analysed in fresh.items():
        if not _same_interface(path, analysed, solved.files[path], solved, memo, files[path]):
            return None
    kept_answers = memo.cache.get_many([solved.files[path].answers for path in changed])
    if not all(isinstance(found, dict) for found in kept_answers):
        return None  # removed from the cache since
    return ReusedRun(files, memo, solved, fresh, dict(zip(changed, kept_answers)), keep_sources)


def _same_interface(
    path: str,
    analysed: Analysed,
    stored: SolvedFile,
    solved: SolvedProject,
    memo: Memo,
    work: tuple[Path, Settings],
) -> bool:
    analysis = analysed.analysis
    if (analysis.interface if analysis is not None else "") != stored.interface:
        return False
    if analysis is None or analysis.outline.parsed:
        return True
    # A file the text test skips is parsed where the solve needs it: it still must not be.
    if path in solved.unparsed_needed:
        return False
    text, _ = read_text(work[0], memo.texts.get(path), work[1])
    return isinstance(text, FileError) or not mentions(text, solved.constructions_needed)
