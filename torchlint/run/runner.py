"""Checks files as one project: discovery, each file analysed once (across worker processes
when it pays, looked up in the cache by its content first), the project solved once from
the outlines, and the named files' findings resolved against the solution.

A run that names a few files (pre-commit, an editor's buffer) still analyses (or finds in
the cache) every file of their project and solves it whole; only the named files are
reported, so a file's findings never depend on which others were named. Where the project
is as the last solve saw it, that solve answers (`reuse`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from torchlint.analysis.regions import RegionLine
from torchlint.files.discovery import discover, is_excluded
from torchlint.files.project_files import Listing, other_project_files, project_roots, vouches
from torchlint.files.source import SourceError, decode_source
from torchlint.report.diagnostic import Diagnostic, FileError, FileResult
from torchlint.run.cache import Cache, digest
from torchlint.run.memo import CHANGED_DURING_RUN, Memo, Progress
from torchlint.run.project_run import ProjectRun
from torchlint.run.reuse import ReusedRun, reuse
from torchlint.run.run_record import RunRecord
from torchlint.run.workers import Workers
from torchlint.settings.config import ConfigResolver, Settings

# Below this many files a second worker costs more than it saves.
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
    whole_project: bool = True,
    cache_dir: Path | None = None,
    texts: Mapping[str, str] = {},
    progress: Progress | None = None,
) -> CheckRun:
    """Check ``paths``; with ``whole_project`` the rest of their projects is read too and
    only the named files are reported. ``cache_dir`` keeps results between runs.
    ``texts``: a file's text (by its path as found) where it is not the one on disk.
    ``progress``: told (files analysed, files in all) as the project's files are analysed."""
    found = discover(paths, resolver, force_exclude=force_exclude)
    run = CheckRun(errors=list(found.errors))
    named = [(path, resolver.for_path(path)) for path in found.files]
    cache = cache_for(cache_dir, found.files, resolver)
    context, listing = _context(paths, found.files, resolver, whole_project, cache)
    # Only the whole project tells that an entry point names nothing.
    errors = run.errors if whole_project else None
    results = check_files(
        named, progress=progress, jobs=jobs, keep_sources=keep_sources, context=context, texts=texts, cache=cache, listing=listing,
        errors=errors,
    )
    cache.save()
    run.results = sorted(results, key=lambda result: result.path)
    return run


def _context(
    named: Sequence[str | Path],
    files: Sequence[Path],
    resolver: ConfigResolver,
    whole_project: bool,
    cache: Cache,
) -> tuple[list[tuple[Path, Settings]], Listing | None]:
    """The rest of the projects of ``files``, each with its settings: read, not reported;
    and how they were found (see `project_files.Listing`), which the record in ``cache``
    may tell without a walk."""
    if not (whole_project and files):
        return [], None
    stored = stored_record(cache)
    known = stored.listing if stored is not None else None
    others, listing = other_project_files(named, files, resolver, known, cache.record_started(_record_key()))
    # A file's settings are its folder's: looked up once a folder.
    by_folder: dict[str, Settings] = {}
    context = []
    for path in others:
        folder = os.path.dirname(path)
        settings = by_folder.get(folder)
        if settings is None:
            settings = by_folder[folder] = resolver.for_path(path)
        context.append((path, settings))
    return context, listing


def _record_key() -> str:
    # Reasons name other files relative to the current folder.
    return digest("run-record", str(Path.cwd()))


def stored_record(cache: Cache) -> RunRecord | None:
    record = cache.record(_record_key())
    return record if isinstance(record, RunRecord) else None


def remember_files(memo: Memo, cache: Cache) -> RunRecord | None:
    """The last run's record, whose hashes of the files the memo takes where their stamps
    still vouch for them."""
    record = stored_record(cache)
    memo.known = record.files if record is not None else {}
    memo.known_started = cache.record_started(_record_key())
    return record


def cache_for(folder: Path | None, files: Sequence[Path], resolver: ConfigResolver) -> Cache:
    """One cache file per set of project roots: runs over the same project share it."""
    if folder is None:
        return Cache(None)
    return Cache(folder, str(project_roots(files, resolver)))


def _project(
    work: list[tuple[Path, Settings]],
    context: Sequence[tuple[Path, Settings]],
    workers: Workers,
    cache: Cache,
    texts: Mapping[str, str],
    keep_sources: bool,
    listing: Listing | None,
    rows: bool = False,
    progress: Progress | None = None,
) -> tuple[ProjectRun | ReusedRun, Memo]:
    memo = Memo(workers, cache, texts, progress)
    record = remember_files(memo, cache)
    everything = [*work, *context]
    project: ProjectRun | ReusedRun | None = None
    if not rows and record is not None and record.solved is not None:
        project = reuse(everything, memo, record.solved, keep_sources)
    solved_whole = project is None
    if project is None:
        project = ProjectRun(everything, memo, keep_sources, rows)
    _keep_record(memo, project, record, listing)
    if solved_whole:
        # Every file's entries were used: the others are of contents gone since.
        cache.save(keep_only_used=True)
    return project, memo


def _keep_record(memo: Memo, project: ProjectRun | ReusedRun, stored: RunRecord | None, listing: Listing | None) -> None:
    """Keep what this run found of each file, and its solve, unless a file changed or took its
    worker with it during the run (what it read is not one version), or the record already
    says the same."""
    if not memo.cache.enabled or memo.changed or memo.died:
        return
    files = {}
    for path, (file, _) in project.work.items():
        record = memo.record(file)
        if record is None:
            return  # a file that could not be read is read again next time
        files[path] = record
    if isinstance(project, ReusedRun) or not project.rows:
        solved = project.solved()
    else:
        solved = stored.solved if stored is not None else None  # `--show-regions` keeps the last
    record = RunRecord(files, listing, solved)
    # The same record is written again (the same bytes, a later time) where it holds times
    # that vouch for their files from this run's start on but not from the last one's: the
    # next run then takes those files without reading them.
    if record != stored or _vouch_from(record, memo.known_started, memo.cache.started):
        memo.cache.write_record(_record_key(), record)


def _vouch_from(record: RunRecord, before: int | None, now: int) -> bool:
    times = [file.stamp[0] for file in record.files.values() if file.stamp is not None]
    if record.listing is not None:
        times.extend(modified for _, modified, _ in record.listing.folders)
        times.extend(stamp[0] for _, stamp in record.listing.steering if stamp is not None)
    return any(vouches(modified, now) and not vouches(modified, before) for modified in times)


def check_files(
    work: list[tuple[Path, Settings]],
    *,
    jobs: int | None = None,
    keep_sources: bool = False,
    context: Sequence[tuple[Path, Settings]] = (),
    texts: Mapping[str, str] = {},
    cache: Cache | None = None,
    listing: Listing | None = None,
    progress: Progress | None = None,
    errors: list[FileError] | None = None,
) -> list[FileResult]:
    """Check files, each with its own settings, as one project.

    ``context``: other files of the project, analysed for what they tell about ``work`` but
    not reported. ``texts``: a file's text when it is not the one on disk (an editor's buffer).
    ``listing``: how ``context`` was found, kept in the run's record. ``errors``, where given,
    gets the settings the project contradicts (an entry point that names no function): for
    a run that reads the project whole."""
    cache = cache if cache is not None else Cache(None)
    with _workers(jobs, len(work) + len(context)) as workers:
        project, memo = _project(work, context, workers, cache, texts, keep_sources, listing, progress=progress)
        results = {str(path): project.result(str(path)) for path, _ in work}
        if errors is not None:
            errors.extend(project.setting_errors())
    for path in memo.changed & results.keys():
        results[path] = FileResult(path, errors=[FileError(path, CHANGED_DURING_RUN)])
    return [results[str(path)] for path, _ in work]


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
    paths: Sequence[str | Path],
    resolver: ConfigResolver,
    *,
    force_exclude: bool = False,
    jobs: int | None = None,
    whole_project: bool = True,
    cache_dir: Path | None = None,
) -> RegionsRun:
    """Which functions are compiled and why, as the check of ``paths`` sees them."""
    found = discover(paths, resolver, force_exclude=force_exclude)
    run = RegionsRun(errors=list(found.errors))
    work = [(path, resolver.for_path(path)) for path in found.files]
    cache = cache_for(cache_dir, found.files, resolver)
    context, listing = _context(paths, found.files, resolver, whole_project, cache)
    _describe_files(run, work, context, jobs, cache, {}, listing, whole_project)
    cache.save()
    return run


def _describe_files(
    run: RegionsRun,
    work: list[tuple[Path, Settings]],
    context: Sequence[tuple[Path, Settings]],
    jobs: int | None,
    cache: Cache,
    texts: Mapping[str, str],
    listing: Listing | None = None,
    whole_project: bool = False,
) -> None:
    with _workers(jobs, len(work) + len(context)) as workers:
        project, _ = _project(work, context, workers, cache, texts, False, listing, rows=True)
        for path, _ in work:
            run.add(str(path), project.regions(str(path)))
        if whole_project:
            run.errors.extend(project.setting_errors())


def _buffer(data: bytes, filename: str | None, resolver: ConfigResolver) -> tuple[Path, Settings, str | FileError]:
    """An editor's buffer: where it belongs, its settings, and its text."""
    path = Path(filename).absolute() if filename else Path("-")
    settings = resolver.for_path(path if filename else resolver.cwd)
    try:
        return path, settings, decode_source(data)
    except SourceError as error:
        return path, settings, FileError(str(path), str(error))


def show_regions_stdin(
    data: bytes,
    filename: str | None,
    resolver: ConfigResolver,
    *,
    whole_project: bool = True,
    cache_dir: Path | None = None,
) -> RegionsRun:
    path, settings, text = _buffer(data, filename, resolver)
    run = RegionsRun()
    if isinstance(text, FileError):
        run.add(str(path), text)
        return run
    whole_project = whole_project and filename is not None
    cache = cache_for(cache_dir if filename else None, [path], resolver)
    context = _context([path], [path], resolver, whole_project, cache)[0]
    _describe_files(run, [(path, settings)], context, None, cache, {str(path): text}, whole_project=whole_project)
    cache.save()
    return run


def check_stdin(
    data: bytes,
    filename: str | None,
    resolver: ConfigResolver,
    *,
    force_exclude: bool = False,
    keep_sources: bool = False,
    whole_project: bool = True,
    cache_dir: Path | None = None,
) -> CheckRun:
    """Check a buffer from an editor; ``filename`` places it for config, excludes and its
    project (whose other files are read from disk)."""
    path, settings, text = _buffer(data, filename, resolver)
    if filename and force_exclude and is_excluded(path, settings):
        return CheckRun()
    if isinstance(text, FileError):
        return CheckRun(errors=[text])
    cache = cache_for(cache_dir if filename else None, [path], resolver)
    context, listing = (
        _context([path], [path], resolver, whole_project, cache) if filename else ([], None)
    )
    errors: list[FileError] = []
    results = check_files(
        [(path, settings)], keep_sources=keep_sources, context=context, texts={str(path): text}, cache=cache, listing=listing,
        errors=errors if whole_project and filename else None,
    )
    cache.save()
    return CheckRun(results=results, errors=errors)
