"""The real-code benchmark's corpus and scoring, without Dynamo: the manifest keeps its promises,
and findings of a real torchlint run are scored against a recorded truth as the README says."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from _corpus import HALVES, CorpusError, declared_compiles, load_corpus, missing_definitions  # noqa: E402
from _score import files_to_lint, score, static_findings  # noqa: E402
from _truth import Truth, load, lines_of, save, stale_for  # noqa: E402
import _corpus  # noqa: E402
import _truth  # noqa: E402

# The libraries the rules were first written against.
FIRST_THREE = {"transformers", "diffusers", "x_transformers"}


def test_the_corpus_is_as_wide_as_promised():
    libraries = load_corpus()
    assert len({l.name for l in libraries} - FIRST_THREE) >= 15
    assert {l.half for l in libraries} == set(HALVES)
    assert all(l.half == "development" for l in libraries if l.name in FIRST_THREE)
    compiles = {name: functions for l in libraries for name, functions in declared_compiles(l).items()}
    assert len(compiles) >= 150
    # What users really compile: not only a module's forward.
    elsewhere = [name for name, functions in compiles.items() if not all(f.endswith(".forward") for f in functions)]
    assert len(elsewhere) >= 0.4 * len(compiles)
    for library in libraries:
        text = library.targets_file.read_text(encoding="utf-8")
        assert "def torchlint_targets(" in text, library.targets_file
        # A file named like the library would shadow it when verify imports the targets.
        assert library.targets_file.stem not in library.packages


def test_every_library_pins_everything(tmp_path):
    manifest = tmp_path / "corpus.toml"
    manifest.write_text(textwrap.dedent("""
        [[library]]
        name = "transformers"
        requirement = "transformers>=4"
        domain = "d"
        style = "s"
        half = "development"
    """))
    with pytest.raises(CorpusError, match="pinned"):
        load_corpus(manifest)


def test_a_half_must_be_named(tmp_path):
    manifest = tmp_path / "corpus.toml"
    manifest.write_text('[[library]]\nname = "transformers"\nrequirement = "transformers==1"\ndomain = "d"\nstyle = "s"\nhalf = "test"\n')
    with pytest.raises(CorpusError, match="half must be one of"):
        load_corpus(manifest)


TOY = '''\
import torch


class Net(torch.nn.Module):
    def forward(self, x):
        print("shape", x.shape)
        y = x * 2
        if x.sum() > 0:
            y = y + 1
        if x.dim() > 5:
            print("deep")
        return helper(y)


def helper(y):
    z = y.item()
    return y + z
'''


@pytest.fixture
def toy_site(tmp_path):
    site = tmp_path / "site"
    (site / "toy").mkdir(parents=True)
    (site / "toy" / "__init__.py").write_text("")
    (site / "toy" / "net.py").write_text(TOY)
    return site


def _record(breaks, executed):
    return {
        "library": "toy", "status": "ok", "error": None, "seconds": 0.1, "fullgraph": {"ok": False},
        "outputs_match": True, "breaks_outside": 0,
        "breaks": [{"file": "toy/net.py", "line": line, "gb_type": gb_type, "gb_id": None,
                    "frame_skipped": False, "reason": ""} for line, gb_type in breaks],
        "executed": {"toy/net.py": executed}, "spans": {},
    }


def test_scoring_counts_sites_once_and_keeps_unrun_findings_apart(toy_site):
    toy = _corpus.Library("toy", "toy==1", ("toy",), (), "d", "s", "held-out", toy_site / "unused.py")
    # Two targets break at the same print; only one took the branch; neither printed "deep".
    records = {
        "a": _record([(6, "Unsupported function call"), (8, "Data-dependent branching")], "5-10,12,15-17"),
        "b": _record([(6, "Unsupported function call")], "5-8,10,12,15-17"),
    }
    files = files_to_lint(records.values(), toy_site)
    assert files == [str(toy_site / "toy" / "__init__.py"), str(toy_site / "toy" / "net.py")]
    findings = static_findings(toy_site, files, ("toy.net.Net.forward",))
    codes = {(d.location.row, d.code) for d in findings[str(toy_site / "toy" / "net.py")]}
    assert {(6, "TL101"), (8, "TL201"), (16, "TL301"), (11, "TL101")} <= codes

    scores = score(records, findings, [toy], toy_site)
    # Sites: the print (in two targets, counted once) and the branch; `.item()` did not break.
    assert [(s.file, s.line) for s in scores.sites] == [("toy/net.py", 6), ("toy/net.py", 8)]
    counts = scores.counts()
    assert (counts.sites, counts.covered, counts.misses) == (2, 2, 0)
    exercised = {(f.diagnostic.location.row, f.diagnostic.code): f.matched for f in scores.exercised}
    assert exercised[(6, "TL101")] and exercised[(8, "TL201")]
    assert exercised[(16, "TL301")] is False  # ran, reported, no break: a false positive
    assert counts.false_positives == sum(not hit for hit in exercised.values()) >= 1
    assert (11, "TL101") in {(f.diagnostic.location.row, f.diagnostic.code) for f in scores.unexercised}
    assert counts.precision == counts.matched / counts.findings
    per_target = {t.name: t.counts for t in scores.targets}
    assert (per_target["a"].sites, per_target["b"].sites) == (2, 1)


def test_a_break_nothing_reported_is_a_miss_with_the_rule_that_should_have_fired(toy_site):
    toy = _corpus.Library("toy", "toy==1", ("toy",), (), "d", "s", "development", toy_site / "unused.py")
    records = {"a": _record([(7, "Data-dependent branching")], "5-10")}
    files = files_to_lint(records.values(), toy_site)
    scores = score(records, static_findings(toy_site, files, ("toy.net.Net.forward",)), [toy], toy_site)
    miss = next(s for s in scores.sites if s.line == 7)
    assert not miss.matched_by and miss.rule == "TL201" and miss.family == "TL2"
    assert scores.counts({"toy"}, "TL2").misses == 1


def test_declared_entry_points_are_checked_against_the_code(toy_site):
    assert missing_definitions("toy.net.Net.forward", toy_site) is None
    assert missing_definitions("toy.net.helper", toy_site) is None
    assert "no definition of Net.backward" in missing_definitions("toy.net.Net.backward", toy_site)
    assert "no module" in missing_definitions("elsewhere.mod.f", toy_site)


def test_the_truth_survives_a_round_trip_and_knows_when_it_is_stale(tmp_path):
    assert lines_of(_truth._ranges([1, 2, 3, 7, 9, 10])) == {1, 2, 3, 7, 9, 10}
    assert _truth._ranges([4, 1, 2]) == "1-2,4"
    library = _corpus.Library("toy", "toy==1", ("toy",), ("dep==2",), "d", "s", "development", tmp_path / "t.py")
    truth = Truth({"format": _truth.FORMAT, "torch": "2.13.0", "requirements": {"toy": ["dep==2", "toy==1"]}},
                  {"a": _record([(6, "x")], "5-6")})
    path = tmp_path / "truth.json"
    save(truth, path)
    again = load(path)
    assert again.targets == truth.targets and again.header == truth.header
    assert stale_for(again, [library]) == []
    newer = _corpus.Library("toy", "toy==2", ("toy",), ("dep==2",), "d", "s", "development", tmp_path / "t.py")
    assert stale_for(again, [newer])
    path.write_text("{not json")
    with pytest.raises(_truth.TruthError, match="--refresh"):
        load(path)
