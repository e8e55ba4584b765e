"""Checks many files: discovery, then each file across processes when it pays, then the
project index and rounds of linting again the files that calls from other files reach.
Every per-file step and every solve is looked up in the cache first."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar

from torchlint.run.cache import Cache, digest
from torchlint.settings.config import ConfigResolver, Settings
from torchlint.report.diagnostic import Diagnostic, FileError, FileResult
from torchlint.files.discovery import discover, is_excluded
from torchlint.parse.deep_stack import run_with_deep_stack
from torchlint.analysis.engine import (
    ParserLimit,
    UnparsableFile,
    analyze_text,
    describe_regions,
    dynamo_config_of,
    lint_text,
)
from torchlint.report.paths import display_path
from torchlint.run.run_record import FileRecord, RunRecord, Stamp, Step, content_hash, file_content
from torchlint.analysis.dynamo_config import merge
from torchlint.analysis.outline import FileOutline
from torchlint.files.project_files import Listing, other_project_files, project_roots
from torchlint.project.index import ProjectFacts, ProjectIndex, SolvedProject
from torchlint.analysis.regions import RegionLine
from torchlint.files.source import SourceError, decode_source, read_bytes
from torchlint.run.workers import Workers

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


def check_file(
    path: Path, settings: Settings, keep_source: bool = False, project: ProjectFacts | None = None, text: str | None = None
) -> FileResult:
    text, content = _read(path, text, settings)
    if isinstance(text, FileError):
        return FileResult(str(path), errors=[text], content=content)
    result = check_text(text, str(path), settings, keep_source, project)
    result.content = content
    return result


# One file's work in a batch: the file, its settings, what the project tells about it, and
# its text when that is not the one on disk.
_Item = tuple[Path, Settings, "ProjectFacts | None", "str | None"]


def _check_batch(batch: list[_Item], keep_source: bool) -> list[tuple[FileResult, str | None]]:
    checked = []
    for path, settings, project, text in batch:
        result = check_file(path, settings, keep_source, project, text)
        checked.append((result, result.content))
    return checked


def _analyze_file(
    path: Path,
    settings: Settings,
    project: ProjectFacts | None,
    keep_source: bool,
    parse_always: bool,
    text: str | None,
    run_rules: bool = True,
) -> tuple[FileResult, FileOutline | None]:
    """Outline a file of a project for the project index and, with ``run_rules``, lint it."""
    text, content = _read(path, text, settings)
    if isinstance(text, FileError):
        return FileResult(str(path), errors=[text], content=content), None
    outline: list[FileOutline] = []

    def analyze() -> FileResult:
        diagnostics, found = analyze_text(
            text, str(path), settings, project=project, parse_always=parse_always, run_rules=run_rules
        )
        outline.append(found)
        return FileResult(str(path), diagnostics, source=text if keep_source and diagnostics else None)

    result = _guarded(str(path), analyze)
    result.content = content
    return result, (outline[0] if outline else None)


def _outline_batch(
    batch: list[_Item], keep_source: bool, parse_always: bool, run_rules: bool
) -> list[tuple[tuple[FileResult, FileOutline | None, str | None], str | None]]:
    """Each file's outline, with a digest of it (an edit that leaves the outline as it
    was, as most edits inside a function do, needs no new solve), and its findings: with
    ``run_rules``, those of its own view of what is compiled, which stand unless the
    project tells it more; without, only those of a file with no compiled code."""
    outlined = []
    for path, settings, project, text in batch:
        result, outline = _analyze_file(path, settings, project, keep_source, parse_always, text, run_rules)
        outlined.append(((result, outline, digest(outline) if outline is not None else None), result.content))
    return outlined


def _lint_batch(batch: list[_Item], keep_source: bool) -> list[tuple[tuple[FileResult, tuple | None, str | None], str | None]]:
    """Lint with what the project tells each file, and what its kinds tell other files (with
    a digest): the kinds its calls pass, and which of its functions return tensors. The rest
    of its outline is what the project was solved from."""
    linted = []
    for path, settings, project, text in batch:
        result, outline = _analyze_file(path, settings, project, keep_source, False, text)
        told = _kinds_told(outline) if outline is not None else None
        linted.append(((result, told, digest(told) if told is not None else None), result.content))
    return linted


def _kinds_told(outline: FileOutline) -> tuple:
    """What a file's lint tells the project: the part of its outline a lint with new facts
    can change (kinds, and which functions break)."""
    return (outline.passed, outline.tensor_returns, outline.breaking)


def _dynamo_config_batch(batch: list[_Item]) -> list[tuple[dict, str | None]]:
    found = []
    for path, settings, _, text in batch:
        source, content = _read(path, text, settings)
        if isinstance(source, FileError):
            found.append(({}, content))
            continue
        config = _per_file(str(path), lambda: dynamo_config_of(source))
        found.append(({} if isinstance(config, FileError) else config, content))
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
    for path, settings, project, text in batch:
        source, _ = _read(path, text, settings)
        described.append(source if isinstance(source, FileError) else _describe(source, str(path), settings, project))
    return described


# Stands for what a step read of a file whose worker died on it: nothing to compare or keep.
_DIED = "died"


def _died(item: _Item, why: str) -> FileResult:
    path = str(item[0])
    return FileResult(path, errors=[FileError(path, f"could not be checked: {why}")])


# What each step gives for a file its worker died on.
_DEATH_RESULTS: dict[Callable, Callable[[_Item, str], object]] = {
    _check_batch: lambda item, why: (_died(item, why), _DIED),
    _outline_batch: lambda item, why: ((_died(item, why), None, None), _DIED),
    _lint_batch: lambda item, why: ((_died(item, why), None, None), _DIED),
    _dynamo_config_batch: lambda item, why: ({}, _DIED),
    _describe_batch: lambda item, why: _died(item, why).errors[0],
}


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
) -> CheckRun:
    """Check ``paths``; with ``whole_project`` the rest of their projects is read too and
    only the named files are reported. ``cache_dir`` keeps results between runs.
    ``texts``: a file's text (by its path as found) where it is not the one on disk."""
    found = discover(paths, resolver, force_exclude=force_exclude)
    run = CheckRun(errors=list(found.errors))
    named = [(path, resolver.for_path(path)) for path in found.files]
    cache = _cache_for(cache_dir, found.files, resolver)
    context, listing = _context(paths, found.files, resolver, whole_project, _stored_record(cache, keep_sources))
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


def _stored_record(cache: Cache, keep_sources: bool) -> RunRecord | None:
    record = cache.record(_record_key(keep_sources))
    return record if isinstance(record, RunRecord) else None


def _cache_for(folder: Path | None, files: Sequence[Path], resolver: ConfigResolver) -> Cache:
    """One cache file per set of project roots: runs over the same project share it."""
    if folder is None:
        return Cache(None)
    return Cache(folder, str(project_roots(files, resolver)))


def check_files(
    work: list[tuple[Path, Settings]],
    *,
    jobs: int | None = None,
    keep_sources: bool = False,
    context: list[tuple[Path, Settings]] = (),
    texts: Mapping[str, str] = {},
    cache: Cache | None = None,
    listing: Listing | None = None,
) -> list[FileResult]:
    """Lint files, each with its own settings; two or more are linted as one project.

    ``context``: other files of the project, read for what they tell about ``work`` but not
    reported. ``texts``: a file's text when it is not the one on disk (an editor's buffer).
    ``listing``: how ``context`` was found, kept in the run's record."""
    cache = cache if cache is not None else Cache(None)
    everything = [*work, *context]
    with _workers(jobs, len(everything)) as workers:
        memo = _Memo(workers, cache, texts)
        if len(everything) < 2:
            items = [(path, settings, None, texts.get(str(path))) for path, settings in work]
            results = {str(path): result for (path, _), result in zip(work, memo.check(items, keep_sources))}
        else:
            record = _stored_record(cache, keep_sources)
            memo.known = record.files if record is not None else {}
            results = _replay(memo, record, [str(path) for path, _ in work], everything, keep_sources, listing)
            if results is None:
                results = _ProjectRun(everything, memo, keep_sources).final_results(record, listing)
    for path in memo.changed & results.keys():
        results[path] = FileResult(path, errors=[FileError(path, CHANGED_DURING_RUN)])
    return [results[str(path)] for path, _ in work]


# What is said of a file saved while it was being checked: what the run read of it was
# not one version, so nothing it found is reported.
CHANGED_DURING_RUN = "changed while it was being checked; check it again"


def _record_key(keep_sources: bool) -> str:
    # Reasons name other files relative to the current folder.
    return digest("run-record", str(Path.cwd()), keep_sources)


def _keep_record(memo: _Memo, keep_sources: bool, record: RunRecord, stored: object) -> None:
    """Replace the stored record, unless it already says the same (a warm run writes
    nothing) or a file changed during the run (what it read is not one version)."""
    cache = memo.cache
    if record != stored and not memo.changed and not memo.died:
        cache.write_record(_record_key(keep_sources), record)


def _pattern(names: Sequence[str]) -> re.Pattern:
    return re.compile("|".join(re.escape(name) for name in names))


def _names_one(text: str | None, pattern: re.Pattern) -> bool:
    return text is not None and pattern.search(text) is not None


def _replay(
    memo: _Memo,
    record: RunRecord | None,
    named: list[str],
    everything: list[tuple[Path, Settings]],
    keep_sources: bool,
    listing: Listing | None,
) -> dict[str, FileResult] | None:
    """The named files' results without a project run, when the last run of this project
    recorded every other file as it is now and the named files' steps, done again, give
    back what they gave then (see `run_record`); None when a run is needed."""
    files = {str(path): (path, settings) for path, settings in everything}
    if record is None or record.files.keys() != files.keys() or len(named) == len(files):
        # With every file named, each one's steps are read back anyway: the project run
        # does that, and no more.
        return None
    named_set = set(named)
    for path, (file, settings) in files.items():
        known = record.files[path]
        if memo.form(settings) != known.settings or (path not in named_set and memo.content(file) != known.content):
            return None
    results = {}
    redone = {}
    # The named files' steps are done again, not looked up: their entries are all the
    # cache could add, and reading it would cost more than the steps.
    uncached = _Memo(memo.workers, Cache(None), memo.texts)
    for path in named:
        file, settings = files[path]
        steps = record.files[path].steps
        result = _redo(uncached, record, file, settings, steps, keep_sources)
        redone[path] = uncached.record(file, settings, steps)
        if result is None or redone[path] is None:
            return None
        results[path] = result
    memo.changed |= uncached.changed
    _keep_record(memo, keep_sources, record.with_files(redone, listing), record)
    return results


def _redo(
    memo: _Memo, record: RunRecord, file: Path, settings: Settings, steps: Sequence[Step], keep_sources: bool
) -> FileResult | None:
    """One file's recorded steps done again: its last result, or None at the first step
    that gives back something else."""
    text = memo.texts.get(str(file))
    result = None
    # The findings of the outline step stand only when no lint step follows it.
    linted_again = any(step == "lint" for step, _, _ in steps)
    for step, given, gave in steps:
        if step == "config":
            got = digest(memo.dynamo_configs([(file, settings, None, text)])[0])
        elif step == "outline":
            result, _, got = memo.outline(
                [(file, settings, record.plain, text)], keep_sources, given, not linted_again
            )[0]
        elif step == "naming" and given in record.namings:
            got = _names_one(memo.text(file, settings), _pattern(record.namings[given]))
        elif step == "lint" and isinstance(facts := record.facts.get(given), ProjectFacts):
            result, _, got = memo.lint([(file, settings, facts, text)], keep_sources)[0]
        else:
            return None
        if got != gave:
            return None
    return result


class _Memo:
    """Per-file steps run in the workers, each looked up in the cache first by a key of
    everything it reads."""

    def __init__(self, workers: Workers, cache: Cache, texts: Mapping[str, str]) -> None:
        self.workers = workers
        self.cache = cache
        self.texts = texts
        self._content: dict[str, str | None] = {}
        self._stamps: dict[str, Stamp | None] = {}
        self._texts: dict[str, str | None] = {}
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

    def record(self, path: Path, settings: Settings, steps: Sequence[Step]) -> FileRecord | None:
        content = self.content(path)
        if content is None:
            return None
        return FileRecord(content, self._stamps.get(str(path)), self.form(settings), tuple(steps))

    def text(self, path: Path, settings: Settings) -> str | None:
        """The file's text, read once per run; None when it cannot be read or decoded."""
        key = str(path)
        if key not in self._texts:
            source, content = _read(path, self.texts.get(key), settings)
            self.content(path)
            self._note_read(key, content)
            self._texts[key] = None if isinstance(source, FileError) else source
        return self._texts[key]

    def _note_read(self, path: str, read: str | None) -> bool:
        """Whether what a step read of ``path`` is what the run's key says; if not, the
        file changed during the run."""
        if read == self._content.get(path):
            return read is not None  # an unreadable file is as the run found it, and not kept
        self.changed.add(path)
        return False

    def key(self, step: str, path: Path, settings: Settings, *facts: object) -> str | None:
        if not self.cache.enabled:
            return None
        content = self.content(path)
        if content is None:
            return None
        # torchlint's own code is not in the key: each version of it has a cache file of its own.
        return digest(step, str(path), content, self.form(settings), *map(self.form, facts))

    def form(self, value: object) -> object:
        """A digest standing for settings or facts that many files share, worked out once."""
        if not isinstance(value, (Settings, ProjectFacts)):
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

    def check(self, items: list[_Item], keep_sources: bool) -> list[FileResult]:
        keys = [self.key("check", path, settings, project, keep_sources) for path, settings, project, _ in items]
        return self.map(_check_batch, items, keys, keep_sources)

    def outline(self, items: list[_Item], keep_sources: bool, parse_always: bool, run_rules: bool) -> list:
        keys = [
            self.key("outline", path, settings, project, keep_sources, parse_always, run_rules)
            for path, settings, project, _ in items
        ]
        return self.map(_outline_batch, items, keys, keep_sources, parse_always, run_rules)

    def lint(self, items: list[_Item], keep_sources: bool) -> list:
        keys = [self.key("lint", path, settings, project, keep_sources) for path, settings, project, _ in items]
        return self.map(_lint_batch, items, keys, keep_sources)

    def dynamo_configs(self, items: list[_Item]) -> list[dict]:
        keys = [self.key("dynamo-config", path, None) for path, _, _, _ in items]
        return self.map(_dynamo_config_batch, items, keys)


# Rounds of handing kinds on from call to callee: each round is one more hop across files.
_MAX_ROUNDS = 16


class _ProjectRun:
    """Lints the files of one run together, so calls between them are followed.

    One way through: the `torch._dynamo.config` assignments (cheap: only files that mention
    `_dynamo` are parsed); every file outlined, and linted in the same pass as far as its own
    view of what is compiled goes; the project solved from the outlines (outlining, on
    demand, files the text test skipped that compiled code calls into or that may build a
    module around the objects it calls); then each file the project tells something its own
    view lacked is linted again with it. Linting reports the kinds compiled calls pass to
    other files; where that changes what a file is told, it is solved again and just those
    files are linted again, until nothing changes. Most files are parsed once.

    ``run_rules=False`` (for `--show-regions`) outlines and solves, and lints nothing.
    """

    def __init__(self, work: list[tuple[Path, Settings]], memo: _Memo, keep_sources: bool, run_rules: bool = True) -> None:
        self.work = {str(path): (path, settings) for path, settings in work}
        self.run_rules = run_rules
        self.texts = memo.texts
        self.keep_sources = keep_sources
        self.memo = memo
        # path -> the steps its file went through, in order, for the run's record
        self.steps: dict[str, list[Step]] = {path: [] for path in self.work}
        self.namings: dict[str, tuple[str, ...]] = {}
        # key of a "lint" step -> the facts it linted with, for the record
        self.lint_facts: dict[str, ProjectFacts] = {}
        ordered = sorted(self.work)
        configs = self.memo.dynamo_configs([self._item(path, None) for path in ordered])
        for path, config in zip(ordered, configs):
            self.steps[path].append(("config", None, digest(config)))
        self.plain = ProjectFacts(dynamo_config=merge(configs))
        self.results: dict[str, FileResult] = {}
        self.outlines: dict[str, FileOutline] = {}
        # path -> digests of its outline and of what its calls pass, so a solve can be looked up
        self.outline_ids: dict[str, tuple[str, ...]] = {}
        # path -> the facts its current result was linted with (absent: not linted)
        self.linted_with: dict[str, ProjectFacts] = {}
        self._outline(list(self.work), parse_always=False)
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
            self._outline(needed, parse_always=True)

    def _item(self, path: str, facts: ProjectFacts | None) -> _Item:
        return (*self.work[path], facts, self.texts.get(path))

    def _new_index(self) -> SolvedProject:
        ids = sorted(self.outline_ids.items())
        # Reasons name other files relative to the current folder.
        described = not self.run_rules
        key = digest("solve", ids, self.plain.dynamo_config, str(Path.cwd()), described) if self.memo.cache.enabled else None
        if key is not None:
            found = self.memo.cache.get(key)
            if isinstance(found, SolvedProject):
                return found
        index = ProjectIndex(self.outlines.values(), self._display, self.plain.dynamo_config)
        solved = SolvedProject.of(index, described)
        if key is not None:
            self.memo.cache.put(key, solved, "")
        return solved

    def _naming(self, names: set[str]) -> set[str]:
        """The files the text test skipped whose text mentions one of ``names``."""
        if not names:
            return set()
        unparsed = sorted(path for path, outline in self.outlines.items() if not outline.parsed)
        found = key = None
        searched = tuple(sorted(names))
        names_key = digest("names", searched)
        self.namings[names_key] = searched
        if self.memo.cache.enabled:
            contents = [(path, self.memo.content(self.work[path][0])) for path in unparsed]
            key = digest("naming", searched, contents)
            found = self.memo.cache.get(key)
        if found is None:
            pattern = _pattern(searched)
            found = {path for path in unparsed if _names_one(self.memo.text(*self.work[path]), pattern)}
            if key is not None:
                self.memo.cache.put(key, found, "")
        for path in unparsed:
            self.steps[path].append(("naming", names_key, path in found))
        return found

    def _outline(self, paths: list[str], parse_always: bool) -> None:
        items = [self._item(path, self.plain) for path in paths]
        outlined = self.memo.outline(items, self.keep_sources, parse_always, self.run_rules)
        for path, (result, outline, outline_id) in zip(paths, outlined):
            self.results[path] = result
            self.steps[path].append(("outline", parse_always, outline_id))
            if self.run_rules:
                self.linted_with[path] = self.plain
            if outline is not None:
                self.outlines[path] = outline
                self.outline_ids[path] = (outline_id,)

    def facts(self, path: str) -> ProjectFacts:
        if path not in self.outlines:
            return self.plain
        return self.index.facts.get(path) or self.plain

    def final_results(self, stored: RunRecord | None = None, listing: Listing | None = None) -> dict[str, FileResult]:
        """Lint again each file that holds compiled code and that the project tells
        something new; when that changes the kinds calls pass to other files (`for t in
        self.scheduler.timesteps`), solve again and go on: a tensor handed a -> b -> c -> d
        reaches d however many files it crosses. Other files keep their first result."""
        holding = {path for path, _ in self.index.compiled}
        compiled = [path for path in self.outlines if path in holding or self.outlines[path].compiled]
        for _ in range(_MAX_ROUNDS):
            stale = [path for path in compiled if self.facts(path) != self.linted_with.get(path)]
            if not stale or not self._lint(stale):
                break
            self.index = self._new_index()
        self._keep_record(stored, listing)
        return self.results

    def _keep_record(self, stored: RunRecord | None, listing: Listing | None) -> None:
        if not self.memo.cache.enabled:
            return
        files = {}
        for path, steps in self.steps.items():
            record = self.memo.record(self.work[path][0], self.work[path][1], steps)
            if record is None:
                return  # a file that could not be read is read again next time
            files[path] = record
        record = RunRecord(self.plain, files, self.namings, self.lint_facts, listing)
        _keep_record(self.memo, self.keep_sources, record, stored)

    def _lint(self, paths: list[str]) -> bool:
        """Lint ``paths`` with what the project tells them; whether a call passes other kinds now."""
        items = [self._item(path, self.facts(path)) for path in paths]
        linted = self.memo.lint(items, self.keep_sources)
        changed = False
        for path, (_, _, facts, _), (result, told, told_id) in zip(paths, items, linted):
            self.results[path] = result
            facts_key = digest("facts", self.memo.form(facts))
            self.lint_facts[facts_key] = facts
            self.steps[path].append(("lint", facts_key, told_id))
            self.linted_with[path] = facts
            if told is not None and told != _kinds_told(self.outlines[path]):
                passed, tensor_returns, breaking = told
                self.outlines[path] = replace(
                    self.outlines[path], passed=passed, tensor_returns=tensor_returns, breaking=breaking
                )
                self.outline_ids[path] = (*self.outline_ids[path][:1], told_id)
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
    paths: Sequence[str | Path],
    resolver: ConfigResolver,
    *,
    force_exclude: bool = False,
    jobs: int | None = None,
    whole_project: bool = True,
    cache_dir: Path | None = None,
) -> RegionsRun:
    """Which functions are compiled and why, as the lint of ``paths`` sees them."""
    found = discover(paths, resolver, force_exclude=force_exclude)
    run = RegionsRun(errors=list(found.errors))
    work = [(path, resolver.for_path(path)) for path in found.files]
    cache = _cache_for(cache_dir, found.files, resolver)
    _describe_files(run, work, _context(paths, found.files, resolver, whole_project)[0], jobs, cache, {})
    cache.save()
    return run


def _describe_files(
    run: RegionsRun,
    work: list[tuple[Path, Settings]],
    context: list[tuple[Path, Settings]],
    jobs: int | None,
    cache: Cache,
    texts: Mapping[str, str],
) -> None:
    everything = [*work, *context]
    with _workers(jobs, len(everything)) as workers:
        memo = _Memo(workers, cache, texts)
        project = _ProjectRun(everything, memo, False, run_rules=False) if len(everything) > 1 else None
        items = [
            (path, settings, project.facts(str(path)) if project else None, texts.get(str(path)))
            for path, settings in work
        ]
        described_all = workers.map(_describe_batch, items, on_death=_DEATH_RESULTS[_describe_batch])
        for (path, *_), described in zip(items, described_all):
            run.add(str(path), described)


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
    """Lint a buffer from an editor; ``filename`` places it for config, excludes and its
    project (whose other files are read from disk)."""
    path, settings, text = _buffer(data, filename, resolver)
    if filename and force_exclude and is_excluded(path, settings):
        return CheckRun()
    if isinstance(text, FileError):
        return CheckRun(errors=[text])
    if not filename:
        return CheckRun(results=[check_text(text, str(path), settings, keep_sources)])
    cache = _cache_for(cache_dir, [path], resolver)
    context, listing = _context([path], [path], resolver, whole_project, _stored_record(cache, keep_sources))
    results = check_files(
        [(path, settings)], keep_sources=keep_sources, context=context, texts={str(path): text}, cache=cache, listing=listing
    )
    cache.save()
    return CheckRun(results=results)
