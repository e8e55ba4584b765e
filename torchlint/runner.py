"""Checks many files: discovery, then each file across processes when it pays, then the
project index and a second look at the files that calls from other files reach."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar

from torchlint.config import ConfigResolver, Settings
from torchlint.diagnostic import Diagnostic, FileError, FileResult
from torchlint.discovery import discover, is_excluded
from torchlint.deep_stack import run_with_deep_stack
from torchlint.engine import ParserLimit, UnparsableFile, analyze_text, describe_regions, dynamo_config_of, lint_text
from torchlint.reporters.paths import display_path
from torchlint.semantic.dynamo_config import merge
from torchlint.semantic.outline import FileOutline
from torchlint.semantic.project import ProjectFacts, ProjectIndex
from torchlint.semantic.regions import RegionLine
from torchlint.source import SourceError, decode_source, read_source
from torchlint.workers import Workers

_T = TypeVar("_T")

# Below this many files a process pool costs more than it saves.
_MIN_FILES_PER_WORKER = 16


@dataclass
class CheckRun:
    results: list[FileResult] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)

    @property
    def diagnostics(self) -> list[Diagnostic]:
        found = [d for result in self.results for d in result.diagnostics]
        found.sort(key=Diagnostic.sort_key)
        return found

    @property
    def all_errors(self) -> list[FileError]:
        return self.errors + [e for result in self.results for e in result.errors]

    @property
    def sources(self) -> dict[str, str]:
        return {r.path: r.source for r in self.results if r.source is not None}


def _per_file(path: str, work: Callable[[], _T]) -> _T | FileError:
    """One file's analysis, on a stack deep enough for deeply nested code; whatever goes
    wrong becomes the file's error."""
    try:
        return run_with_deep_stack(work)
    except ParserLimit as error:
        return FileError(path, f"could not be checked: {error}")
    except (RecursionError, MemoryError) as error:
        return FileError(path, f"too deeply nested to check ({type(error).__name__})")
    except Exception as error:  # noqa: BLE001 - one bad file must not stop the run
        return FileError(path, f"internal error: {type(error).__name__}: {error}")


def _guarded(path: str, work: Callable[[], FileResult]) -> FileResult:
    outcome = _per_file(path, work)
    return FileResult(path, errors=[outcome]) if isinstance(outcome, FileError) else outcome


def check_text(
    text: str, path: str, settings: Settings, keep_source: bool = False, project: ProjectFacts | None = None
) -> FileResult:
    def lint() -> FileResult:
        diagnostics = lint_text(text, path, settings, project=project)
        return FileResult(path, diagnostics, source=text if keep_source and diagnostics else None)

    return _guarded(path, lint)


def check_file(path: Path, settings: Settings, keep_source: bool = False, project: ProjectFacts | None = None) -> FileResult:
    try:
        text = read_source(path)
    except SourceError as error:
        return FileResult(str(path), errors=[FileError(str(path), str(error))])
    return check_text(text, str(path), settings, keep_source, project)


# One file's work in a batch: the file, its settings, what the project tells about it.
_Item = tuple[Path, Settings, "ProjectFacts | None"]


def _check_batch(batch: list[_Item], keep_source: bool) -> list[FileResult]:
    return [check_file(path, settings, keep_source, project) for path, settings, project in batch]


def _analyze_file(
    path: Path, settings: Settings, project: ProjectFacts | None, keep_source: bool, parse_always: bool
) -> tuple[FileResult, FileOutline | None]:
    """Lint a file of a project and outline it for the project index."""
    try:
        text = read_source(path)
    except SourceError as error:
        return FileResult(str(path), errors=[FileError(str(path), str(error))]), None
    outline: list[FileOutline] = []

    def analyze() -> FileResult:
        diagnostics, found = analyze_text(text, str(path), settings, project=project, parse_always=parse_always)
        outline.append(found)
        return FileResult(str(path), diagnostics, source=text if keep_source and diagnostics else None)

    result = _guarded(str(path), analyze)
    return result, (outline[0] if outline else None)


def _analyze_batch(batch: list[_Item], keep_source: bool, parse_always: bool) -> list[tuple[FileResult, FileOutline | None]]:
    return [_analyze_file(path, settings, project, keep_source, parse_always) for path, settings, project in batch]


def _dynamo_config_batch(paths: list[Path]) -> list[dict]:
    found = []
    for path in paths:
        try:
            text = read_source(path)
        except SourceError:
            found.append({})
            continue
        config = _per_file(str(path), lambda: dynamo_config_of(text))
        found.append({} if isinstance(config, FileError) else config)
    return found


def _describe(
    text: str, path: str, settings: Settings, project: ProjectFacts | None
) -> list[RegionLine] | FileError | Diagnostic:
    """A file's compiled functions; a file that does not parse gives its TL901 instead."""

    def describe() -> list[RegionLine] | Diagnostic:
        try:
            return describe_regions(text, path, settings, project=project)
        except UnparsableFile as unparsable:
            return unparsable.diagnostic

    return _per_file(path, describe)


def _describe_batch(batch: list[_Item]) -> list[list[RegionLine] | FileError | Diagnostic]:
    described: list[list[RegionLine] | FileError | Diagnostic] = []
    for path, settings, project in batch:
        try:
            text = read_source(path)
        except SourceError as error:
            described.append(FileError(str(path), str(error)))
            continue
        described.append(_describe(text, str(path), settings, project))
    return described


def _workers(requested: int | None, files: int) -> Workers:
    jobs = requested if requested is not None else (os.cpu_count() or 1)
    return Workers(min(jobs, files // _MIN_FILES_PER_WORKER))


def check_paths(
    paths: Sequence[str | Path],
    resolver: ConfigResolver,
    *,
    force_exclude: bool = False,
    keep_sources: bool = False,
    jobs: int | None = None,
) -> CheckRun:
    found = discover(paths, resolver, force_exclude=force_exclude)
    run = CheckRun(errors=list(found.errors))
    work = [(path, resolver.for_path(path)) for path in found.files]
    run.results = check_files(work, jobs=jobs, keep_sources=keep_sources)
    run.results.sort(key=lambda result: result.path)
    return run


def check_files(
    work: list[tuple[Path, Settings]], *, jobs: int | None = None, keep_sources: bool = False
) -> list[FileResult]:
    """Lint files, each with its own settings; two or more are linted as one project."""
    with _workers(jobs, len(work)) as workers:
        if len(work) < 2:
            return workers.map(_check_batch, [(path, settings, None) for path, settings in work], keep_sources)
        return list(_ProjectRun(work, workers, keep_sources).final_results().values())


class _ProjectRun:
    """Lints the files of one run together, so calls between them are followed.

    Phases: the `torch._dynamo.config` assignments (cheap: only files that mention
    `_dynamo` are parsed); every file linted on its own, returning its outline; the
    project index over the outlines (parsing, on demand, files the text test skipped that
    compiled code calls into or that may build a module around the objects it calls); a
    second lint of just the files other files change.
    """

    def __init__(self, work: list[tuple[Path, Settings]], workers: Workers, keep_sources: bool) -> None:
        self.work = {str(path): (path, settings) for path, settings in work}
        self.workers = workers
        self.keep_sources = keep_sources
        ordered = sorted(self.work)
        configs = workers.map(_dynamo_config_batch, [self.work[path][0] for path in ordered])
        self.plain = ProjectFacts(dynamo_config=merge(configs))
        self.results: dict[str, FileResult] = {}
        self.outlines: dict[str, FileOutline] = {}
        self._analyze(list(self.work), parse_always=False)
        cwd = Path.cwd()
        parsed_on_demand: set[str] = set()
        self._display = lambda path: display_path(path, cwd)
        while True:
            self.index = self._new_index()
            needed = (self.index.unparsed_needed & self.outlines.keys()) | self._naming(self.index.constructions_needed)
            needed = sorted(needed - parsed_on_demand)
            if not needed:
                break
            parsed_on_demand.update(needed)
            self._analyze(needed, parse_always=True)

    def _new_index(self) -> ProjectIndex:
        index = ProjectIndex(self.outlines.values(), self._display, self.plain.dynamo_config)
        index.solve()
        return index

    def _naming(self, names: set[str]) -> set[str]:
        """The files the text test skipped whose text mentions one of ``names``."""
        if not names:
            return set()
        found = set()
        for path, outline in self.outlines.items():
            if not outline.parsed:
                try:
                    text = read_source(self.work[path][0])
                except SourceError:
                    continue
                if any(name in text for name in names):
                    found.add(path)
        return found

    def _analyze(self, paths: list[str], parse_always: bool) -> None:
        items = [(*self.work[path], self.plain) for path in paths]
        for path, (result, outline) in zip(paths, self.workers.map(_analyze_batch, items, self.keep_sources, parse_always)):
            self.results[path] = result
            if outline is not None:
                self.outlines[path] = outline

    def facts(self, path: str) -> ProjectFacts:
        if path not in self.outlines:
            return self.plain
        return self.index.facts_for(path) or self.plain

    def final_results(self) -> dict[str, FileResult]:
        again = [path for path in self.outlines if self.index.facts_for(path) is not None]
        if self._lint_again(again):
            # What the project told those files changed the tensors their compiled calls
            # pass (`for t in self.scheduler.timesteps`): one more round hands them on.
            before = {path: self.index.facts_for(path) for path in self.outlines}
            self.index = self._new_index()
            changed = [path for path in self.outlines if self.index.facts_for(path) != before[path]]
            items = [(*self.work[path], self.facts(path)) for path in changed]
            for path, result in zip(changed, self.workers.map(_check_batch, items, self.keep_sources)):
                self.results[path] = result
        return self.results

    def _lint_again(self, paths: list[str]) -> bool:
        """Lint ``paths`` with what the project tells them; whether a call passes other kinds now."""
        items = [(*self.work[path], self.facts(path)) for path in paths]
        changed = False
        for path, (result, outline) in zip(paths, self.workers.map(_analyze_batch, items, self.keep_sources, False)):
            self.results[path] = result
            if outline is not None and outline.passed != self.outlines[path].passed:
                self.outlines[path] = replace(self.outlines[path], passed=outline.passed)
                changed = True
        return changed


@dataclass
class RegionsRun:
    # path -> its compiled and disabled functions
    files: dict[str, list[RegionLine]] = field(default_factory=dict)
    errors: list[FileError] = field(default_factory=list)
    # files that do not parse, as their TL901 findings
    unparsable: list[Diagnostic] = field(default_factory=list)

    def add(self, path: str, described: list[RegionLine] | FileError | Diagnostic) -> None:
        if isinstance(described, FileError):
            self.errors.append(described)
        elif isinstance(described, Diagnostic):
            self.unparsable.append(described)
        else:
            self.files[path] = described


def show_regions(
    paths: Sequence[str | Path], resolver: ConfigResolver, *, force_exclude: bool = False, jobs: int | None = None
) -> RegionsRun:
    """Which functions are compiled and why, as the lint of ``paths`` sees them."""
    found = discover(paths, resolver, force_exclude=force_exclude)
    run = RegionsRun(errors=list(found.errors))
    work = [(path, resolver.for_path(path)) for path in found.files]
    with _workers(jobs, len(work)) as workers:
        project = _ProjectRun(work, workers, keep_sources=False) if len(work) > 1 else None
        items = [(path, settings, project.facts(str(path)) if project else None) for path, settings in work]
        for (path, _, _), described in zip(items, workers.map(_describe_batch, items)):
            run.add(str(path), described)
    return run


def show_regions_stdin(data: bytes, filename: str | None, resolver: ConfigResolver) -> RegionsRun:
    path = str(Path(filename).absolute()) if filename else "-"
    settings = resolver.for_path(Path(path) if filename else resolver.cwd)
    run = RegionsRun()
    try:
        text = decode_source(data)
    except SourceError as error:
        run.add(path, FileError(path, str(error)))
        return run
    run.add(path, _describe(text, path, settings, None))
    return run


def check_stdin(
    data: bytes,
    filename: str | None,
    resolver: ConfigResolver,
    *,
    force_exclude: bool = False,
    keep_sources: bool = False,
) -> CheckRun:
    """Lint a buffer from an editor; ``filename`` places it for config and excludes."""
    path = str(Path(filename).absolute()) if filename else "-"
    settings = resolver.for_path(Path(path) if filename else resolver.cwd)
    if filename and force_exclude and is_excluded(Path(path), settings):
        return CheckRun()
    try:
        text = decode_source(data)
    except SourceError as error:
        return CheckRun(errors=[FileError(path, str(error))])
    return CheckRun(results=[check_text(text, path, settings, keep_sources)])
