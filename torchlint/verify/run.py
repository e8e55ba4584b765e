"""`torchlint verify`: find targets, run them in workers, compare with the static findings
(graph breaks; with `--recompiles`, recompile hazards)."""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from torchlint.settings.config import ConfigResolver, Settings
from torchlint.report.diagnostic import Diagnostic
from torchlint.report.paths import display_path
from torchlint.files.discovery import discover
from torchlint.analysis.engine import module_name
from torchlint.settings.profile import dynamo_settings
from torchlint.run.runner import check_files
from torchlint.verify.compare import Comparison, compare, expectations
from torchlint.verify.recompile_compare import RecompileComparison, compare_recompiles, finding_json, is_recompile_code
from torchlint.verify.pool import Job, WorkerFailed, WorkerPool
from torchlint.verify.traced import functions_that_ran
from torchlint.verify.targets import TargetFile, declares_targets, parse_target_argument


class VerifyError(Exception):
    """A run that cannot start: no targets, no CUDA, no torch."""


@dataclass(frozen=True)
class VerifyOptions:
    device: str = "cpu"
    backend: str = "eager"
    mode: str | None = None
    timeout: float = 300.0
    jobs: int = 1


def find_target_files(arguments: Sequence[str], resolver: ConfigResolver) -> list[TargetFile]:
    found: list[TargetFile] = []
    for argument in arguments:
        path, only = parse_target_argument(argument)
        if only is not None or path.is_file():
            if not path.is_file():
                raise VerifyError(f"{path}: no such file")
            if only is None and not declares_targets(path):
                raise VerifyError(f"{path}: no targets: the file defines no torchlint_targets()")
            found.append(TargetFile(path.resolve(), only))
            continue
        if not path.exists():
            raise VerifyError(f"{path}: no such file or directory")
        walked = discover([path], resolver, force_exclude=False)
        found.extend(TargetFile(p.resolve()) for p in walked.files if declares_targets(p))
    if not found:
        raise VerifyError("no targets: no file defines torchlint_targets()")
    return found


def unknown_target(target_file: TargetFile, names: list[str]) -> str:
    """`targets.py: no target `nope`; did you mean `net`? Its targets: net, step`."""
    message = f"{display_path(str(target_file.path), Path.cwd())}: no target `{target_file.only}`"
    close = difflib.get_close_matches(target_file.only or "", names, n=1)
    if close:
        message += f"; did you mean `{close[0]}`?"
    listed = ", ".join(names) if names else "none"
    return f"{message} (its targets: {listed})"


# What a run adds to a target's request, given the target's key (`path::name`).
Extra = Callable[[str], dict]


def _list_targets(
    files: list[TargetFile], options: VerifyOptions, resolver: ConfigResolver, pool: WorkerPool, extra: Extra | None
) -> tuple[list[Job], list[tuple[str, dict]], str | None]:
    """Ask a worker for the names each file declares (and whether CUDA is there)."""
    jobs: list[Job] = []
    failed: list[tuple[str, dict]] = []
    torch_version = None
    for target_file in files:
        try:
            with pool.worker() as worker:
                torch_version = worker.torch_version
                if options.device.startswith("cuda") and not worker.has_cuda:
                    raise VerifyError(f"--device {options.device} asked for, but torch {worker.torch_version} sees no CUDA device")
                response = worker.request({"op": "list", "path": str(target_file.path)}, options.timeout)
        except WorkerFailed as failure:
            if torch_version is None:
                raise VerifyError(f"cannot start a verify worker (is torch installed?): {failure}") from None
            response = {"status": "error", "error": str(failure)}
        if response["status"] != "ok":
            failed.append((f"{target_file.path}", response))
            continue
        if target_file.only is not None:
            if target_file.only not in response["names"]:
                raise VerifyError(unknown_target(target_file, response["names"]))
            response = {**response, "names": [target_file.only]}
        profile = dynamo_settings(resolver.for_path(target_file.path))
        for name in response["names"]:
            key = f"{target_file.path}::{name}"
            payload = {"op": "run", "path": str(target_file.path), "name": name, "device": options.device,
                       "backend": options.backend, "mode": options.mode, "profile": profile}
            jobs.append(Job(key, {**payload, **(extra(key) if extra else {})}))
    return jobs, failed, torch_version


def with_packages(paths: set[str]) -> list[str]:
    """The Python files among ``paths``, with the `__init__.py` of every package they are
    in: re-exports there (`diffusers.DDPMScheduler`) resolve only through them."""
    found = {path for path in paths if path.endswith((".py", ".pyi")) and os.path.isfile(path)}
    for path in list(found):
        folder = Path(path).parent
        while (folder / "__init__.py").is_file() and folder != folder.parent:
            found.add(str(folder / "__init__.py"))
            folder = folder.parent
    return sorted(found)


EntryPoints = Callable[[str, Settings], tuple[str, ...]]


def lint_work(paths: list[str], resolver: ConfigResolver, entry_points: EntryPoints) -> list[tuple[Path, Settings]]:
    """Each file with its settings, what verify saw compiled joining its configured entry points."""
    work = []
    for path in paths:
        settings = resolver.for_path(Path(path))
        work.append((Path(path), replace(settings, entry_points=settings.entry_points + entry_points(path, settings))))
    return work


def _lint_together(paths: list[str], resolver: ConfigResolver, entry_points: EntryPoints) -> dict[str, list[Diagnostic]]:
    """The static findings of the files that ran, linted as one project, as `torchlint check
    a.py b.py` does: calls between them, and objects one builds a module around, are followed."""
    return {result.path: result.diagnostics for result in check_files(lint_work(paths, resolver, entry_points))}


@dataclass
class TargetRuns:
    """What the workers saw: one response per target (`path::name`), in declaration order."""

    files: list[TargetFile]
    results: list[tuple[str, dict]]
    torch_version: str | None


def run_targets(
    arguments: Sequence[str],
    resolver: ConfigResolver,
    options: VerifyOptions,
    pool: WorkerPool,
    on_progress: Callable[[int, int, str], None] | None = None,
    extra: Extra | None = None,
) -> TargetRuns:
    """Run every target the arguments name through Dynamo; no static analysis. ``extra``:
    what to add to each target's request (where to save its output, or what to compare it with)."""
    files = find_target_files(arguments, resolver)
    jobs, results, torch_version = _list_targets(files, options, resolver, pool, extra)
    done = len(results)

    def record(job: Job, response: dict) -> None:
        nonlocal done
        results.append((job.key, response))
        done += 1
        if on_progress is not None:
            on_progress(done, len(jobs), job.key)

    pool.run(jobs, timeout=options.timeout, on_done=record)
    order = {job.key: index for index, job in enumerate(jobs)}
    results.sort(key=lambda item: order.get(item[0], -1))
    return TargetRuns(files, results, torch_version)


@dataclass
class WhatRan:
    # the functions verify compiled (`Block.forward`), entry points for the static side
    compiled: tuple[str, ...]
    # file -> the lines that ran in some target
    lines: dict[str, set[int]]
    # the target files with `# expect:` annotations
    annotated: list[Path]
    # what the static side lints: every file that ran or broke, with its packages' `__init__.py`
    files: list[str]


def what_ran(runs: TargetRuns) -> WhatRan:
    # What verify compiles is compiled code for the static side too (`model.generate`,
    # a scheduler's `step`): the targets' functions join the configured entry points.
    results = runs.results
    compiled = tuple(sorted({r.get("compiled") for _, r in results if r.get("compiled")}))
    ran: dict[str, set[int]] = {}
    for _, response in results:
        for path, lines in response.get("executed", {}).items():
            ran.setdefault(path, set()).update(lines)
    unique = dict.fromkeys(f.path for f in runs.files)
    annotated = [p for p in unique if "# expect:" in p.read_text(encoding="utf-8", errors="replace")]
    broke = {b["file"] for _, r in results for b in r.get("breaks", []) if b.get("file")}
    linted = with_packages({*ran, *broke, *(str(p.resolve()) for p in annotated)})
    return WhatRan(compiled, ran, annotated, linted)


def verify(
    arguments: Sequence[str],
    resolver: ConfigResolver,
    options: VerifyOptions,
    on_progress: Callable[[int, int, str], None] | None = None,
    pool: WorkerPool | None = None,
) -> tuple[Comparison, dict]:
    """``pool``: workers kept warm by the caller across runs (its size stands in for
    ``options.jobs``); by default a pool of ``options.jobs`` workers for this run alone."""
    if pool is None:
        with WorkerPool(options.jobs) as own:
            return verify(arguments, resolver, options, on_progress, own)
    runs = run_targets(arguments, resolver, options, pool, on_progress)
    files, results, torch_version = runs.files, runs.results, runs.torch_version

    seen = what_ran(runs)
    compiled, ran, annotated, linted = seen.compiled, seen.lines, seen.annotated, seen.files

    def linter(traced: bool) -> Callable[[str], list[Diagnostic]]:
        def entry_points(path: str, settings: Settings) -> tuple[str, ...]:
            if not traced:
                return compiled
            module = module_name(path, settings)
            functions = sorted(functions_that_ran(path, ran.get(path, set())))
            return compiled + tuple(f"{module}.{name}" for name in functions)

        found = _lint_together(linted, resolver, entry_points)
        return lambda path: found.get(path, [])

    partly_run = frozenset(f.path for f in files if f.only is not None) - {f.path for f in files if f.only is None}
    comparison = compare(results, linter(traced=False), annotated, partly_run)
    comparison.traced = compare(results, linter(traced=True), [], partly_run)
    settings = {
        "torch_version": torch_version,
        "device": options.device,
        "backend": options.backend,
        "mode": options.mode,
    }
    return comparison, settings


def verify_recompiles(
    arguments: Sequence[str],
    resolver: ConfigResolver,
    options: VerifyOptions,
    on_progress: Callable[[int, int, str], None] | None = None,
    pool: WorkerPool | None = None,
) -> tuple[RecompileComparison, dict]:
    """`verify --recompiles`: every call of each target, eagerly and compiled, counting what
    Dynamo compiled, against the TL7xx findings (see recompile_compare.py)."""
    if pool is None:
        with WorkerPool(options.jobs) as own:
            return verify_recompiles(arguments, resolver, options, on_progress, own)
    runs = run_targets(arguments, resolver, options, pool, on_progress, extra=lambda key: {"op": "recompiles"})
    ok = [response for _, response in runs.results if response.get("status") == "ok"]
    compiled = tuple(sorted({name for r in ok for name in r.get("compiled_functions", ())}))
    ran = {path for r in ok for path in r.get("executed", {})}
    frames = {frame["file"] for r in ok for frame in r.get("frames", ()) if frame.get("user") and frame.get("file")}
    unique = list(dict.fromkeys(f.path for f in runs.files))
    annotated = [p for p in unique if "# expect:" in p.read_text(encoding="utf-8", errors="replace")]
    linted = with_packages({*ran, *frames, *(str(p) for p in unique)})
    found = _lint_together(linted, resolver, lambda path, settings: compiled)
    shown = _shown_under(options.backend)
    recompile_findings = {
        path: [finding_json(d) for d in diagnostics if is_recompile_code(d.code) and shown(d.code)]
        for path, diagnostics in found.items()
    }

    def expected(text: str) -> dict[int, set[str]]:
        return {row: {code for code in codes if shown(code)} for row, codes in expectations(text).items()}

    partly_run = frozenset(f.path for f in runs.files if f.only is not None) - {f.path for f in runs.files if f.only is None}
    comparison = compare_recompiles(
        runs.results, lambda path: recompile_findings.get(path, []), annotated, partly_run, expected
    )
    settings = {"torch_version": runs.torch_version, "device": options.device, "backend": options.backend, "mode": options.mode}
    return comparison, settings


def _shown_under(backend: str) -> Callable[[str], bool]:
    """Whether a rule's hazard shows under ``backend``: a run under `eager` cannot speak for what
    only inductor specializes (a rule's `backends`)."""
    from torchlint.rules import rule_by_code

    def shown(code: str) -> bool:
        rule = rule_by_code(code)
        return rule is None or backend in rule.backends

    return shown
