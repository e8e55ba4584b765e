"""Each file's own steps, run in the worker processes and kept in the cache by everything
they read: its text read and decoded once, what it tells the project first (`project_hints`),
its analysis.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from torchlint.analysis.engine import FileAnalysis, ParserLimit, analyze_text
from torchlint.analysis.project_hints import FileHints, file_hints
from torchlint.files.source import SourceError, decode_source, read_bytes
from torchlint.parse.deep_stack import run_with_deep_stack
from torchlint.parse.incremental import LastParse, reparse
from torchlint.parse.positions import Parsed, parse
from torchlint.report.diagnostic import FileError
from torchlint.run.cache import Cache, digest
from torchlint.run.run_record import FileRecord, Stamp, content_hash, file_content
from torchlint.run.workers import Workers
from torchlint.settings.config import Settings
from torchlint.settings.profile import CompileProfile

_T = TypeVar("_T")


def text_content(text: str) -> str:
    """The content hash of a text that stands in for a file (an editor's buffer, a fix)."""
    return content_hash(text.encode("utf-8", "surrogatepass"))


def read_text(path: Path, text: str | None, settings: Settings) -> tuple[str | FileError, str | None]:
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
    """A file's analysis, or why there is none."""

    path: str
    analysis: FileAnalysis | None = None
    error: FileError | None = None
    # what its text tells the project before any file is analysed, read from the same text
    hints: FileHints = field(default_factory=FileHints)


# One file's work: the file, its settings, the compile profile (None for the hints step),
# its text when that is not the one on disk, and whether to parse it whatever the text test says.
Item = tuple[Path, Settings, "CompileProfile | None", "str | None", bool]


def _analyze_batch(batch: list[Item], rows: bool, from_last_parse: bool = False) -> list[tuple[Analysed, str | None]]:
    """Each item's analysis; ``from_last_parse``: parse each text from the last parse of its
    file in this worker (an editor's edits, one after another)."""
    found = []
    for path, settings, profile, text, parse_always in batch:
        source, content = read_text(path, text, settings)
        if isinstance(source, FileError):
            found.append((Analysed(str(path), error=source), content))
            continue
        parser = _parser_from_last_parse(str(path)) if from_last_parse else parse
        analysis = _per_file(
            str(path),
            lambda: analyze_text(
                source, str(path), settings, profile, parse_always=parse_always, rows=rows, parser=parser
            ),
        )
        if isinstance(analysis, FileError):
            found.append((Analysed(str(path), error=analysis), content))
        else:
            found.append((Analysed(str(path), analysis, hints=_hints_of(str(path), source)), content))
    return found


# The last parse of each file whose edits this worker analysed, the most recent last: a few,
# as a module's tree takes about a hundred times its text in memory.
_last_parses: dict[str, LastParse] = {}
_LAST_PARSES_KEPT = 4


def _parser_from_last_parse(path: str) -> Callable[[str], Parsed]:
    def parser(text: str) -> Parsed:
        found = reparse(_last_parses.pop(path, None), text)
        if isinstance(found, LastParse):
            _last_parses[path] = found
            while len(_last_parses) > _LAST_PARSES_KEPT:
                del _last_parses[next(iter(_last_parses))]
            return found.parsed
        return found

    return parser


def _hints_of(path: str, source: str) -> FileHints:
    hints = _per_file(path, lambda: file_hints(source))
    return FileHints() if isinstance(hints, FileError) else hints


def _hints_batch(batch: list[Item]) -> list[tuple[FileHints, str | None]]:
    found = []
    for path, settings, _, text, _ in batch:
        source, content = read_text(path, text, settings)
        found.append((FileHints() if isinstance(source, FileError) else _hints_of(str(path), source), content))
    return found


# Told (files done, files in all) as a run's files are analysed.
Progress = Callable[[int, int], None]


def _counter(progress: Progress, done: int, total: int) -> Callable[[], None]:
    """Tells ``progress`` the ``done`` so far, and one more each time it is called."""
    progress(done, total)

    def one_more() -> None:
        nonlocal done
        done += 1
        progress(done, total)

    return one_more


# Stands for what a step read of a file whose worker died on it: nothing to compare or keep.
_DIED = "died"


def _died(item: Item, why: str) -> Analysed:
    path = str(item[0])
    return Analysed(path, error=FileError(path, f"could not be checked: {why}"))


# What each step gives for a file its worker died on.
_DEATH_RESULTS: dict[Callable, Callable[[Item, str], object]] = {
    _analyze_batch: lambda item, why: (_died(item, why), _DIED),
    _hints_batch: lambda item, why: (FileHints(), _DIED),
}


# What is said of a file saved while it was being checked: what the run read of it was
# not one version, so nothing it found is reported.
CHANGED_DURING_RUN = "changed while it was being checked; check it again"


class Memo:
    """Per-file steps run in the workers, each looked up in the cache first by a key of
    everything it reads."""

    def __init__(
        self, workers: Workers, cache: Cache, texts: Mapping[str, str], progress: Progress | None = None
    ) -> None:
        self.workers = workers
        self.cache = cache
        self.texts = texts
        # told how many of the project's files are analysed (see `analyze`)
        self.progress = progress
        self._content: dict[str, str | None] = {}
        self._stamps: dict[str, Stamp | None] = {}
        self._forms: dict[int, tuple[object, str]] = {}
        # what the last run recorded of each file: its hash holds while its stat is the same
        self.known: Mapping[str, FileRecord] = {}
        # when the run that recorded them started: a stamp vouches only where the file was older
        self.known_started: int | None = None
        # files whose bytes a step read were not those the run took them to be: saved while
        # the run went on. Their results are not kept, and the run reports them.
        self.changed: set[str] = set()
        # files whose worker died on them: reported, and nothing of the run is kept
        self.died: set[str] = set()

    def source(self, path: Path, settings: Settings) -> str | None:
        """The text a file's findings were made in, read again for the reporters (a run keeps
        no file's text); None where the file no longer holds it: it changed during the run."""
        text, read = read_text(path, self.texts.get(str(path)), settings)
        if isinstance(text, FileError) or read != self.content(path):
            self.changed.add(str(path))
            return None
        return text

    def content(self, path: Path) -> str | None:
        """A hash of the file's bytes; None when it cannot be read (never cached)."""
        key = str(path)
        if key not in self._content:
            text = self.texts.get(key)
            if text is not None:
                self._content[key], self._stamps[key] = text_content(text), None
            else:
                self._content[key], self._stamps[key] = file_content(path, self.known.get(key), self.known_started)
        return self._content[key]

    def forget(self, path: str) -> None:
        """Read ``path`` afresh next time: its text (a buffer, or the file on disk) changed."""
        self._content.pop(path, None)
        self._stamps.pop(path, None)

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

    def inputs(self, path: Path, settings: Settings) -> str | None:
        """A digest of what a file's own steps read: its content and its settings; None when
        it cannot be read."""
        content = self.content(path)
        return f"{content}:{self.form(settings)}" if content is not None else None

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
            inputs = value.analysis_inputs() if isinstance(value, Settings) else value
            found = self._forms[id(value)] = (value, digest(inputs))
        return found[1]

    def map(
        self, step: Callable, items: list[Item], keys: list[str | None], *args: object, progress: Progress | None = None
    ) -> list:
        stored = iter(self.cache.get_many([key for key in keys if key is not None]))
        found = [next(stored) if key is not None else None for key in keys]
        missing = [i for i, value in enumerate(found) if value is None]
        on_death = _DEATH_RESULTS[step]
        on_done = _counter(progress, len(items) - len(missing), len(items)) if progress is not None else None
        computed = (
            self.workers.map(step, [items[i] for i in missing], *args, on_death=on_death, on_done=on_done)
            if missing else []
        )
        for i, (value, read) in zip(missing, computed):
            found[i] = value
            path = str(items[i][0])
            if read is _DIED:
                self.died.add(path)
                continue
            self.content(items[i][0])
            # Kept only under the hash of the bytes the step itself read.
            if self._note_read(path, read) and keys[i] is not None:
                self.cache.put(keys[i], value)
        return found

    def analyze(
        self, items: list[Item], rows: bool, progress: Progress | None = None, from_last_parse: bool = False
    ) -> list[Analysed]:
        """Each item's analysis; ``progress`` is told how many are done (those found in the
        cache at once, then one by one). ``from_last_parse``: the items are edits of files the
        workers saw before (see `_analyze_batch`)."""
        keys = [
            self.key("analysis", path, settings, profile, parse_always, rows)
            for path, settings, profile, _, parse_always in items
        ]
        return self.map(_analyze_batch, items, keys, rows, from_last_parse, progress=progress)

    def hints(self, items: list[Item]) -> list[FileHints]:
        keys = [self.key("hints", path, settings) for path, settings, *_ in items]
        return self.map(_hints_batch, items, keys)
