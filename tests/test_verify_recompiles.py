"""`torchlint verify --recompiles`: a target's calls counted under real Dynamo on the CPU, the
events they show, and how TL7xx findings are matched with them.

The first part reads Dynamo's guard text, builds events and matches findings on records
written here (the fast tier, no torch); the second runs real targets through workers shared
by the module, as tests/test_verify.py does.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from helpers import dynamo_workers
from torchlint.cli import cli
from torchlint.report.diagnostic import Diagnostic, Location
from torchlint.rules import rule_by_code
from torchlint.verify.compare import compare
from torchlint.verify.recompile_compare import (
    COMPILED_NOTHING,
    DIFFERS_FROM_EAGER,
    RECOMPILES,
    compare_recompiles,
    events_of,
    matches,
    target_event,
)
from torchlint.verify.recompiles import parse_guard
from torchlint.verify.targets import calls_of

REPO = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")

MODEL = "/project/model.py"


# -- Dynamo's guard text --------------------------------------------------------------------


def test_guard_site_from_the_user_stack():
    reason = (
        "0/7: self.calls == 7                                          # self.calls += 1  # oject/model.py:10 in forward"
        " (HINT: torch.compile considers integer attributes of the nn.Module to be static.)\n"
        "User stack trace:\n"
        '  File "/project/model.py", line 10, in forward\n'
        "    self.calls += 1"
    )
    guard = parse_guard(reason, 8, MODEL)
    assert (guard.attempt, guard.guard, guard.file, guard.line) == (8, "self.calls == 7", MODEL, 10)
    assert guard.reason.startswith("self.calls == 7") and "HINT" in guard.reason


def test_guard_site_from_the_shortened_path_of_the_comment():
    # Without a user stack, Dynamo names the file relative to torch's folder, first characters lost.
    reason = "0/3: t == 0.3  # return x * math.exp(t)  # oject/model.py:22 in mexp (_dynamo/utils.py:4231 in run_node)"
    guard = parse_guard(reason, 4, MODEL)
    assert (guard.guard, guard.file, guard.line) == ("t == 0.3", MODEL, 22)
    elsewhere = parse_guard(reason, 4, "/other/net.py")
    assert (elsewhere.file, elsewhere.line) == (None, None)


def test_guard_without_a_user_line():
    guard = parse_guard("0/0: tensor 'x' size mismatch at index 1. expected 1, actual 2", 1, MODEL)
    assert guard.guard == "tensor 'x' size mismatch at index 1. expected 1, actual 2"
    assert (guard.file, guard.line) == (None, None)


def test_library_frames_of_the_user_stack_are_passed_over():
    reason = (
        "0/1: L['n'] == 3  # for _ in range(n):  # oject/model.py:5 in run\n"
        "User stack trace:\n"
        '  File "/project/model.py", line 5, in run\n'
        '  File "/lib/torch/nn/functional.py", line 99, in relu\n'
    )
    guard = parse_guard(reason, 1, MODEL, is_user=lambda filename: not filename.startswith("/lib/"))
    assert (guard.file, guard.line) == (MODEL, 5)


# -- the targets convention ------------------------------------------------------------------


def test_calls_of_a_tuple_a_list_and_a_generator():
    def fn(x, y=0):
        return x + y

    assert list(calls_of((fn, (1,)))) == [(fn, (1,), {})]
    assert list(calls_of([(fn, (1,)), (fn, [2], {"y": 3})])) == [(fn, (1,), {}), (fn, (2,), {"y": 3})]
    state = []

    def loop():
        for step in range(3):
            state.append(step)  # runs between the calls
            yield fn, (step,)

    calls = calls_of(loop())
    assert next(calls) == (fn, (0,), {}) and state == [0]
    assert [args for _, args, _ in calls] == [(1,), (2,)] and state == [0, 1, 2]
    with pytest.raises(TypeError, match="list or iterator"):
        list(calls_of({"fn": fn}))
    with pytest.raises(TypeError):
        list(calls_of([(1, 2)]))


# -- events and matching -------------------------------------------------------------------


def frame(recompiles: int, limit_hit: bool = False, guards=(), file: str = MODEL, first: int = 8, last: int = 12) -> dict:
    return {
        "file": file,
        "function": "forward",
        "first_line": first,
        "last_line": last,
        "compiles": recompiles + 1,
        "recompiles": recompiles,
        "graphs": recompiles + 1,
        "failed": 0,
        "limit_hit": limit_hit,
        "user": True,
        "guards": [
            {"attempt": n + 1, "guard": text, "reason": text, "file": file if line else None, "line": line}
            for n, (text, line) in enumerate(guards)
        ],
    }


def response(*frames: dict, calls: int = 10, outputs_match: bool = True, compiled_nothing: bool = False, executed=None) -> dict:
    return {
        "status": "ok",
        "calls": calls,
        "frames": list(frames),
        "outputs_match": outputs_match,
        "compiled_nothing": compiled_nothing,
        "executed": executed or {},
        "targets_file": "/project/targets.py",
    }


def finding(code: str, row: int, related=(), file: str = MODEL) -> dict:
    return {
        "filename": file,
        "code": code,
        "message": "m",
        "location": {"row": row, "column": 1},
        "end_location": {"row": row, "column": 10},
        "related": [{"code": code, "message": "use", "location": {"row": r, "column": 1}, "end_location": {"row": r, "column": 5}} for r in related],
    }


def test_events_are_frames_past_two_recompiles_and_whole_target_results():
    guards = [(f"self.calls == {n}", 10) for n in range(7)]
    events = events_of("t", response(frame(2), frame(7, True, guards, first=20, last=30), frame(3), outputs_match=False, compiled_nothing=True))
    kinds = [event["kind"] for event in events]
    assert kinds == [RECOMPILES, RECOMPILES, DIFFERS_FROM_EAGER, COMPILED_NOTHING]
    limit = events[0]
    assert (limit["file"], limit["line"], limit["limit_hit"], limit["recompiles"]) == (MODEL, 10, True, 7)
    assert limit["frame"] == {"file": MODEL, "function": "forward", "first_line": 20, "last_line": 30}
    # No guard names a line: the event sits on the frame's first line.
    assert (events[1]["file"], events[1]["line"]) == (MODEL, 8)
    assert events[2]["file"] == "/project/targets.py" and events[2]["frame"] is None


def test_a_finding_matches_at_the_guard_line_a_related_row_or_within_the_frame():
    [event] = events_of("t", response(frame(7, True, [("self.step == 0", 10)], first=8, last=12)))
    assert matches(finding("TL701", 10), event)
    # The cause set from outside the frame, with the use in compiled code as related.
    assert matches(finding("TL701", 40, related=[10]), event)
    assert matches(finding("TL703", 11), event)  # inside the frame's span
    assert not matches(finding("TL701", 40), event)
    assert not matches(finding("TL701", 10, file="/project/other.py"), event)
    # `torchlint check --output-format json` shape and the plain `file`/`line` shape alike.
    assert matches({"file": MODEL, "line": 10, "code": "TL701"}, event)


def test_whole_target_events_match_the_rule_of_their_silent_result_where_it_ran():
    targets = "/project/targets.py"
    differs, nothing = events_of("t", response(outputs_match=False, compiled_nothing=True, executed={targets: [3, 4]}))
    assert matches(finding("TL709", 3, file=targets), differs)
    assert matches(finding("TL710", 9, related=[4], file=targets), differs)
    assert matches(finding("TL711", 4, file=targets), nothing)
    assert not matches(finding("TL711", 3, file=targets), differs)
    assert not matches(finding("TL709", 3, file=targets), nothing)
    assert not matches(finding("TL701", 3, file=targets), differs)
    assert not matches(finding("TL711", 4), nothing)  # another file
    assert not matches(finding("TL711", 7, file=targets), nothing)  # did not run in this target
    # An event that does not say what ran (as `torchlint.testing` builds them) matches by file.
    assert matches(finding("TL711", 7, file=targets), target_event("t", COMPILED_NOTHING, targets))


def test_comparison_judges_findings_in_code_that_ran_and_calls_the_rest_unjudged():
    executed = {MODEL: [8, 9, 10, 11, 40]}
    findings = {
        MODEL: [
            finding("TL701", 10),  # matched
            finding("TL703", 11),  # inside the frame that recompiled: matched
            finding("TL702", 40),  # its row ran, no event: a false positive
            finding("TL704", 60),  # never ran: unjudged
        ]
    }
    results = [("model.py::loop", response(frame(7, True, [("self.step == 0", 10)], first=8, last=12), executed=executed))]
    comparison = compare_recompiles(results, lambda path: findings.get(path, []))
    assert [f["code"] for f in comparison.matched] == ["TL701", "TL703"]
    assert [f["code"] for f in comparison.false_positives] == ["TL702"]
    assert comparison.misses == [] and not comparison.agrees
    [target] = comparison.targets
    assert target.events[0]["matched_by"] == ["TL701", "TL703"]
    assert {f["code"]: f["matched"] for f in target.findings} == {"TL701": True, "TL703": True, "TL702": False}


def test_a_target_of_one_call_judges_only_what_an_event_bears_out():
    findings = {MODEL: [finding("TL701", 10)]}
    one_call = response(frame(0), calls=1, executed={MODEL: [10]})
    comparison = compare_recompiles([("model.py::once", one_call)], lambda path: findings.get(path, []))
    assert comparison.false_positives == [] and comparison.matched == [] and comparison.agrees
    missed = response(calls=1, compiled_nothing=True)
    comparison = compare_recompiles([("targets.py::seq", missed)], lambda path: [])
    assert [event["kind"] for event in comparison.misses] == [COMPILED_NOTHING]


def test_annotations_of_recompile_rules(tmp_path):
    model = tmp_path / "model.py"
    model.write_text("a = 1\nb = 2  # expect: TL701\nc = 3  # expect: TL702, TL101\nd = 4\n")
    real = str(model.resolve())
    findings = {real: [finding("TL701", 2, file=real), finding("TL702", 3, file=real), finding("TL704", 4, file=real)]}
    frames = frame(7, True, [("self.step == 0", 2)], file=real, first=1, last=2)
    results = [("model.py::loop", response(frames, executed={real: [1, 2, 3, 4]}))]

    def expectations(text):
        from torchlint.verify.compare import expectations as read

        return read(text)

    comparison = compare_recompiles(results, lambda path: findings.get(path, []), [model], frozenset(), expectations)
    by_line = {item["line"]: item for item in comparison.annotations}
    # Line 2: expected, reported and borne out. Line 3: reported, ran, no event. Line 4: not annotated.
    assert sorted(by_line) == [3, 4]
    assert by_line[3] == {"file": real, "line": 3, "expected": ["TL702"], "static": ["TL702"], "recompiled": False, "ran": True}
    assert by_line[4]["expected"] == [] and by_line[4]["static"] == ["TL704"]


def _diagnostic(code: str, row: int, path: str) -> Diagnostic:
    return Diagnostic(path, code, code.lower(), "m", Location(row, 1), Location(row, 8))


def test_plain_verify_leaves_recompile_findings_and_annotations_out(tmp_path):
    model = tmp_path / "model.py"
    model.write_text("x = 1  # expect: TL701\nprint(x)  # expect: TL101, TL702\n")
    real = str(model.resolve())
    lint = {real: [_diagnostic("TL701", 1, real), _diagnostic("TL101", 2, real), _diagnostic("TL702", 2, real)]}
    brk = {"file": real, "line": 2, "gb_type": "Failed to trace builtin operator", "gb_id": None, "reason": "", "frame_skipped": False}
    results = [("model.py::t", {"status": "ok", "breaks": [brk], "executed": {real: [1, 2]}})]
    comparison = compare(results, lambda path: lint.get(path, []), [model])
    assert [d.code for d in comparison.matched] == ["TL101"]
    assert comparison.false_positives == [] and comparison.misses == [] and comparison.annotations == []


def test_recompiles_and_fix_cannot_be_combined(tmp_path):
    completed = subprocess.run(
        [sys.executable, "-m", "torchlint", "verify", "--recompiles", "--fix", "model.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, env=ENV,
    )
    assert completed.returncode == 2 and "--recompiles and --fix cannot be combined" in completed.stderr


# -- against Dynamo ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def verify_pool():
    from torchlint.verify.pool import WorkerPool

    with WorkerPool(dynamo_workers(), env=ENV) as pool:
        yield pool


def verify(pool, *arguments: str, cwd: Path):
    before = Path.cwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(cli, ["verify", "-q", *arguments], obj={"verify_pool": pool})
    finally:
        os.chdir(before)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def verify_json(pool, *arguments: str, cwd: Path, expect_exit: int | None = 0) -> dict:
    result = verify(pool, "--recompiles", "--output-format", "json", *arguments, cwd=cwd)
    if expect_exit is not None:
        assert result.exit_code == expect_exit, result.stdout[-3000:] + result.stderr[-3000:]
    return json.loads(result.stdout)


def write(path: Path, source: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


COUNTER = """\
    import torch
    from torch import nn


    class Counter(nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = nn.Linear(4, 4)
            self.calls = 0

        def forward(self, x):
            self.calls += 1  # expect: TL701
            return self.linear(x) * self.calls


    def counted():
        model = Counter()
        for _ in range(10):
            yield model, (torch.randn(2, 4),)


    def torchlint_targets():
        return {"counted": counted()}
"""

# The same model, with Dynamo told at the file's top to take int attributes of modules as symbols.
COUNTER_UNSPECIALIZED = COUNTER.replace(
    "    from torch import nn\n",
    "    from torch import nn\n\n    torch._dynamo.config.allow_unspec_int_on_nn_module = True\n",
).replace("  # expect: TL701", "")

SILENT = """\
    import torch
    from torch import nn


    class Inner(nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = nn.Linear(4, 4)

        def forward(self, x):
            return self.linear(x).relu()


    class Outer(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = Inner()

        def forward(self, x):
            return self.inner(x) + 1


    def hooked():
        model = Outer()
        compiled = torch.compile(model)
        yield compiled, (torch.ones(2, 4),)
        model.inner.register_forward_hook(lambda module, args, out: out * 2)
        for _ in range(3):
            yield compiled, (torch.ones(2, 4),)


    def sequential():
        model = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
        model.compile()
        return [(model, (torch.ones(2, 4),))] * 3


    def torchlint_targets():
        return {"hooked": hooked(), "sequential": sequential()}
"""


@needs_torch
@pytest.mark.dynamo
def test_a_counter_on_the_module_recompiles_up_to_the_limit_and_its_finding_matches(verify_pool, tmp_path):
    model = write(tmp_path / "model.py", COUNTER)
    report = verify_json(verify_pool, "model.py", cwd=tmp_path)
    [target] = report["targets"]
    assert target["calls"] == 10 and target["outputs_match"] is True and target["compiled_nothing"] is False
    [forward] = [frame for frame in target["frames"] if frame["function"] == "forward"]
    real = str(model.resolve())
    assert (forward["file"], forward["first_line"], forward["last_line"]) == (real, 11, 13)
    assert (forward["compiles"], forward["recompiles"], forward["limit_hit"]) == (8, 7, True)
    # One guard per attempt after the first, the one the limit refused included.
    assert [guard["guard"] for guard in forward["guards"]] == [f"self.calls == {n}" for n in range(8)]
    assert {(guard["file"], guard["line"]) for guard in forward["guards"]} == {(real, 12)}
    [event] = target["events"]
    assert (event["kind"], event["file"], event["line"], event["matched_by"]) == (RECOMPILES, real, 12, ["TL701"])
    [found] = target["findings"]
    assert (found["code"], found["location"]["row"], found["matched"]) == ("TL701", 12, True)
    assert matches(found, event)
    assert report["summary"] == {
        "targets": 1, "errors": 0, "events": 1, "findings": 1, "matched": 1, "false_positives": 0,
        "misses": 0, "precision": 1.0, "recall": 1.0,
    }
    assert report["rules"] == {"TL701": {key: value for key, value in report["summary"].items() if key not in ("targets", "errors")}}
    assert report["annotations"] == [] and report["recompiles"] is True
    text = verify(verify_pool, "--recompiles", "model.py", cwd=tmp_path)
    assert text.exit_code == 0, text.stdout
    assert "model.py::counted" in text.stdout and "  7+L " in text.stdout
    assert "model.py:12: forward (model.py:11-13) recompiled 7 times, recompile limit hit" in text.stdout
    assert "[matched by TL701]" in text.stdout
    # Plain verify runs the first call only and leaves the TL701 annotation and finding alone.
    plain = verify(verify_pool, "--output-format", "json", "model.py", cwd=tmp_path)
    assert plain.exit_code == 0, plain.stdout
    plain_report = json.loads(plain.stdout)
    assert plain_report["summary"]["findings"] == 0 and plain_report["annotations"] == []


@needs_torch
@pytest.mark.dynamo
def test_ints_of_modules_taken_as_symbols_recompile_once(verify_pool, tmp_path):
    fixed = write(tmp_path / "fixed" / "model.py", COUNTER_UNSPECIALIZED)
    counter = write(tmp_path / "counter" / "model.py", COUNTER)
    report = verify_json(verify_pool, "model.py", cwd=fixed.parent, expect_exit=None)
    [target] = report["targets"]
    [forward] = [frame for frame in target["frames"] if frame["function"] == "forward"]
    assert forward["recompiles"] <= 1 and not forward["limit_hit"]
    assert target["events"] == [] and target["outputs_match"] is True
    # The setting the file made is put back: the next target in the same worker recompiles again.
    request = {"op": "recompiles", "name": "counted", "device": "cpu", "backend": "eager", "profile": {}}
    with verify_pool.worker() as worker:
        first = worker.request({**request, "path": str(fixed)}, 300)
        second = worker.request({**request, "path": str(counter)}, 300)
    assert first["frames"][0]["recompiles"] <= 1
    assert (second["frames"][0]["recompiles"], second["frames"][0]["limit_hit"]) == (7, True)


@needs_torch
@pytest.mark.dynamo
def test_a_hook_added_after_compile_and_a_compiled_sequential_are_events(verify_pool, tmp_path):
    targets = write(tmp_path / "train.py", SILENT)
    real = str(targets.resolve())
    report = verify_json(verify_pool, "train.py", cwd=tmp_path, expect_exit=None)
    by_name = {target["id"].rpartition("::")[2]: target for target in report["targets"]}
    hooked, sequential = by_name["hooked"], by_name["sequential"]
    assert hooked["outputs_match"] is False and hooked["compiled_nothing"] is False
    assert [event["kind"] for event in hooked["events"]] == [DIFFERS_FROM_EAGER]
    assert sequential["compiled_nothing"] is True and sequential["frames"] == []
    assert [event["kind"] for event in sequential["events"]] == [COMPILED_NOTHING]
    # Findings of the rules for these (written here where a rule is still to come).
    register_row = next(n for n, line in enumerate(targets.read_text().splitlines(), 1) if "register_forward_hook" in line)
    compile_row = next(n for n, line in enumerate(targets.read_text().splitlines(), 1) if "model.compile()" in line)
    [differs] = hooked["events"]
    [nothing] = sequential["events"]
    assert differs["file"] == nothing["file"] == real
    assert matches(finding("TL709", register_row, file=real), differs)
    assert matches(finding("TL711", compile_row, file=real), nothing)
    assert not matches(finding("TL701", compile_row, file=real), nothing)
    assert not matches(finding("TL711", compile_row, file=str(tmp_path / "other.py")), nothing)
    # Where the rules for them exist, their findings match these events, and no other rule's.
    for event, code in ((differs, "TL709"), (nothing, "TL711")):
        assert event["matched_by"] == ([code] if rule_by_code(code) is not None else []), event


@needs_torch
@pytest.mark.dynamo
def test_the_recompile_fixture_agrees_with_dynamo(verify_pool):
    report = verify_json(verify_pool, "fixtures/recompile_counters.py", cwd=REPO)
    summary = report["summary"]
    assert summary["errors"] == 0 and summary["events"] >= 3
    assert summary["misses"] == 0 and summary["false_positives"] == 0 and report["annotations"] == []
    assert report["backend"] == "eager"
    # TL708's hazard shows only under inductor: an eager run leaves its finding unjudged.
    assert "TL708" not in report["rules"]


@pytest.mark.dynamo
def test_inputs_moved_or_copied_keep_dynamos_marks() -> None:
    """`mark_dynamic` and `mark_static` live in the tensor's attributes: moving the inputs to
    the device (here `meta`, which any machine has) and copying them for a run keep them."""
    import torch

    from torchlint.verify.worker import _own_copy, _to_device

    x, y = torch.ones(4, 3), torch.ones(2, 5)
    torch._dynamo.mark_dynamic(x, 0)
    torch._dynamo.mark_static(y, 1)
    _, (moved_x, moved_y), _ = _to_device(lambda a, b: a, (x, y), {}, "meta")
    assert moved_x.device.type == "meta" and moved_x._dynamo_dynamic_indices == {0}
    assert moved_y._dynamo_static_indices == {1}
    (copied_x, copied_y), _ = _own_copy((x, y), {})
    assert copied_x is not x and copied_x._dynamo_dynamic_indices == {0} and copied_y._dynamo_static_indices == {1}
    copied_x._dynamo_dynamic_indices.add(1)
    assert x._dynamo_dynamic_indices == {0}  # a copy's marks are its own
