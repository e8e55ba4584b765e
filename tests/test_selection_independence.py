"""What one rule code reports never depends on which other codes are selected.

`torchlint check fixtures` is run once, whole, through the command (in this process). Each
code's `--select CODE` and `--ignore CODE` must then print exactly the whole run's findings of
that code, and exactly the others' findings, in the same order and with the same text.

A command run per code analyses the whole project again (this repository: close to 300
files, as the fixtures belong to it), because the selection is part of the settings every
step is keyed by: over a hundred runs take minutes. So the whole run is made once by the
command, cold, in a cache folder of the module's own, and the project is solved once more here
from the analyses it left there, with the runner's own steps. Each selection then goes through
the command's own selection path: the selectors read as `check` reads them (`cli._selectors`),
the settings each file gets from a `ConfigResolver` holding them as `CliOverrides`, the file's
findings chosen by `resolve.selected` as `ProjectRun.result` chooses them, and the report
rendered as JSON as `check` renders it. One code also goes through the command end to end,
analysis included; `bench/bench_selection.py` runs the command so for every code.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from torchlint import __version__
from torchlint.cli import _selectors
from torchlint.files.discovery import discover
from torchlint.project.resolve import selected
from torchlint.report import ReportContext, render
from torchlint.report.diagnostic import Diagnostic
from torchlint.rules import all_rules
from torchlint.run.memo import Memo
from torchlint.run.project_run import ProjectRun
from torchlint.run.runner import _cache_for, _context
from torchlint.run.workers import Workers
from torchlint.settings.config import CliOverrides, ConfigResolver

from helpers import run_in_process

REPOSITORY = Path(__file__).resolve().parent.parent
FIXTURES = "fixtures"


def _every_code() -> list[str]:
    """Every code the registry knows, and every code a rule page or rule module names: a
    page or module whose code is missing from the registry would be refused by `--select`."""
    codes = {rule.code for rule in all_rules()}
    codes |= {page.name.split("-")[0] for page in (REPOSITORY / "rules").glob("TL*.md")}
    modules = (REPOSITORY / "torchlint" / "rules").glob("tl[0-9][0-9][0-9]_*.py")
    codes |= {module.name[:5].upper() for module in modules}
    return sorted(codes)


CODES = _every_code()


def _json(diagnostics: list[Diagnostic], resolver: ConfigResolver) -> list[dict]:
    """The JSON report `check --output-format json` prints for these findings."""
    unsafe = bool(resolver.for_path(REPOSITORY).unsafe_fixes)
    context = ReportContext(REPOSITORY, {}, all_rules(), __version__, unsafe_fixes=unsafe)
    return json.loads(render("json", diagnostics, context))


class SolvedFixtures:
    """The fixtures' project analysed and solved as `check fixtures` does it, from the
    analyses the command's own run left in ``cache_dir``; the report of any selection over it."""

    def __init__(self, cache_dir: Path) -> None:
        # As `check_paths` does from the repository's root.
        before = os.getcwd()
        os.chdir(REPOSITORY)
        try:
            resolver = ConfigResolver(CliOverrides(), None, REPOSITORY)
            found = discover([FIXTURES], resolver, force_exclude=False)
            assert not found.errors, found.errors
            self.files = [str(path) for path in found.files]
            named = [(path, resolver.for_path(path)) for path in found.files]
            context, _ = _context([FIXTURES], found.files, resolver, True)
            with Workers(2) as workers:
                memo = Memo(workers, _cache_for(cache_dir, found.files, resolver), {})
                self.project = ProjectRun([*named, *context], memo, keep_sources=False)
        finally:
            os.chdir(before)
        for path in self.files:
            analysed = self.project.analysed[path]
            assert analysed.analysis is not None, analysed.error

    def report(self, select: tuple[str, ...] = (), ignore: tuple[str, ...] = ()) -> list[dict]:
        """`check fixtures [--select S] [--ignore I] --output-format json`, from the solve."""
        overrides = CliOverrides(
            select=_selectors(select, "--select") if select else None,
            ignore=_selectors(ignore, "--ignore"),
        )
        resolver = ConfigResolver(overrides, None, REPOSITORY)
        shown = [
            diagnostic
            for path in self.files
            for diagnostic in selected(self.project.kept(path), path, resolver.for_path(path))
        ]
        shown.sort(key=Diagnostic.sort_key)
        return _json(shown, resolver)


def _check_fixtures(*options: str) -> list[dict]:
    ran = run_in_process("check", FIXTURES, "--output-format", "json", "--exit-zero", *options, cwd=REPOSITORY)
    assert ran.returncode == 0, ran.stderr
    return json.loads(ran.stdout)


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("selection-cache")


@pytest.fixture(scope="module")
def full_run(cache_dir: Path) -> list[dict]:
    """The findings of `torchlint check fixtures`, every rule on, as the command prints them.
    Cold: the cache folder is new and empty. The solve below reads the analyses it keeps
    there instead of making them a second time."""
    assert not any(cache_dir.iterdir())
    return _check_fixtures("--cache-dir", str(cache_dir))


@pytest.fixture(scope="module")
def solved(full_run: list[dict], cache_dir: Path) -> SolvedFixtures:
    return SolvedFixtures(cache_dir)


def test_codes_cover_every_family():
    # The registry's codes, with the TL9xx ones about torchlint itself (syntax error, unused noqa).
    assert {"TL101", "TL201", "TL301", "TL401", "TL501", "TL601", "TL901", "TL902"} <= set(CODES)
    assert [rule.code for rule in all_rules()] == CODES


def test_the_full_run_has_findings_of_many_codes(full_run):
    # Selection independence says little about a run with few findings: the fixtures are
    # written to break the graph with nearly every rule.
    assert len({finding["code"] for finding in full_run}) >= 40
    assert all(Path(finding["filename"]).parent == REPOSITORY / FIXTURES for finding in full_run)


def test_the_solve_reports_what_the_command_prints(full_run, solved):
    # The in-process solve, with no selection, is the command's whole run: the per-code
    # reports below are the command's selection over the same findings.
    assert solved.report() == full_run


@pytest.mark.parametrize("code", CODES)
def test_select_one_code_prints_its_findings_of_the_full_run(code, full_run, solved):
    expected = [finding for finding in full_run if finding["code"] == code]
    assert solved.report(select=(code,)) == expected


@pytest.mark.parametrize("code", CODES)
def test_ignore_one_code_leaves_the_others_as_in_the_full_run(code, full_run, solved):
    expected = [finding for finding in full_run if finding["code"] != code]
    assert solved.report(ignore=(code,)) == expected


def test_the_command_itself_selects_as_the_solve_does(full_run):
    # One code through the command end to end, with no cache: the analysis made under its
    # selection, not the whole run's. TL601, a break in a loop, is made of the other rules'
    # breaks: were rules that are not selected left out of the analysis, it would lose them.
    # (`bench/bench_selection.py` runs the command so for every code.)
    expected = [finding for finding in full_run if finding["code"] == "TL601"]
    assert expected
    assert _check_fixtures("--select", "TL601", "--no-cache") == expected
