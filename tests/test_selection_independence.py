"""What one rule code reports never depends on which other codes are selected.

`torchlint check fixtures` is run once, whole, through the command (in this process), into a
cache folder of the module's own. Each code's `--select CODE` and `--ignore CODE`, through the
command too, must then print exactly the whole run's findings of that code, and exactly the
others' findings, in the same order and with the same text. Selection only filters what is
printed, so those runs reuse the whole run's analyses and its solve from the cache; one more
selection is made with no cache at all, the analysis made under it.
`bench/bench_selection.py` does the same on three libraries of the benchmark.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from torchlint.rules import all_rules

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
    Cold: the cache folder is new and empty; the selections below read it."""
    assert not any(cache_dir.iterdir())
    return _check_fixtures("--cache-dir", str(cache_dir))


def test_codes_cover_every_family():
    # The registry's codes, with the TL9xx ones about torchlint itself (syntax error, unused noqa).
    assert {"TL101", "TL201", "TL301", "TL401", "TL501", "TL601", "TL901", "TL902"} <= set(CODES)
    assert [rule.code for rule in all_rules()] == CODES


def test_the_full_run_has_findings_of_many_codes(full_run):
    # Selection independence says little about a run with few findings: the fixtures are
    # written to break the graph with nearly every rule.
    assert len({finding["code"] for finding in full_run}) >= 40
    assert all(Path(finding["filename"]).parent == REPOSITORY / FIXTURES for finding in full_run)


@pytest.mark.parametrize("code", CODES)
def test_select_one_code_prints_its_findings_of_the_full_run(code, full_run, cache_dir):
    expected = [finding for finding in full_run if finding["code"] == code]
    assert _check_fixtures("--select", code, "--cache-dir", str(cache_dir)) == expected


@pytest.mark.parametrize("code", CODES)
def test_ignore_one_code_leaves_the_others_as_in_the_full_run(code, full_run, cache_dir):
    expected = [finding for finding in full_run if finding["code"] != code]
    assert _check_fixtures("--ignore", code, "--cache-dir", str(cache_dir)) == expected


def test_a_selection_analysed_afresh_prints_its_findings_of_the_full_run(full_run):
    # No cache: the analysis made under the selection, not the whole run's. TL601, a break in
    # a loop, is made of the other rules' breaks: were rules that are not selected left out of
    # the analysis, it would lose them.
    expected = [finding for finding in full_run if finding["code"] == "TL601"]
    assert expected
    assert _check_fixtures("--select", "TL601", "--no-cache") == expected
