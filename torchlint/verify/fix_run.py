"""`torchlint verify --fix`: run the targets, fix the code they ran in a temporary copy, run
them again from the copy, and say what the fixes did to the breaks and to the outputs.

The user's files are only read. The fixes are worked out as `check --fix` would apply them to
the files verify lints, with the functions verify compiles as entry points; the targets then
run in fresh workers that import the copy, and each compares its outputs, eager and compiled,
with the eager output saved by the run before the fixes.
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from torchlint.settings.config import ConfigResolver
from torchlint.report.diagnostic import FileError
from torchlint.fix.fixing import FixRun, fix_files
from torchlint.parse.line_map import original_line
from torchlint.settings.profile import dynamo_settings
from torchlint.verify.fixed_copy import FixedCopy, make_copy
from torchlint.verify.pool import WorkerPool
from torchlint.verify.run import TargetRuns, VerifyOptions, lint_work, run_targets, what_ran

SAME, CHANGED, NOT_COMPARED = "same", "changed", "not compared"


@dataclass
class TargetFix:
    # `path::name` of the original target
    key: str
    before: dict
    # the response from the fixed copy; None where no fix changed anything, so nothing ran again
    after: dict | None
    # the fixes applied on lines this target ran, by code
    fixes: Counter = field(default_factory=Counter)
    # the breaks after the fixes, put back on the original files and lines
    breaks_after: list[dict] = field(default_factory=list)

    @property
    def ok_before(self) -> bool:
        return self.before.get("status") == "ok"

    @property
    def fails_after(self) -> bool:
        """It ran before the fixes and fails after them."""
        return self.ok_before and self.after is not None and self.after.get("status") != "ok"

    @property
    def breaks_counted_after(self) -> list[dict]:
        """The breaks after the fixes; a target that fails after them keeps its breaks before,
        since a crash proves no break removed."""
        return list(self.before.get("breaks", [])) if self.fails_after else self.breaks_after

    @property
    def output(self) -> str:
        if self.after is None:
            return SAME if self.ok_before else NOT_COMPARED
        against = self.after.get("original_output") or {}
        if self.after.get("status") != "ok" or "eager" not in against:
            return NOT_COMPARED
        # Compiled output that differed from eager before the fixes (inductor's numerics)
        # is no change of the fixes' making.
        compiled_changed = not against["compiled"] and self.before.get("outputs_match") is not False
        if against["eager"] and not compiled_changed:
            return SAME
        return NOT_COMPARED if self.before.get("reproduced") is False else CHANGED

    @property
    def why_not_compared(self) -> str | None:
        if self.output != NOT_COMPARED:
            return None
        if not self.ok_before:
            return f"failed before the fixes: {self.before.get('error')}"
        if self.after.get("status") != "ok":
            return f"fails after the fixes: {self.after.get('error')}"
        if self.before.get("reproduced") is False:
            return "the code before the fixes, run again, does not give its first output (a random draw, an object equal only to itself)"
        saved = self.before.get("output_saved")
        return f"the output could not be saved ({saved})" if saved else (self.after.get("original_output") or {}).get("error")


@dataclass
class FixReport:
    unsafe: bool
    settings: dict
    targets: list[TargetFix]
    # every fix applied: file, line (in the original), code
    fixes: list[dict]
    # the fixes applied on a line that still breaks after them, in a target that broke there before
    left: list[dict]
    # files whose fixes were dropped (the result would not parse)
    fix_errors: list[FileError]
    # what went wrong with the copy itself
    errors: list[str]
    # fixes that `--unsafe-fixes` would apply too (0 with it)
    hidden: int

    @property
    def output_changes(self) -> list[TargetFix]:
        return [t for t in self.targets if t.output == CHANGED]

    @property
    def failed_before(self) -> list[TargetFix]:
        return [t for t in self.targets if not t.ok_before]

    @property
    def fails_after(self) -> list[TargetFix]:
        return [t for t in self.targets if t.fails_after]

    @property
    def exit_code(self) -> int:
        """2: a target failed before any fix, or the copy went wrong; 1: a fix changed an
        output or made a target fail; 0 otherwise."""
        if self.failed_before or self.errors:
            return 2
        return 1 if self.output_changes or self.fails_after else 0


def _output_file(folder: Path, key: str) -> str:
    return str(folder / (hashlib.sha256(key.encode()).hexdigest()[:24] + ".pt"))


def verify_fix(
    arguments: Sequence[str],
    resolver: ConfigResolver,
    options: VerifyOptions,
    unsafe: bool,
    on_progress: Callable[[int, int, str], None] | None = None,
    pool: WorkerPool | None = None,
) -> FixReport:
    if pool is None:
        with WorkerPool(options.jobs) as own:
            return verify_fix(arguments, resolver, options, unsafe, on_progress, own)
    with tempfile.TemporaryDirectory(prefix="torchlint-verify-fix-") as temporary:
        folder = Path(temporary).resolve()
        outputs = folder / "outputs"
        outputs.mkdir()
        before = run_targets(arguments, resolver, options, pool, on_progress,
                             extra=lambda key: {"save_output": _output_file(outputs, key)})
        seen = what_ran(before)
        fixed = fix_files(lint_work(seen.files, resolver, lambda path, settings: seen.compiled), unsafe=unsafe)
        hidden = 0 if unsafe else sum(d.fix_applies(True) for d in fixed.check.diagnostics)
        after: dict[str, dict] = {}
        copy = None
        if fixed.changed:
            copy = make_copy({path: text for path, (_, text) in fixed.changed.items()}, [f.path for f in before.files],
                             folder / "copy")
            after = _run_fixed(before, copy, resolver, options, pool, on_progress, outputs)
        report = _report(before, after, fixed, copy, unsafe, hidden)
        _run_again_where_changed(report, resolver, options, pool, outputs)
    report.settings.update(device=options.device, backend=options.backend, mode=options.mode)
    return report


def _run_again_where_changed(
    report: FixReport, resolver: ConfigResolver, options: VerifyOptions, pool: WorkerPool, outputs: Path
) -> None:
    """An output can differ with no fix at all (a random draw, an object equal only to
    itself): each target whose output changed runs once more from the original code, and one
    that does not give its first output again is not compared."""
    changed = [target for target in report.targets if target.output == CHANGED]
    if not changed:
        return
    again = run_targets([target.key for target in changed], resolver, options, pool,
                        extra=lambda key: {"expected_output": _output_file(outputs, key)})
    responses = dict(again.results)
    for target in changed:
        target.before["reproduced"] = reproduces(responses.get(target.key) or {})


def reproduces(response: dict) -> bool:
    """A run of the code before the fixes, compared with the output saved by the first such
    run (``expected_output``), gave that output again."""
    against = response.get("original_output") or {}
    return response.get("status") == "ok" and against.get("eager") is True


def _run_fixed(
    before: TargetRuns,
    copy: FixedCopy,
    resolver: ConfigResolver,
    options: VerifyOptions,
    pool: WorkerPool,
    on_progress: Callable[[int, int, str], None] | None,
    outputs: Path,
) -> dict[str, dict]:
    """The targets run again from the copy, by original key; responses name original files."""
    arguments = [str(copy.copy_of(f.path)) + (f"::{f.only}" if f.only else "") for f in before.files]

    def original_key(key: str) -> str:
        path, _, name = key.rpartition("::")
        return f"{copy.original_of(path)}::{name}"

    def extra(key: str) -> dict:
        original = original_key(key)
        # The copy lies outside the project: the compile profile is the original's.
        profile = dynamo_settings(resolver.for_path(Path(original.rpartition("::")[0])))
        return {"expected_output": _output_file(outputs, original), "profile": profile}

    # Fresh workers (those of the first run have imported the originals), which find the
    # copies first. `-P` keeps the current folder off the front of the path, where it would
    # shadow a copied package; it comes after the copies, as do the targets' own folders,
    # where modules no fix changed are still found.
    env = dict(os.environ if pool.env is None else pool.env)
    folders = [*copy.import_path, *{str(f.path.parent): None for f in before.files}, os.getcwd()]
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [*folders, env.get("PYTHONPATH")]))
    command = [sys.executable, "-P", "-m", "torchlint.verify.worker"]
    # Progress names the user's files, not their copies.
    shown = (lambda done, total, key: on_progress(done, total, original_key(key))) if on_progress is not None else None
    with WorkerPool(pool.size, env=env, command=command) as fresh:
        runs = run_targets(arguments, resolver, options, fresh, shown, extra=extra)
    return {original_key(key): _to_originals(response, copy) for key, response in runs.results}


def _to_originals(response: dict, copy: FixedCopy) -> dict:
    """A response from the copy, its files named by their originals (lines stay the copy's)."""
    breaks = [{**b, "file": copy.original_of(b["file"]) if b.get("file") else None} for b in response.get("breaks", [])]
    executed = {copy.original_of(path): lines for path, lines in response.get("executed", {}).items()}
    ran_originals = sorted(path for path in response.get("executed", {}) if path in copy.originals.values())
    return {**response, "breaks": breaks, "executed": executed, "ran_originals": ran_originals}


def _report(before: TargetRuns, after: dict[str, dict], fixed: FixRun, copy: FixedCopy | None, unsafe: bool,
            hidden: int) -> FixReport:
    lines = {path: original_line(old, new) for path, (old, new) in fixed.changed.items()}
    applied = [(path, row, code) for path, found in sorted(fixed.applied.items()) for row, code in found]
    errors = list(copy.errors) if copy is not None else []
    targets = []
    for key, response in before.results:
        target = TargetFix(key, response, after.get(key))
        ran = {path: set(rows) for path, rows in response.get("executed", {}).items()}
        target.fixes.update(code for path, row, code in applied if row in ran.get(path, ()))
        if target.after is not None:
            target.breaks_after = [
                {**b, "line": lines[b["file"]](b["line"]) if b.get("file") in lines else b["line"]}
                for b in target.after.get("breaks", [])
            ]
            errors += [f"{key}: ran the original {path}, not its fixed copy" for path in target.after["ran_originals"]]
        else:
            target.breaks_after = list(response.get("breaks", []))
        targets.append(target)
    left = []
    for path, row, code in applied:
        broke_before = {t.key for t in targets for b in t.before.get("breaks", []) if (b.get("file"), b["line"]) == (path, row)}
        still = [(t.key, b["gb_type"]) for t in targets if t.key in broke_before
                 for b in t.breaks_after if (b.get("file"), b["line"]) == (path, row)]
        if still:
            left.append({"file": path, "line": row, "code": code, "gb_types": sorted({g for _, g in still}),
                         "targets": sorted({k for k, _ in still})})
    fixes = [{"file": path, "line": row, "code": code} for path, row, code in applied]
    settings = {"torch_version": before.torch_version}
    return FixReport(unsafe, settings, targets, fixes, left, fixed.errors, errors, hidden)
