"""The recompile rules found at call sites and in setup code: TL705 (containers whose structure
changes), TL706 (strings and ids), TL707 (settings that force specialization), TL709 (hooks added
once the compiled model has run) and TL711 (`.compile()` of a torch.nn module).

The first part lints real sources (no torch): the spellings each rule follows, what it leaves
alone, where its findings point, and what its fixes write. The second runs real Dynamo (CPU) in
`torchlint verify --recompiles` processes: the fixture's findings agree with what ran, and cases
that look like the hazards but cost at most one recompile give no finding and no event.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import libcst as cst
import pytest

from torchlint.fix.fixing import fix_text
from torchlint.project.resolve import lint_text
from torchlint.report.diagnostic import Diagnostic
from torchlint.rules._setup_code import ScopeOrder, changing_names
from torchlint.settings.config import Settings

REPO = Path(__file__).resolve().parent.parent
ROOT = Path("/project")
SETTINGS = Settings(root=ROOT, target_torch="2.13")
PATH = str(ROOT / "pkg" / "train.py")


def lint(source: str) -> list[Diagnostic]:
    return lint_text(textwrap.dedent(source).lstrip("\n"), PATH, SETTINGS)


def rows(source: str, code: str) -> list[int]:
    return [d.location.row for d in lint(source) if d.code == code]


def fixed(source: str) -> str:
    text = textwrap.dedent(source).lstrip("\n")
    result = fix_text(text, lambda current: lint_text(current, PATH, SETTINGS), True, PATH)
    assert result.problem is None, result.problem
    return result.text


# -- where statements run -------------------------------------------------------------------


def test_scope_order_places_nodes_with_their_loops_and_what_the_loops_rebind():
    module = cst.parse_module(
        textwrap.dedent(
            """
            xs = []
            for step in range(3):
                total = step * 2
                if step:
                    f(xs)
                while total:
                    total -= 1
            g(xs)
            """
        )
    )
    calls: dict[str, cst.Call] = {}

    class Calls(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if isinstance(node.func, cst.Name):
                calls[node.func.value] = node

    module.visit(Calls())
    order = ScopeOrder(module)
    placed = order.place([calls["f"], calls["g"]])
    inner, outer = placed[id(calls["f"])], placed[id(calls["g"])]
    loop = inner.loops[0]
    assert isinstance(loop, cst.For) and outer.loops == ()
    assert inner.order < outer.order and order.in_loop(inner, loop) and not order.in_loop(outer, loop)
    assert order.rebound(loop) == {"step", "total"}
    assert changing_names(order, inner, calls["f"]) == {"step", "total"}
    assert changing_names(order, outer, calls["g"]) == set()


# -- TL705 changing-container-structure -------------------------------------------------------


def test_tl705_a_list_grown_in_the_loop_by_each_method_that_grows_it():
    for grow in ("losses.append(loss)", "losses.extend([loss])", "losses.insert(0, loss)"):
        source = f"""
            import torch


            @torch.compile
            def total(losses):
                return torch.stack(losses).sum()


            def train(batches):
                losses = []
                for batch in batches:
                    loss = batch.mean()
                    {grow}
                    total(losses)
            """
        assert rows(source, "TL705") == [14], grow


def test_tl705_points_at_the_compiled_function_it_feeds():
    [finding] = [d for d in lint(
        """
        import torch


        def mix(xs):
            return torch.stack(xs).mean(0)


        mixed = torch.compile(mix)


        def run(batches):
            xs = list(batches)
            return [mixed(xs[: i + 1]) for i in range(len(xs))]
        """
    ) if d.code == "TL705"]
    assert finding.location.row == 13
    assert [(related.location.row, related.code) for related in finding.related] == [(4, "TL705")]


def test_tl705_leaves_alone_what_keeps_its_structure():
    source = """
        import torch


        @torch.compile
        def total(losses):
            return torch.stack(losses).sum()


        @torch.compile
        def head(x, n):
            return x[:, :n].sum()


        @torch.compile
        def terms_total(terms):
            return sum(value.sum() for value in terms.values())


        def train(batches, x):
            for step, batch in enumerate(batches):
                losses = [batch.mean()]
                losses.append(batch.std())
                total(losses)
                head(x[:, : step + 1], step)
                terms_total({"ce": batch, "aux": batch * step})
        """
    assert rows(source, "TL705") == []


def test_tl705_only_where_the_compiled_function_reads_the_container():
    source = """
        import torch


        def log_sizes(xs):
            return None


        @torch.compile
        def ignored(x, xs):
            return x * 2


        @torch.compile
        def handed_on(x, xs):
            log_sizes(xs)
            return x * 2


        @torch.compile
        def measured(x, xs):
            return x * len(xs)


        def train(x, batches):
            xs = []
            for batch in batches:
                xs.append(batch)
                ignored(x, xs)
                handed_on(x, xs)
                measured(x, xs)
        """
    assert rows(source, "TL705") == [30]


def test_tl705_dict_keys_from_the_loop_directly_or_through_a_name():
    source = """
        import torch


        @torch.compile
        def weighted(terms):
            return sum(value.mean() for value in terms.values())


        def train(batches):
            for step, batch in enumerate(batches):
                weighted({f"step{step}": batch})
                terms = {name: batch for name in NAMES[: step + 1]}
                weighted(terms)
        """
    assert rows(source, "TL705") == [11, 13]


def test_tl705_star_args_flagged_from_four_counts():
    three = """
        import torch


        @torch.compile
        def concat(*chunks):
            return torch.cat(chunks).sum()


        def run(a, b, c, d):
            return concat(a), concat(a, b), concat(a, b, c), concat(c, b, a)
        """
    assert rows(three, "TL705") == []
    four = three.replace("concat(c, b, a)", "concat(a, b, c, d)")
    findings = [d for d in lint(four) if d.code == "TL705"]
    assert len(findings) == 3 and {d.location.row for d in findings} == {10}
    assert "with 4 positional arguments, elsewhere in this file with 1, 2, 3" in findings[-1].message


# -- TL706 string-or-id-in-compiled-code ------------------------------------------------------


def test_tl706_every_way_to_build_a_string_from_the_loop():
    for built in ('f"layer{i}"', "str(i)", '"layer%d" % i', '"layer{}".format(i)', '"layer" + str(i)'):
        source = f"""
            import torch


            @torch.compile
            def scale(x, name):
                return x * len(name)


            def run(x):
                for i in range(10):
                    scale(x, {built})
                    name = {built}
                    scale(x, name=name)
            """
        assert rows(source, "TL706") == [11, 13], built


def test_tl706_related_location_is_the_first_read():
    [finding] = [d for d in lint(
        """
        import torch


        @torch.compile
        def scale(x, tag):
            y = x * 2
            if tag.endswith("0"):
                return y
            return y + 1


        def run(x):
            return [scale(x, f"t{i}") for i in range(10)]
        """
    ) if d.code == "TL706"]
    assert [related.location.row for related in finding.related] == [7]


def test_tl706_leaves_alone_strings_that_do_not_change_or_are_not_read():
    source = """
        import torch


        def log(x, tag):
            return x


        @torch.compile
        def reduced(x, mode, tag):
            if isinstance(tag, str):
                log(x, tag)
            return x.mean() if mode == "mean" else x.sum()


        def run(x):
            for step in range(10):
                reduced(x, "mean", f"step{step}")
                for mode in ("mean", "sum"):
                    reduced(x, mode, "eval")
        """
    assert rows(source, "TL706") == []


def test_tl706_id_of_a_tensor_input_only():
    source = """
        import torch

        SEEN = {}


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = torch.nn.Linear(8, 8)

            def forward(self, x: torch.Tensor, config):
                y = self.lin(x)
                SEEN[id(self)] = id(self.lin)
                SEEN[id(config)] = id(y)
                SEEN["x"] = id(x)
                return y
        """
    assert rows(source, "TL706") == [15]


# -- TL707 specializing-dynamo-config ---------------------------------------------------------


def test_tl707_every_spelling_of_the_config():
    source = """
        import torch
        import torch._dynamo as dynamo
        from torch._dynamo import config as dynamo_config


        class Settings:
            dynamo.config.specialize_float = True


        def main():
            torch._dynamo.config.automatic_dynamic_shapes = False
            dynamo_config.specialize_int: bool = True
            dynamo_config.specialize_int = False
            dynamo_config.cache_size_limit = 64


        @dynamo_config.patch({"specialize_float": True})
        def evaluate():
            with torch._dynamo.config.patch("specialize_int", True):
                pass
            with torch._dynamo.config.patch(automatic_dynamic_shapes=True, specialize_int=True):
                pass
        """
    assert rows(source, "TL707") == [7, 11, 12, 17, 19, 21]


def test_tl707_a_patch_that_makes_room_for_the_graphs_is_deliberate():
    source = """
        import torch


        def solve(program, x):
            with torch._dynamo.config.patch(specialize_int=True, recompile_limit=64):
                return program(x)
        """
    assert rows(source, "TL707") == []
    assert rows(source.replace(", recompile_limit=64", ""), "TL707") == [5]


def test_tl707_mark_static_on_a_dimension_only():
    source = """
        import torch
        from torch._dynamo import mark_static


        def prepare(x, model):
            mark_static(x, 1)
            torch._dynamo.mark_static(x, index=0)
            torch._dynamo.mark_static(model)
        """
    assert rows(source, "TL707") == [6, 7]


def test_tl707_automatic_dynamic_off_is_left_alone_where_sizes_stay_dynamic():
    dynamic_everywhere = """
        import torch

        torch._dynamo.config.automatic_dynamic_shapes = False


        @torch.compile(dynamic=True)
        def pooled(x):
            return x.mean(1)


        step = torch.compile(pooled, dynamic=True)
        """
    assert rows(dynamic_everywhere, "TL707") == []
    one_static_site = dynamic_everywhere.replace("torch.compile(pooled, dynamic=True)", "torch.compile(pooled)")
    assert rows(one_static_site, "TL707") == [3]


def test_tl707_marking_dimensions_dynamic_counts_where_the_setting_is():
    source = """
        import torch


        def marked(batches, step):
            torch._dynamo.config.automatic_dynamic_shapes = False
            for x in batches:
                torch._dynamo.mark_dynamic(x, 1)
                step(x)


        def unmarked(batches, step):
            torch._dynamo.config.automatic_dynamic_shapes = False
            for x in batches:
                step(x)
        """
    assert rows(source, "TL707") == [12]


def test_tl707_points_at_the_functions_the_file_compiles():
    [finding] = [d for d in lint(
        """
        import torch

        torch._dynamo.config.specialize_int = True


        @torch.compile
        def shifted(x, n):
            return x + n


        def helper(x):
            return x
        """
    ) if d.code == "TL707"]
    assert [related.location.row for related in finding.related] == [7]


def test_tl707_unsafe_fix_deletes_the_assignments():
    assert fixed(
        """
        import torch

        torch._dynamo.config.specialize_int = True
        torch._dynamo.config.cache_size_limit = 64


        def main():
            torch._dynamo.config.automatic_dynamic_shapes = False


        def configure(fast):
            if fast:
                torch._dynamo.config.specialize_float = True
            with torch._dynamo.config.patch(specialize_int=True):
                pass
        """
    ) == textwrap.dedent(
        """
        import torch

        torch._dynamo.config.cache_size_limit = 64


        def main():
            pass


        def configure(fast):
            if fast:
                pass
            with torch._dynamo.config.patch(specialize_int=True):
                pass
        """
    ).lstrip("\n")


# -- TL709 hook-added-after-compile -----------------------------------------------------------


def test_tl709_every_way_to_reach_a_submodule():
    source = """
        import torch


        def hook(module, inputs, output):
            return output


        def train(model, batches):
            compiled = torch.compile(model)
            for batch in batches:
                compiled(batch)
            model.encoder.layers[0].register_forward_hook(hook)
            compiled.decoder.register_forward_pre_hook(hook)
            model.get_submodule("head").register_full_backward_hook(hook)
            for child in model.children():
                child.register_full_backward_pre_hook(hook)
            torch.nn.modules.module.register_module_forward_hook(hook)
        """
    assert rows(source, "TL709") == [12, 13, 14, 16, 17]


def test_tl709_leaves_alone_what_torch_honours():
    source = """
        import torch
        from torch import nn


        def hook(module, inputs, output):
            return output


        def before_the_first_call(model, x):
            compiled = torch.compile(model)
            model.encoder.register_forward_hook(hook)
            return compiled(x)


        def on_the_compiled_module_itself(model, x):
            compiled = torch.compile(model)
            compiled(x)
            model.register_forward_hook(hook)
            compiled.register_forward_hook(hook)
            return compiled(x)


        def one_more_where_hooks_were_there(model, x):
            model.encoder.register_forward_hook(hook)
            compiled = torch.compile(model)
            compiled(x)
            model.encoder.register_forward_hook(hook)
            return compiled(x)


        def a_function_compiled(step, model, x):
            compiled_step = torch.compile(step)
            compiled_step(model, x)
            model.encoder.register_forward_hook(hook)
        """
    assert rows(source, "TL709") == []


def test_tl709_handing_the_compiled_model_on_counts_as_running_it():
    source = """
        import torch


        def hook(module, inputs, output):
            return output


        def calls(model, x):
            compiled = torch.compile(model)
            yield compiled, (x,)
            model.encoder.register_forward_hook(hook)
            yield compiled, (x,)


        def in_place(model, x, fit):
            model.compile()
            fit(model, x)
            model.encoder.register_forward_hook(hook)
        """
    findings = [d for d in lint(source) if d.code == "TL709"]
    assert [d.location.row for d in findings] == [11, 18]
    assert [[related.location.row for related in d.related] for d in findings] == [[9], [16]]


# -- TL711 compile-of-torch-nn-module ---------------------------------------------------------


def test_tl711_follows_names_chains_and_attributes():
    source = """
        import torch
        import torch.nn as tnn


        class Model(tnn.Module):
            def __init__(self):
                super().__init__()
                self.norm = tnn.LayerNorm(8)
                self.norm.compile()


        def build(device):
            stack = tnn.Sequential(tnn.Linear(8, 8), tnn.GELU()).to(device).eval()
            stack.compile()
            heads = tnn.ModuleList([tnn.Linear(8, 2), tnn.Linear(8, 3)])
            heads.compile()
            tnn.Conv2d(3, 8, 3).compile(mode="max-autotune")
            return stack, heads
        """
    assert rows(source, "TL711") == [9, 14, 16, 17]


def test_tl711_leaves_alone_modules_that_run_user_code():
    source = """
        import torch
        from torch import nn


        def my_gelu(x):
            return x * torch.sigmoid(1.702 * x)


        class Block(nn.Module):
            def forward(self, x):
                return x


        def build(layers, block):
            nn.Sequential(Block(), nn.Linear(8, 8)).compile()
            nn.Sequential(*layers).compile()
            nn.Sequential(block).compile()
            nn.TransformerEncoderLayer(8, 2, activation=my_gelu).compile()
            nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2), num_layers=2).compile()
            Block().compile()
            torch.compile(nn.Linear(8, 8))
        """
    assert rows(source, "TL711") == [19]


def test_tl711_unsafe_fix_wraps_the_module():
    assert fixed(
        """
        import torch
        from torch import nn


        def build():
            model = nn.Sequential(nn.Linear(8, 8), nn.ReLU())
            model.compile(mode="reduce-overhead", fullgraph=True)
            heads = nn.ModuleList([nn.Linear(8, 2)])
            heads.compile()
            return model, heads
        """
    ) == textwrap.dedent(
        """
        import torch
        from torch import nn


        def build():
            model = nn.Sequential(nn.Linear(8, 8), nn.ReLU())
            model = torch.compile(model, mode="reduce-overhead", fullgraph=True)
            heads = nn.ModuleList([nn.Linear(8, 2)])
            heads.compile()
            return model, heads
        """
    ).lstrip("\n")


def test_tl711_no_fix_without_torch_by_that_name():
    source = """
        import torch as th


        def build():
            model = th.nn.Linear(8, 8)
            model.compile()
            return model
        """
    [finding] = [d for d in lint(source) if d.code == "TL711"]
    assert finding.fix is None


# -- against Dynamo ---------------------------------------------------------------------------

needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}


def verify_recompiles(*arguments: str, cwd: Path = REPO) -> dict:
    """`torchlint verify --recompiles` in a process of its own (torch stays out of this one)."""
    completed = subprocess.run(
        [sys.executable, "-m", "torchlint", "verify", "-q", "--recompiles", "--output-format", "json", *arguments],
        cwd=cwd, capture_output=True, text=True, timeout=600, env=ENV,
    )
    assert completed.returncode in (0, 1), completed.stderr[-3000:]
    return json.loads(completed.stdout)


@needs_torch
@pytest.mark.dynamo
def test_the_setup_fixture_agrees_with_dynamo():
    report = verify_recompiles("fixtures/recompile_setup.py")
    summary = report["summary"]
    assert summary["errors"] == 0 and summary["events"] >= 9
    assert summary["misses"] == 0 and summary["false_positives"] == 0 and report["annotations"] == []
    for code in ("TL705", "TL706", "TL707", "TL709", "TL711"):
        assert report["rules"][code]["matched"] >= 1, report["rules"]


# Each looks like one of the hazards and costs at most one recompile, or gives outputs equal to
# eager: no rule may flag it, and no event may show.
LOOKALIKES = '''
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(8, 8)

    def forward(self, x):
        return torch.relu(self.encoder(x))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x):
        return self.proj(x).relu()


def double(module, inputs, output):
    return output * 2


@torch.compile
def total(losses):
    return losses.sum()


@torch.compile
def scale(x, tag):
    if isinstance(tag, str):
        return x * 2
    return x


def stacked(steps):
    losses = []
    for step in steps:
        losses.append(step.mean())
        yield total, (torch.stack(losses),)


def tags_not_read(x):
    for step in range(10):
        yield scale, (x, f"step{step}")


def hook_on_the_compiled_module(x):
    model = Net()
    compiled = torch.compile(model)
    yield compiled, (x,)
    model.register_forward_hook(double)
    for _ in range(9):
        yield compiled, (x,)


def hook_before_the_first_call(x):
    model = Net()
    compiled = torch.compile(model)
    model.encoder.register_forward_hook(double)
    for _ in range(10):
        yield compiled, (x,)


def user_block_in_a_sequential(x):
    model = nn.Sequential(Block(), nn.ReLU())
    model.compile()
    for _ in range(10):
        yield model, (x,)


def wrapped_sequential(x):
    model = torch.compile(nn.Sequential(nn.Linear(8, 8), nn.ReLU()))
    for _ in range(10):
        yield model, (x,)


def torchlint_targets():
    torch.manual_seed(0)
    x = torch.randn(4, 8)
    steps = [torch.randn(4, 8) for _ in range(10)]
    return {
        "stacked": stacked(steps),
        "tags_not_read": tags_not_read(x),
        "hook_on_the_compiled_module": hook_on_the_compiled_module(x),
        "hook_before_the_first_call": hook_before_the_first_call(x),
        "user_block_in_a_sequential": user_block_in_a_sequential(x),
        "wrapped_sequential": wrapped_sequential(x),
    }
'''


@needs_torch
@pytest.mark.dynamo
def test_lookalikes_give_no_finding_and_no_event(tmp_path: Path):
    (tmp_path / "lookalikes.py").write_text(LOOKALIKES, encoding="utf-8")
    assert [d.code for d in lint_text(LOOKALIKES, str(tmp_path / "lookalikes.py"), Settings(root=tmp_path))] == []
    report = verify_recompiles("lookalikes.py", cwd=tmp_path)
    assert report["summary"]["errors"] == 0 and report["summary"]["targets"] == 6
    assert report["summary"]["events"] == 0, [target["events"] for target in report["targets"]]


TARGETS_FILE = """
import torch

NAMES = ("a", "b", "c", "d", "e", "f", "g", "h", "i", "j")


def tagged(x, tag):
    return x * 2 if tag.endswith("7") else x


def total(*parts):
    return torch.cat(parts).sum()


def weighted(losses):
    return sum(losses.values())


def string_per_call():
    for step in range(10):
        yield tagged, (torch.randn(4), f"step{step}")


def one_string():
    for _ in range(10):
        yield tagged, (torch.randn(4), "train")


def keys_per_call():
    for count in range(1, 11):
        yield weighted, ({name: torch.rand(()) for name in NAMES[:count]},)


def torchlint_targets():
    return {"string": string_per_call(), "fixed": one_string(), "keys": keys_per_call()}
"""


def _row_of(source: str, text: str) -> int:
    return next(number for number, line in enumerate(textwrap.dedent(source).lstrip("\n").splitlines(), 1) if text in line)


def test_a_verify_targets_generator_yields_calls_of_what_verify_compiles():
    assert rows(TARGETS_FILE, "TL706") == [_row_of(TARGETS_FILE, 'f"step{step}"')]
    assert rows(TARGETS_FILE, "TL705") == [_row_of(TARGETS_FILE, "NAMES[:count]")]


def test_yields_count_as_calls_only_in_a_file_that_declares_targets():
    source = TARGETS_FILE.replace("def torchlint_targets():", "def other_entry():")
    assert rows(source, "TL706") == rows(source, "TL705") == []
