"""Checks many files: discovery, then each file on its own, across processes when it pays."""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from torchlint.config import ConfigResolver, Settings
from torchlint.diagnostic import Diagnostic, FileError, FileResult
from torchlint.discovery import discover, is_excluded
from torchlint.engine import lint_text
from torchlint.source import SourceError, decode_source, read_source

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


def check_text(text: str, path: str, settings: Settings, keep_source: bool = False) -> FileResult:
    try:
        diagnostics = lint_text(text, path, settings)
    except (RecursionError, MemoryError) as error:
        return FileResult(path, errors=[FileError(path, f"too deeply nested to check ({type(error).__name__})")])
    except Exception as error:  # noqa: BLE001 - one bad file must not stop the run
        return FileResult(path, errors=[FileError(path, f"internal error: {type(error).__name__}: {error}")])
    return FileResult(path, diagnostics, source=text if keep_source and diagnostics else None)


def check_file(path: Path, settings: Settings, keep_source: bool = False) -> FileResult:
    try:
        text = read_source(path)
    except SourceError as error:
        return FileResult(str(path), errors=[FileError(str(path), str(error))])
    return check_text(text, str(path), settings, keep_source)


def _check_batch(batch: list[tuple[Path, Settings]], keep_source: bool) -> list[FileResult]:
    return [check_file(path, settings, keep_source) for path, settings in batch]


def _jobs(requested: int | None, files: int) -> int:
    jobs = requested if requested is not None else (os.cpu_count() or 1)
    return max(1, min(jobs, files // _MIN_FILES_PER_WORKER))


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
    workers = _jobs(jobs, len(work))
    if workers == 1:
        run.results = _check_batch(work, keep_sources)
    else:
        # Interleaved batches spread big and small files evenly over the workers.
        batches = [work[i::workers * 4] for i in range(workers * 4)]
        with ProcessPoolExecutor(max_workers=workers) as pool:
            for results in pool.map(_check_batch, batches, [keep_sources] * len(batches)):
                run.results.extend(results)
    run.results.sort(key=lambda result: result.path)
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
