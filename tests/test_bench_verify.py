"""A slice of the real-code benchmark, end to end, so the script cannot rot: one small library
installed from PyPI into a temporary cache, two of its targets run through Dynamo, scored, then
scored again from the recorded truth alone."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LIBRARY = "torchcrf"
TARGETS = ["crf_llh_mask_sum", "crf_decode_mask"]

needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")


def bench(tmp_path: Path, *options: str, only: list[str] = TARGETS) -> subprocess.CompletedProcess:
    command = [
        sys.executable, "bench/bench_verify.py", "--library", LIBRARY, *(f"--only={name}" for name in only),
        "--cache-dir", str(tmp_path / "cache"), "--truth", str(tmp_path / "truth.json"),
        "--json", str(tmp_path / "figures.json"), "--jobs", "1", *options,
    ]
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=900)


@needs_torch
@pytest.mark.dynamo
def test_one_library_is_installed_recorded_scored_and_rescored_from_the_truth(tmp_path):
    first = bench(tmp_path, "--refresh")
    assert first.returncode == 0, first.stderr[-3000:]
    figures = json.loads((tmp_path / "figures.json").read_text())
    truth = json.loads((tmp_path / "truth.json").read_text())

    # The truth: versions, and per target the breaks in the library's code and what ran.
    assert truth["torch"].startswith("2.") and truth["requirements"] == {LIBRARY: ["pytorch-crf==0.7.2"]}
    assert set(truth["targets"]) == set(TARGETS)
    for record in truth["targets"].values():
        assert record["status"] == "ok", record["error"]
        assert any(file.startswith("torchcrf/") for file in record["executed"])
    decode = truth["targets"]["crf_decode_mask"]
    assert decode["breaks"] and all(b["file"].startswith("torchcrf/") and b["gb_type"] for b in decode["breaks"])

    # The figures: per half, per library, per target, and every miss and false positive listed.
    half = figures["halves"]["development"]
    assert half == figures["halves"]["all"] and half["targets"] == 2
    sites = {(b["file"], b["line"]) for r in truth["targets"].values() for b in r["breaks"]}
    assert half["break_sites"] == len(sites) >= 1
    assert half["covered"] + half["misses"] == half["break_sites"]
    assert len(figures["misses"]) == half["misses"] and len(figures["false_positives"]) == half["false_positives"]
    assert set(figures["targets"]) == set(TARGETS)
    assert f"development  {LIBRARY}" in first.stdout and "misses (Dynamo broke" in first.stdout

    # Re-scored from the recorded truth, without Dynamo: the same figures.
    again = bench(tmp_path, "--reuse")
    assert again.returncode == 0, again.stderr[-3000:]
    assert "[1/" not in again.stderr  # no target ran
    refigured = json.loads((tmp_path / "figures.json").read_text())
    assert refigured["halves"] == figures["halves"] and refigured["misses"] == figures["misses"]

    # A target the truth never recorded cannot be scored from it.
    missing = bench(tmp_path, "--reuse", only=["crf_decode_batch_first"])
    assert missing.returncode != 0 and "--refresh" in missing.stderr
