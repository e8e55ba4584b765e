"""Every graph-break rule is tied to Dynamo's graph-break registry, and says so everywhere.

A TL1xx-TL6xx rule names the `GBnnnn` ids it predicts and their gb_types. The ids must exist
in `torch/_dynamo/graph_break_registry.json` of the installed torch, each claimed gb_type must
be the type of one of the rule's ids (and each id must have one of its types claimed), and a
gb_type belongs to one rule unless it is one of Dynamo's generic types listed below.
`torchlint rules --output-format json` must show the same ties, and `torchlint verify` must
count a missed break against the right family.

The test process never imports torch: the registry is found through the import system's
spec of the package.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections import defaultdict
from functools import lru_cache
from pathlib import Path

import pytest

from torchlint.rules import all_rules
from torchlint.verify.compare import family_of, rule_for_gb_type

REPO = Path(__file__).resolve().parent.parent
GRAPH_BREAK_FAMILIES = ("TL1", "TL2", "TL3", "TL4", "TL5", "TL6")
RULES = [rule for rule in all_rules() if rule.code[:3] in GRAPH_BREAK_FAMILIES]

# Dynamo's generic gb_types, which breaks of different causes share, so several rules
# claim them. Each maps to the family whose misses `torchlint verify` counts it under (the
# family of `rule_for_gb_type`), and why it is shared. Every other gb_type has one rule.
SHARED_GB_TYPES = {
    # Any builtin Dynamo cannot call: print, input, breakpoint, open, and str() or
    # format() of a tensor.
    "Failed to trace builtin operator": "TL1",
    # A method of an object Dynamo does not model: sys.stdout, open files, in-memory
    # buffers, storages, collective work handles, ctypes functions, locks.
    "Unsupported method call": "TL1",
    # Dynamo's skip list: warnings, pdb, time, random, copy, torch.save/load, manual_seed.
    "Attempted to call function marked as skipped": "TL1",
    # Any context manager Dynamo does not model: open() and threading.Lock().
    "Unsupported context manager": "TL1",
    # Branching on a tensor: `if`, `while`, a ternary, and an assert whose message formats it;
    # torch 2.11 also reports a list comparison holding a tensor (TL206) so.
    "Data-dependent branching": "TL2",
    # Any op that needs a tensor's value: torch.equal, torch._assert, math on a tensor,
    # tolist() of integers, a tensor used as a Python index.
    "Data dependent operator": "TL2",
    # Every way from a tensor to a Python number goes through Tensor.item(): .item(),
    # int()/float()/bool(), math on a tensor, a tensor used as a Python index.
    "Unsupported Tensor.item() call with capture_scalar_outputs=False": "TL3",
    # Dynamo evaluated something to an exception: arithmetic on data_ptr() or hash() of a
    # tensor, the length of a string formatted from one.
    "Observed exception": "TL3",
    # Every op whose output size depends on the data.
    "Dynamic shape operator": "TL4",
    # A torch function whose result is no tensor: torch.is_inference, deepcopy of a tensor,
    # str() of a tensor through torch's own formatting.
    "torch.* op returned non-Tensor": "TL5",
    # A class statement run while tracing: one in compiled code, or one that a library
    # runs in its constructor (ctypes.CDLL defines its function-pointer class there).
    "Invalid call to __build_class__": "TL5",
}

# Ties that do not hold yet, each with the fix; strict, so a fix turns them into failures
# that ask for the entry to go.
KNOWN_GAPS: dict[str, str] = {}


def _registry_path() -> Path | None:
    spec = importlib.util.find_spec("torch")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / "_dynamo" / "graph_break_registry.json"
    return path if path.is_file() else None


needs_registry = pytest.mark.skipif(
    _registry_path() is None, reason="torch (and its graph-break registry) is not installed"
)


@lru_cache(maxsize=1)
def registry_types() -> dict[str, frozenset[str]]:
    """GB id -> the gb_types the registry gives it (an id may list several entries)."""
    entries = json.loads(_registry_path().read_text(encoding="utf-8"))
    return {gb_id: frozenset(entry["Gb_type"] for entry in found) for gb_id, found in entries.items()}


def claimants() -> dict[str, list[str]]:
    found: dict[str, list[str]] = defaultdict(list)
    for rule in RULES:
        for gb_type in rule.gb_types:
            found[gb_type].append(rule.code)
    return found


def _code(rule) -> str:
    return rule.code


def test_there_are_graph_break_rules():
    assert len(RULES) >= 20


@pytest.mark.parametrize("rule", RULES, ids=_code)
def test_rule_names_gb_ids_and_types(rule):
    # A TL6xx rule about the cost of other breaks may have no id of its own (base.py,
    # `wraps_breaks`): its findings carry the ids of the breaks it wraps.
    if getattr(rule, "wraps_breaks", False) and not rule.gb_ids:
        assert not rule.gb_types
        return
    assert rule.gb_ids, f"{rule.code} names no GB id"
    assert rule.gb_types, f"{rule.code} names no gb_type"
    assert len(set(rule.gb_ids)) == len(rule.gb_ids) and len(set(rule.gb_types)) == len(rule.gb_types)


@needs_registry
@pytest.mark.parametrize("rule", RULES, ids=_code)
def test_gb_ids_exist_in_the_registry(rule):
    missing = [gb_id for gb_id in rule.gb_ids if gb_id not in registry_types()]
    assert not missing, f"{rule.code}: not in {_registry_path()}: {missing}"


@needs_registry
@pytest.mark.parametrize("rule", RULES, ids=_code)
def test_gb_ids_and_types_agree(rule):
    types = registry_types()
    of_ids = {gb_type for gb_id in rule.gb_ids for gb_type in types.get(gb_id, ())}
    stray_types = [gb_type for gb_type in rule.gb_types if gb_type not in of_ids]
    assert not stray_types, f"{rule.code}: gb_types that none of its ids has: {stray_types}"
    stray_ids = [gb_id for gb_id in rule.gb_ids if gb_id in types and not types[gb_id] & set(rule.gb_types)]
    assert not stray_ids, f"{rule.code}: ids none of whose gb_types it claims: {stray_ids}"


def test_a_gb_type_has_one_rule_unless_shared():
    shared = {gb_type: codes for gb_type, codes in claimants().items() if len(codes) > 1}
    unlisted = {gb_type: codes for gb_type, codes in shared.items() if gb_type not in SHARED_GB_TYPES}
    assert not unlisted, f"gb_types claimed by several rules, not in SHARED_GB_TYPES: {unlisted}"


def test_shared_gb_types_are_still_shared():
    # The list stays minimal: an entry goes once a single rule claims its type.
    counts = {gb_type: len(codes) for gb_type, codes in claimants().items()}
    stale = [gb_type for gb_type in SHARED_GB_TYPES if counts.get(gb_type, 0) < 2]
    assert not stale, f"SHARED_GB_TYPES entries no longer shared: {stale}"


def _family_cases():
    for gb_type in sorted(claimants()):
        marks = ()
        if gb_type in KNOWN_GAPS:
            marks = pytest.mark.xfail(strict=True, reason=KNOWN_GAPS[gb_type])
        yield pytest.param(gb_type, marks=marks, id=gb_type)


@pytest.mark.parametrize("gb_type", list(_family_cases()))
def test_rule_for_gb_type_maps_to_the_right_family(gb_type):
    codes = claimants()[gb_type]
    found = rule_for_gb_type(gb_type)
    assert found in codes, f"rule_for_gb_type({gb_type!r}) is {found}, which does not claim it"
    if len(codes) == 1:
        assert found == codes[0]
    elif gb_type in SHARED_GB_TYPES:
        assert family_of(found) == SHARED_GB_TYPES[gb_type], (
            f"rule_for_gb_type({gb_type!r}) is {found}; misses should count against {SHARED_GB_TYPES[gb_type]}"
        )


def test_cli_lists_every_rule_with_its_ties():
    completed = subprocess.run(
        [sys.executable, "-m", "torchlint", "rules", "--output-format", "json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    listed = {entry["code"]: entry for entry in json.loads(completed.stdout)}
    assert set(listed) == {rule.code for rule in all_rules()}
    for rule in all_rules():
        entry = listed[rule.code]
        shown = (entry["name"], tuple(entry["gb_ids"]), tuple(entry["gb_types"]))
        assert shown == (rule.name, rule.gb_ids, rule.gb_types), rule.code
