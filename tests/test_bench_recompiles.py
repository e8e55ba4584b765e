"""The recompile benchmark's case list, without torch: every listed case is a target of its case
file, the halves are the ones fixed before any rule was scored, and both halves hold every hazard
kind, cases that must not be flagged among them."""

from __future__ import annotations

import ast
import json
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from _corpus import HALVES
from _recompile_corpus import (
    CASES,
    HAZARDS,
    NO_HAZARD,
    OWN,
    CaseError,
    declared_targets,
    halves_digest,
    load_cases,
)

# The case-to-half map as fixed when the cases were first listed. A case added later gets its
# half in the same change that updates this digest; a case's half never changes.
FIXED_HALVES = "7a9898c5b28f9f6b62d27d09ae6b763e78d8a17f2301ec4af9bb3cba12c5aa20"


@pytest.fixture(scope="module")
def cases():
    return load_cases()


def test_there_are_enough_cases_about_half_of_them_on_library_code(cases):
    assert len(cases) >= 80
    libraries = Counter(case.library for case in cases)
    assert libraries[OWN] <= 0.6 * len(cases)
    assert len(set(libraries) - {OWN}) >= 8


def test_every_listed_case_is_a_target_of_its_file_and_every_target_is_listed(cases):
    listed = {case.id for case in cases}
    declared = set()
    for file in sorted(CASES.glob("*.py")):
        declared.update(f"{file.name}::{name}" for name in declared_targets(file))
    assert listed == declared


def test_the_halves_are_the_ones_fixed_before_any_rule_was_scored(cases):
    assert halves_digest(cases) == FIXED_HALVES


def test_both_halves_hold_every_hazard_kind_and_negatives(cases):
    kinds = {half: Counter(case.hazard for case in cases if case.half == half) for half in HALVES}
    for half in HALVES:
        assert set(kinds[half]) == set(HAZARDS), half
        assert kinds[half][NO_HAZARD] >= 0.3 * sum(kinds[half].values()), half


def test_every_case_says_in_one_line_what_changes_between_calls(cases):
    for file in sorted({case.file for case in cases}):
        tree = ast.parse(file.read_text(encoding="utf-8"))
        functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
        for name in declared_targets(file):
            # The target's value is a call of the function of the same name: the case itself.
            docstring = ast.get_docstring(functions[name])
            assert docstring and "\n" not in docstring.strip(), f"{file.name}::{name}"


def test_a_case_file_names_no_library_it_would_shadow():
    # verify puts the case folder first on sys.path.
    for file in CASES.glob("*.py"):
        assert file.stem.endswith("_cases"), file


def test_a_case_list_with_an_unknown_hazard_or_half_is_refused(tmp_path):
    manifest = tmp_path / "cases.toml"
    manifest.write_text(textwrap.dedent("""
        [[case]]
        id = "a_cases.py::x"
        library = "own"
        hazard = "TL799"
        half = "development"
    """))
    with pytest.raises(CaseError, match="hazard"):
        load_cases(manifest)
    manifest.write_text(manifest.read_text().replace("TL799", "none").replace("development", "test"))
    with pytest.raises(CaseError, match="half"):
        load_cases(manifest)


def test_the_digest_notices_a_half_that_moved(cases):
    moved = [case if index else type(case)(case.id, case.library, case.hazard,
                                            HALVES[1 - HALVES.index(case.half)], case.note)
             for index, case in enumerate(cases)]
    assert halves_digest(moved) != halves_digest(cases)


def test_the_recorded_truth_holds_every_case_under_eager_and_a_stated_subset_under_inductor(cases):
    truth = json.loads((REPO / "bench" / "recompile_truth.json").read_text(encoding="utf-8"))
    eager = truth["backends"]["eager"]["cases"]
    assert set(eager) == {case.id for case in cases}
    assert all(record["status"] == "ok" and record["calls"] >= 10 for record in eager.values())
    if "inductor" in truth["backends"]:
        assert set(truth["backends"]["inductor"]["cases"]) <= set(eager)


def test_the_recorded_events_are_verifys_reading_of_the_recorded_frames(cases):
    # An event: a frame with more than two recompiles or the limit hit, outputs that differ from
    # eager, nothing compiled; the scorer recomputes them from the frames the same way.
    truth = json.loads((REPO / "bench" / "recompile_truth.json").read_text(encoding="utf-8"))
    for backend, run in truth["backends"].items():
        for name, record in run["cases"].items():
            frames = sum(f["recompiles"] > 2 or f["limit_hit"] for f in record["frames"])
            whole = (record["outputs_match"] is False) + bool(record["compiled_nothing"])
            assert len(record["events"]) == frames + whole, (backend, name)
