"""One project analysed and solved whole: every file analysed once (or found in the cache),
the project solved once from the outlines, each file's findings resolved against the
solution; and what the next run needs to answer a changed file without solving again.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from torchlint.analysis.plain_data import dumps
from torchlint.analysis.project_hints import ProjectHints, project_hints
from torchlint.analysis.scopes import absolute
from torchlint.analysis.regions import RegionLine
from torchlint.analysis.stable_digest import digest
from torchlint.project.entry_points import EntryPointCheck
from torchlint.project.resolve import answers_of, kept, region_lines, selected
from torchlint.project.solution import Solution
from torchlint.report.diagnostic import Diagnostic, FileError, FileResult
from torchlint.report.paths import display_path
from torchlint.run.memo import Analysed, Memo, read_text
from torchlint.run.run_record import SolvedFile, SolvedProject
from torchlint.settings.config import Settings, SettingError
from torchlint.settings.profile import CompileProfile, compile_profile


class Profiles:
    """The compile profile of each settings under the project's hints."""

    def __init__(self, hints: ProjectHints) -> None:
        self.hints = hints
        self._found: dict[int, tuple[Settings, CompileProfile]] = {}

    def __call__(self, settings: Settings) -> CompileProfile:
        found = self._found.get(id(settings))
        if found is None or found[0] is not settings:
            found = self._found[id(settings)] = (settings, compile_profile(settings, self.hints))
        return found[1]


def mentions(text: str, names: set[str] | frozenset[str]) -> bool:
    return any(name in text for name in names)


class ProjectRun:
    """Analyses every file of one run once and solves them as one project.

    The text test spares a file with nothing to trace (no torch, no `forward`) its parse;
    where the solve finds compiled code that calls into such a file, or builds an object of
    a class a skipped file may construct elsewhere, the file is parsed then (still once) and
    the solve takes its outline in."""

    def __init__(
        self, work: list[tuple[Path, Settings]], memo: Memo, keep_sources: bool, rows: bool = False
    ) -> None:
        self.work = {str(path): (path, settings) for path, settings in work}
        self.memo = memo
        # whether the reporters show excerpts: the text of a file with findings is read again
        self.keep_sources = keep_sources
        self.rows = rows
        ordered = sorted(self.work)
        hints = memo.hints([(*self.work[path], None, memo.texts.get(path), False) for path in ordered])
        self.hints = dict(zip(ordered, hints))
        self.profile = Profiles(project_hints(hints))
        self.analysed: dict[str, Analysed] = {}
        self._analyze(ordered, parse_always=False)
        cwd = Path.cwd()
        self.display: Callable[[str], str] = lambda path: display_path(path, cwd)
        self.parsed_on_demand: set[str] = set()
        # how many times the project was solved: once, or twice where the solve needs files
        # the text test skipped (more only where those are not found through imports)
        self.solves = 0
        self.solve()

    def solve(self) -> None:
        """Solve the project from the files' outlines, parsing the files the text test skipped
        that the solve turns out to need, until it needs none."""
        while True:
            self.solution = Solution(self._outlines(), self.display)
            self.solves += 1
            needed = (self.solution.index.unparsed_needed & self._unparsed()) | self._naming(
                self.solution.index.constructions_needed
            )
            needed -= self.parsed_on_demand
            if not needed:
                break
            needed = self._with_imports(needed)
            self.parsed_on_demand |= needed
            self._analyze(sorted(needed), parse_always=True)
        self.entry_points = EntryPointCheck(self.solution.index.entry_points_matched)
        self._kept: dict[str, list[Diagnostic]] = {}

    def _analyze(self, paths: list[str], parse_always: bool) -> None:
        items = [
            (file, settings, self.profile(settings), self.memo.texts.get(path), parse_always)
            for path in paths
            for file, settings in (self.work[path],)
        ]
        # The first pass analyses every file; a file parsed on demand was counted in it.
        progress = None if parse_always else self.memo.progress
        for path, analysed in zip(paths, self.memo.analyze(items, self.rows, progress)):
            self.analysed[path] = analysed

    def _outlines(self):
        return [a.analysis.outline for a in self.analysed.values() if a.analysis is not None]

    def _unparsed(self) -> set[str]:
        return {path for path, a in self.analysed.items() if a.analysis is not None and not a.analysis.outline.parsed}

    def _with_imports(self, needed: set[str]) -> set[str]:
        """``needed`` and the skipped files they import, directly or through one another: code
        the solve needs may call into them, and parsing them now spares a solve per hop."""
        skipped = self._unparsed()
        by_module = {
            analysed.analysis.outline.module: path
            for path, analysed in self.analysed.items()
            if analysed.analysis is not None and path in skipped
        }
        found, todo = set(needed), list(needed)
        while todo:
            path = todo.pop()
            analysis = self.analysed[path].analysis
            assert analysis is not None  # a skipped file: outlined, not parsed
            for written in self.hints[path].imports:
                module = absolute(written, analysis.outline.package)
                target = by_module.get(module) if module is not None else None
                if target is not None and target not in found:
                    found.add(target)
                    todo.append(target)
        return found

    def _naming(self, names: set[str]) -> set[str]:
        """The files the text test skipped whose text mentions one of ``names``."""
        if not names:
            return set()
        found = set()
        for path in sorted(self._unparsed()):
            file, settings = self.work[path]
            text, _ = read_text(file, self.memo.texts.get(path), settings)
            if not isinstance(text, FileError) and mentions(text, names):
                found.add(path)
        return found

    def kept(self, path: str) -> list[Diagnostic]:
        """The file's findings that hold, less what its `noqa` comments suppress."""
        found = self._kept.get(path)
        if found is None:
            analysis = self.analysed[path].analysis
            assert analysis is not None
            found = self._kept[path] = kept(analysis, answers_of(path, self.solution))
        return found

    def shown(self, path: str, found: list[Diagnostic]) -> list[Diagnostic]:
        """What is printed of a file's kept findings: the selection, and no unused-`noqa` fix
        under a configured entry point that names nothing."""
        settings = self.work[path][1]
        return self.entry_points.fixable(selected(found, path, settings), settings)

    def replace(self, path: str, analysed: Analysed) -> None:
        """The file analysed anew (an editor's buffer): its findings are answered again; the
        solution stands until `solve` is called."""
        self.analysed[path] = analysed
        self._kept.pop(path, None)

    def result(self, path: str) -> FileResult:
        analysed = self.analysed[path]
        content = self.memo.content(self.work[path][0])
        if analysed.analysis is None:
            return FileResult(path, errors=[analysed.error], content=content)
        file, settings = self.work[path]
        diagnostics = self.shown(path, self.kept(path))
        source = self.memo.source(file, settings) if diagnostics and self.keep_sources else None
        return FileResult(path, diagnostics, source=source, content=content)

    def setting_errors(self) -> list[SettingError]:
        """The configured entry points that name no function of the files read."""
        return self.entry_points.errors(settings for _, settings in self.work.values())

    def regions(self, path: str) -> list[RegionLine] | FileError | Diagnostic:
        """What `--show-regions` prints of a file (see `region_lines`)."""
        analysed = self.analysed[path]
        if analysed.analysis is None:
            return analysed.error
        return region_lines(analysed.analysis, self.solution)

    def solved(self) -> SolvedProject | None:
        """What the next run needs to answer a file from this solve (each file's answers go to
        the cache, as only a changed file's are read); None where a file could not be read
        (it is read again next time)."""
        inputs_of = {path: self.memo.inputs(file, settings) for path, (file, settings) in self.work.items()}
        if None in inputs_of.values():
            return None
        # The solve is a function of what every file's analysis read: that names its answers.
        solve = digest("solve", sorted(inputs_of.items()))
        files = {}
        for path, inputs in inputs_of.items():
            assert inputs is not None
            analysis = self.analysed[path].analysis
            if analysis is None:
                interface, answers, outcome = "", {}, self.analysed[path].error
            else:
                answer = answers_of(path, self.solution)
                # In an order of their own, not the set's: the same facts give the same bytes.
                answers = {fact: answer(fact) for fact in sorted(analysis.facts, key=repr)}
                interface, outcome = analysis.interface, self.kept(path)
            answers_key = digest("answers", path, interface, solve)
            self.memo.cache.put(answers_key, answers)
            files[path] = SolvedFile(
                inputs, interface, path in self.parsed_on_demand, dumps(self.hints[path]), answers_key, dumps(outcome)
            )
        index = self.solution.index
        return SolvedProject(
            files, self.profile.hints, frozenset(index.unparsed_needed), frozenset(index.constructions_needed),
            index.entry_points_matched,
        )
