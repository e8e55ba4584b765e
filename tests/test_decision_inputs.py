"""Which calls' results a file's decisions read: real libcst parses."""

from __future__ import annotations

import textwrap

import libcst as cst

from torchlint.analysis.decision_inputs import decision_callees


def _callees(source: str) -> frozenset[str]:
    return decision_callees([cst.parse_module(textwrap.dedent(source))])


def test_results_followed_back_through_assignments_reach_a_test():
    source = """
        def step(x):
            d = rms(x)
            ratio = d / norms.scale(x)
            ok = ratio < 1
            if ok:
                y = layer(x)
                return project(y)
            return x
    """
    assert _callees(source) == {"rms", "norms.scale"}


def test_indices_conversions_and_boolean_operators_are_decisions():
    source = """
        def step(x, table):
            i = pick(x)
            n = int(count(x))
            keep = ready(x) and other(x)
            return table[i], n, keep, not flag(x), 0 < low(x) < 1
    """
    assert _callees(source) == {"pick", "count", "ready", "flag", "low"}  # `and` hands `other(x)` back


def test_a_result_only_computed_with_reaches_no_decision():
    source = """
        def step(x):
            h = encode(x)
            return h * weight(x).sum()
    """
    assert _callees(source) == frozenset()


def test_shapes_identity_and_type_questions_read_no_value():
    source = """
        def step(x):
            h = encode(x)
            m = mask_of(x)
            if h.shape[0] > 1 and m is not None and isinstance(gate(x), int):
                return h
            return x
    """
    assert _callees(source) == frozenset()


def test_a_length_reads_a_size_not_a_value():
    source = """
        def step(x):
            n = len(split(x))
            if n > 2:
                return x
            return count(x) if len(pieces(x)) else x
    """
    assert _callees(source) == frozenset()
