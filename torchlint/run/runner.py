"""Checks files as one project: discovery, each file analysed once (across worker processes
when it pays, looked up in the cache by its content first), the project solved once from
the outlines, and the named files' findings resolved against the solution.

A run that names a few files (pre-commit, an editor's buffer) still analyses (or finds in
the cache) every file of their project and solves it whole; only the named files are
reported, so a file's findings never depend on which others were named.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from torchlint.analysis.dynamo_config import dynamo_config_of, merge
from torchlint.analysis.engine import FileAnalysis, ParserLimit, analyze_text
from torchlint.analysis.regions import RegionLine
from torchlint.files.discovery import discover, is_excluded
from torchlint.files.project_files import Listing, other_project_files, project_roots
from torchlint.files.source import SourceError, decode_source, read_bytes
from torchlint.parse.deep_stack import run_with_deep_stack
from torchlint.project.resolve import region_lines, reported
from torchlint.project.solution import Solution
from torchlint.report.diagnostic import Diagnostic, FileError, FileResult
from torchlint.report.paths import display_path
from torchlint.run.cache import Cache, digest
from torchlint.run.run_record import FileRecord, RunRecord, Stamp, content_hash, file_content
from torchlint.run.workers import Workers
from torchlint.settings.config import ConfigResolver, Settings
from torchlint.settings.profile import CompileProfile, compile_profile

_T = TypeVar("_T")

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


# -- one file, in a worker ------------------------------------------------------------------


def text_content(text: str) -> str:
    """The content hash of a text that stands in for a file (an editor's buffer, a fix)."""
    return content_hash(text.encode("utf-8", "surrogatepass"))


def _read(path: Path, text: str | None, settings: Settings) -> tuple[str | FileError, str | None]:
    """The text a step works on (or why there is none) and the hash of the bytes it was read
    from (None when none could be read): a step's result is kept under the hash of the very
    bytes it read, never of an earlier read."""
    if text is not None:
        data = text.encode("utf-8", "surrogatepass")
    else:
        try:
            data = read_bytes(path)
        except SourceError as error:
            return FileError(str(path), str(error)), None
    content = content_hash(data)
    if len(data) > settings.max_file_size:
        return FileError(str(path), too_large(len(data), settings.max_file_size)), content
    if text is not None:
        return text, content
    try:
        return decode_source(data), content
    except SourceError as error:
        return FileError(str(path), str(error)), content


def too_large(size: int, limit: int) -> str:
    """Why a file over `max-file-size` is not checked: libcst's tree of a file takes several
    hundred times its size in memory, and a generated data module can be tens of megabytes."""
    return (
        f"not checked: {_megabytes(size)} is over the {_megabytes(limit)} of `max-file-size` "
        "(exclude the file, or raise the limit)"
    )


def _megabytes(size: int) -> str:
    return f"{size / 1_000_000:.1f} MB" if size >= 100_000 else f"{size:,} bytes"


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


@dataclass
class Analysed:
    """A file's analysis, or why there is none; its text where a reporter shows excerpts."""

    path: str
    analysis: FileAnalysis | None = None
    error: FileError | None = None
    source: str | None = None


# One file's work: the file, its settings, the compile profile (None for the config step),
# its text when that is not the one on disk, and whether to parse it whatever the text test says.
_Item = tuple[Path, Settings, "CompileProfile | None", "str | None", bool]


def _analyze_batch(batch: list[_Item], keep_source: bool, rows: bool) -> list[tuple[Analysed, str | None]]:
    found = []
    for path, settings, profile, text, parse_always in batch:
        source, content = _read(path, text, settings)
        if isinstance(source, FileError):
            found.append((Analysed(str(path), error=source), content))
            continue
        analysis = _per_file(
            str(path), lambda: analyze_text(source, str(path), settings, profile, parse_always=parse_always, rows=rows)
        )
        if isinstance(analysis, FileError):
            found.append((Analysed(str(path), error=analysis), content))
        else:
            found.append((Analysed(str(path), analysis, source=source if keep_source else None), content))
    return found


def _config_batch(batch: list[_Item]) -> list[tuple[dict, str | None]]:
    found = []
    for path, settings, _, text, _ in batch:
        source, content = _read(path, text, settings)
        if isinstance(source, FileError):
            found.append(({}, content))
            continue
        config = _per_file(str(path), lambda: dynamo_config_of(source))
        found.append(({} if isinstance(config, FileError) else config, content))
    return found


# Stands for what a step read of a file whose worker died on it: nothing to compare or keep.
_DIED = "died"


def _died(item: _Item, why: str) -> Analysed:
    path = str(item[0])
    return Analysed(path, error=FileError(path, f"could not be checked: {why}"))


# What each step gives for a file its worker died on.
_DEATH_RESULTS: dict[Callable, Callable[[_Item, str], object]] = {
    _analyze_batch: lambda item, why: (_died(item, why), _DIED),
    _config_batch: lambda item, why: ({}, _DIED),
}


def _workers(requested: int | None, files: int) -> Workers:
    jobs = requested if requested is not None else (os.cpu_count() or 1)
    return Workers(min(jobs, files // _MIN_FILES_PER_WORKER))


# What is said of a file saved while it was being checked: what the run read of it was
# not one version, so nothing it found is reported.
CHANGED_DURING_RUN = "changed while it was being checked; check it again"


class _Memo:
    """Per-file steps run in the workers, each looked up in the cache first by a key of
    everything it reads."""

    def __init__(self, workers: Workers, cache: Cache, texts: Mapping[str, str]) -> None:
        self.workers = workers
        self.cache = cache
        self.texts = texts
        self._content: dict[str, str | None] = {}
        self._stamps: dict[str, Stamp | None] = {}
        self._forms: dict[int, tuple[object, str]] = {}
        # what the last run recorded of each file: its hash holds while its stat is the same
        self.known: Mapping[str, FileRecord] = {}
        # files whose bytes a step read were not those the run took them to be: saved while
        # the run went on. Their results are not kept, and the run reports them.
        self.changed: set[str] = set()
        # files whose worker died on them: reported, and nothing of the run is kept
        self.died: set[str] = set()

    def content(self, path: Path) -> str | None:
        """A hash of the file's bytes; None when it cannot be read (never cached)."""
        key = str(path)
        if key not in self._content:
            text = self.texts.get(key)
            if text is not None:
                self._content[key], self._stamps[key] = text_content(text), None
            else:
                self._content[key], self._stamps[key] = file_content(path, self.known.get(key))
        return self._content[key]

    def record(self, path: Path) -> FileRecord | None:
        content = self.content(path)
        return FileRecord(content, self._stamps.get(str(path))) if content is not None else None

    def _note_read(self, path: str, read: str | None) -> bool:
        """Whether what a step read of ``path`` is what the run's key says; if not, the
        file changed during the run."""
        if read == self._content.get(path):
            return read is not None  # an unreadable file is as the run found it, and not kept
        self.changed.add(path)
        return False

    def key(self, step: str, path: Path, settings: Settings, *more: object) -> str | None:
        if not self.cache.enabled:
            return None
        content = self.content(path)
        if content is None:
            return None
        # torchlint's own code is not in the key: each version of it has a cache file of its own.
        return digest(step, str(path), content, self.form(settings), *map(self.form, more))

    def form(self, value: object) -> object:
        """A digest standing for settings or a profile that many files share, worked out once."""
        if not isinstance(value, (Settings, CompileProfile)):
            return value
        found = self._forms.get(id(value))
        if found is None or found[0] is not value:
            found = self._forms[id(value)] = (value, digest(value))
        return found[1]

    def map(self, step: Callable, items: list[_Item], keys: list[str | None], *args: object) -> list:
        found = [self.cache.get(key) if key is not None else None for key in keys]
        missing = [i for i, value in enumerate(found) if value is None]
        on_death = _DEATH_RESULTS[step]
        computed = self.workers.map(step, [items[i] for i in missing], *args, on_death=on_death) if missing else []
        for i, (value, read) in zip(missing, computed):
            found[i] = value
            path = str(items[i][0])
            if read is _DIED:
                self.died.add(path)
                continue
            self.content(items[i][0])
            # Kept only under the hash of the bytes the step itself read.
            if self._note_read(path, read) and keys[i] is not None:
                self.cache.put(keys[i], value, path)
        return found

    def analyze(self, items: list[_Item], keep_source: bool, rows: bool) -> list[Analysed]:
        keys = [
            self.key("analysis", path, settings, profile, parse_always, keep_source, rows)
            for path, settings, profile, _, parse_always in items
        ]
        return self.map(_analyze_batch, items, keys, keep_source, rows)

    def configs(self, items: list[_Item]) -> list[dict]:
        keys = [self.key("dynamo-config", path, settings) for path, settings, *_ in items]
        return self.map(_config_batch, items, keys)


# -- the project ---------------------------------------------------------------------------


class _ProjectRun:
    """Analyses every file of one run once and solves them as one project.

    The text test spares a file with nothing to trace (no torch, no `forward`) its parse;
    where the solve finds compiled code that calls into such a file, or builds an object of
    a class a skipped file may construct elsewhere, the file is parsed then (still once) and
    the solve takes its outline in."""

    def __init__(self, work: list[tuple[Path, Settings]], memo: _Memo, keep_sources: bool, rows: bool = False) -> None:
        self.work = {str(path): (path, settings) for path, settings in work}
        self.memo = memo
        self.keep_sources = keep_sources
        self.rows = rows
        ordered = sorted(self.work)
        configs = memo.configs([(*self.work[path], None, memo.texts.get(path), False) for path in ordered])
        dynamo_config = merge(configs)
        self._profiles: dict[int, CompileProfile] = {}
        self.profile = lambda settings: self._profile(settings, dynamo_config)
        self.analysed: dict[str, Analysed] = {}
        self._analyze(ordered, parse_always=False)
        cwd = Path.cwd()
        self.display = lambda path: display_path(path, cwd)
        parsed_on_demand: set[str] = set()
        while True:
            self.solution = Solution(self._outlines(), self.display)
            needed = (self.solution.index.unparsed_needed & self._unparsed()) | self._naming(
                self.solution.index.constructions_needed
            )
            needed -= parsed_on_demand
            if not needed:
                break
            parsed_on_demand |= needed
            self._analyze(sorted(needed), parse_always=True)

    def _profile(self, settings: Settings, dynamo_config: dict) -> CompileProfile:
        found = self._profiles.get(id(settings))
        if found is None:
            found = self._profiles[id(settings)] = compile_profile(settings, dynamo_config)
        return found

    def _analyze(self, paths: list[str], parse_always: bool) -> None:
        items = [
            (file, settings, self.profile(settings), self.memo.texts.get(path), parse_always)
            for path in paths
            for file, settings in (self.work[path],)
        ]
        for path, analysed in zip(paths, self.memo.analyze(items, self.keep_sources, self.rows)):
            self.analysed[path] = analysed

    def _outlines(self):
        return [a.analysis.outline for a in self.analysed.values() if a.analysis is not None]

    def _unparsed(self) -> set[str]:
        return {path for path, a in self.analysed.items() if a.analysis is not None and not a.analysis.outline.parsed}

    def _naming(self, names: set[str]) -> set[str]:
        """The files the text test skipped whose text mentions one of ``names``."""
        if not names:
            return set()
        found = set()
        for path in sorted(self._unparsed()):
            file, settings = self.work[path]
            text, _ = _read(file, self.memo.texts.get(path), settings)
            if not isinstance(text, FileError) and any(name in text for name in names):
                found.add(path)
        return found

    def result(self, path: str) -> FileResult:
        analysed = self.analysed[path]
        content = self.memo.content(self.work[path][0])
        if analysed.analysis is None:
            return FileResult(path, errors=[analysed.error], content=content)
        diagnostics = reported(analysed.analysis, self.solution, self.work[path][1])
        source = analysed.source if diagnostics else None
        return FileResult(path, diagnostics, source=source, content=content)

    def regions(self, path: str) -> list[RegionLine] | FileError | Diagnostic:
        """What `--show-regions` prints of a file (see `region_lines`)."""
        analysed = self.analysed[path]
        if analysed.analysis is None:
            return analysed.error
        return region_lines(analysed.analysis, self.solution)


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
) -> CheckRun:
    """Check ``paths``; with ``whole_project`` the rest of their projects is read too and
    only the named files are reported. ``cache_dir`` keeps results between runs.
    ``texts``: a file's text (by its path as found) where it is not the one on disk."""
    found = discover(paths, resolver, force_exclude=force_exclude)
    run = CheckRun(errors=list(found.errors))
    named = [(path, resolver.for_path(path)) for path in found.files]
    cache = _cache_for(cache_dir, found.files, resolver)
    record = _stored_record(cache)
    context, listing = _context(paths, found.files, resolver, whole_project, record)
    results = check_files(
        named, jobs=jobs, keep_sources=keep_sources, context=context, texts=texts, cache=cache, listing=listing
    )
    cache.save()
    run.results = sorted(results, key=lambda result: result.path)
    return run


def _context(
    named: Sequence[str | Path],
    files: Sequence[Path],
    resolver: ConfigResolver,
    whole_project: bool,
    stored: RunRecord | None = None,
) -> tuple[list[tuple[Path, Settings]], Listing | None]:
    """The rest of the projects of ``files``, each with its settings: read, not reported;
    and how they were found (see `project_files.Listing`), which the ``stored`` record
    may tell without a walk."""
    if not (whole_project and files):
        return [], None
    known = stored.listing if stored is not None else None
    others, listing = other_project_files(named, files, resolver, known)
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


def _stored_record(cache: Cache) -> RunRecord | None:
    record = cache.record(_record_key())
    return record if isinstance(record, RunRecord) else None


def _cache_for(folder: Path | None, files: Sequence[Path], resolver: ConfigResolver) -> Cache:
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
) -> tuple[_ProjectRun, _Memo]:
    memo = _Memo(workers, cache, texts)
    record = _stored_record(cache)
    memo.known = record.files if record is not None else {}
    project = _ProjectRun([*work, *context], memo, keep_sources, rows)
    _keep_record(memo, project, record, listing)
    return project, memo


def _keep_record(memo: _Memo, project: _ProjectRun, stored: RunRecord | None, listing: Listing | None) -> None:
    """Keep what this run found of each file, unless a file changed or took its worker with it
    during the run (what it read is not one version), or the record already says the same."""
    if not memo.cache.enabled or memo.changed or memo.died:
        return
    files = {}
    for path, (file, _) in project.work.items():
        record = memo.record(file)
        if record is None:
            return  # a file that could not be read is read again next time
        files[path] = record
    record = RunRecord(files, listing)
    if record != stored:
        memo.cache.write_record(_record_key(), record)


def check_files(
    work: list[tuple[Path, Settings]],
    *,
    jobs: int | None = None,
    keep_sources: bool = False,
    context: Sequence[tuple[Path, Settings]] = (),
    texts: Mapping[str, str] = {},
    cache: Cache | None = None,
    listing: Listing | None = None,
) -> list[FileResult]:
    """Check files, each with its own settings, as one project.

    ``context``: other files of the project, analysed for what they tell about ``work`` but
    not reported. ``texts``: a file's text when it is not the one on disk (an editor's buffer).
    ``listing``: how ``context`` was found, kept in the run's record."""
    cache = cache if cache is not None else Cache(None)
    with _workers(jobs, len(work) + len(context)) as workers:
        project, memo = _project(work, context, workers, cache, texts, keep_sources, listing)
        results = {str(path): project.result(str(path)) for path, _ in work}
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
    cache = _cache_for(cache_dir, found.files, resolver)
    context, listing = _context(paths, found.files, resolver, whole_project, _stored_record(cache))
    _describe_files(run, work, context, jobs, cache, {}, listing)
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
) -> None:
    with _workers(jobs, len(work) + len(context)) as workers:
        project, _ = _project(work, context, workers, cache, texts, False, listing, rows=True)
        for path, _ in work:
            run.add(str(path), project.regions(str(path)))


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
    context = _context([path], [path], resolver, whole_project and filename is not None)[0]
    cache = _cache_for(cache_dir if filename else None, [path], resolver)
    _describe_files(run, [(path, settings)], context, None, cache, {str(path): text})
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
    cache = _cache_for(cache_dir if filename else None, [path], resolver)
    context, listing = (
        _context([path], [path], resolver, whole_project, _stored_record(cache)) if filename else ([], None)
    )
    results = check_files(
        [(path, settings)], keep_sources=keep_sources, context=context, texts={str(path): text}, cache=cache, listing=listing
    )
    cache.save()
    return CheckRun(results=results)
