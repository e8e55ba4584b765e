"""TL508-TL511, TL514-TL517: constructs Dynamo cannot trace, found through value kinds,
class attributes and function structure."""

from __future__ import annotations

import textwrap

import pytest

from helpers import codes, findings

OURS = {"TL508", "TL509", "TL510", "TL511", "TL514", "TL515", "TL516", "TL517"}

MODULE = """
import logging
import torch
import torch.nn as nn

log = logging.getLogger(__name__)
ENCODER = nn.GRU(8, 8, batch_first=True)

def score(t):
    return t.sum()

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.lstm = nn.LSTM(8, 8, batch_first=True)
        self.cell = nn.GRUCell(8, 8)
        self.gain = nn.Parameter(torch.ones(8))
        self.name = "net"

    def forward(self, x: torch.Tensor, ts: list[torch.Tensor], n: int = 2):
        y = self.proj(x)
        {body}
        return y
"""


def in_forward(body: str) -> str:
    return MODULE.replace("{body}", textwrap.indent(textwrap.dedent(body), " " * 8).strip())


def ours(source: str, **settings) -> list[str]:
    return [code for code in codes(source, **settings) if code in OURS]


@pytest.mark.parametrize(
    ("body", "code"),
    [
        # TL508
        ("(g,) = torch.autograd.grad(y.sum(), x, create_graph=True)", "TL508"),
        # TL509
        ("y.sum().backward()", "TL509"),
        ("loss = y.pow(2).mean()\nloss.backward(retain_graph=True)", "TL509"),
        ("torch.autograd.backward([y.sum()])", "TL509"),
        # TL510
        ("w = nn.Parameter(torch.ones(8))", "TL510"),
        ("w = torch.nn.Parameter(torch.ones(8), requires_grad=False)", "TL510"),
        ("self.extra = nn.Parameter(y.new_zeros(8))", "TL510"),
        # TL511
        ("out, _ = self.lstm(y)", "TL511"),
        ("out = self.lstm.forward(y)[0]", "TL511"),
        ("out, _ = ENCODER(y)", "TL511"),
        ("self.lstm.flatten_parameters()", "TL511"),
        ("y = y * self.lstm.hidden_size", "TL511"),
        ("encoder = self.lstm", "TL511"),
        ("encoder = self.lstm\nout, _ = encoder(y)", "TL511"),
        ("ENCODER.flatten_parameters()", "TL511"),
        # TL514
        ("class Local:\n    scale = 2", "TL514"),
        # TL515
        ("rows = sorted(list(y.unbind(0)), key=lambda r: r.norm())", "TL515"),
        ("rows = list(y.unbind(0))\nrows = sorted(rows, key=lambda r: r.sum(), reverse=True)", "TL515"),
        ("rows = list(y.unbind(0))\nrows.sort(key=lambda r: r.sum())", "TL515"),
        ("rows = list(y.sum(-1).unbind(0))\nrows.sort()", "TL515"),
        ("ordered = sorted(ts)", "TL515"),
        ("ordered = sorted(ts, key=score)", "TL515"),
        ("ordered = sorted(ts, key=torch.norm)", "TL515"),
        ("ordered = sorted(y, key=lambda row: row.sum())", "TL515"),
        ("ordered = sorted(y.sum(-1))", "TL515"),
        ("order = sorted(range(4), key=lambda i: y[i].sum())", "TL515"),
        ("ordered = sorted([r * 2 for r in y.unbind(0)], key=lambda t: t.sum())", "TL515"),
        ("best = max(ts, key=lambda t: t.sum())", "TL515"),
        ("best = max(ts, key=lambda t: t.shape[0])", "TL515"),
        ("a, b = y.chunk(2)\nbest = min(a, b, key=lambda t: t.abs().sum())", "TL515"),
        ("i = max(range(4), key=lambda i: y[i].sum())", "TL515"),
        # TL516
        ("s = str(y)", "TL516"),
        ("s = repr(self.gain)", "TL516"),
        ('s = f"{y!r}"', "TL516"),
        ('s = f"{y!s}"', "TL516"),
        ('s = "y=%s" % y', "TL516"),
        ('s = "%.3f %d" % (y.sum(), n)', "TL516"),
        ('s = f"{y}"\nk = len(s)', "TL516"),
        ('k = len(f"{y.sum():.3f}")', "TL516"),
        ('s = "{}".format(y)\nk = len(s)', "TL516"),
        ('s = f"y={y}" + "!"', "TL516"),
        ('s = f"{y}"\nflag = s == "nan"', "TL516"),
        ('s = f"{y}"\nflag = "nan" in s', "TL516"),
        ('s = f"{y}"\nc = s[0]', "TL516"),
        ('s = f"{y}".strip()', "TL516"),
        ('s = ", ".join([f"{y}", self.name])', "TL516"),
        # TL517
        ("b = hash(x) % 4", "TL517"),
        ("h = hash(y)\nb = h * 2", "TL517"),
        ("h = hash(y)\nh %= 3", "TL517"),
        ("b = -hash(y)", "TL517"),
        ("b = abs(hash(y))", "TL517"),
        ("flag = hash(y) < 3", "TL517"),
        ("b = hash((y, n)) % 2", "TL517"),
    ],
)
def test_breaking_construct_is_reported(body: str, code: str):
    assert ours(in_forward(body)) == [code]


@pytest.mark.parametrize(
    "body",
    [
        # TL509: not a tensor, or not a call of backward
        "self.name.backward()",
        "hook = y.register_hook(lambda g: g * 2)",
        # TL511: the cells trace; a submodule that is no RNN
        "h = self.cell(y[:, 0])",
        "z = self.proj(y)",
        "n_layers = n + 1",
        # TL515: keys known while tracing, tensor sort, no key at all
        "ordered = sorted(ts, key=lambda t: t.shape[0])",
        "order = sorted(range(4), key=lambda i: -i)",
        "v, i = y.sort(dim=-1)",
        "v, i = torch.sort(y, dim=-1)",
        "m = max(y.max(), y.min())",
        "m = max(ts)",
        "names = sorted([self.name, 'b'])",
        "k = max([1, 3, 2], key=lambda v: -v)",
        "ordered = sorted(self.items, key=lambda item: item.priority)",
        # TL516: strings of what is known while tracing, templates only passed on
        "s = str(y.shape)",
        "s = f'{y.dtype}'",
        "s = repr(n)",
        'k = len(f"{tuple(y.shape)}")',
        's = f"{y}"',
        'cache = {f"{y}": 1}',
        'names = []\nnames.append(f"{y}")',
        'print(f"y={y}")',
        'print(str(y))',
        'log.info("y %s", repr(y))',
        "s = '%d items' % n",
        # TL517: hashes only compared or used as keys; a dict keyed by the tensor
        "h = hash(y)",
        "same = hash(y) == hash(x)",
        "cache = {hash(y): 1}",
        "cache = {y: 2.0}\ny = y * cache[y]",
        "b = hash(y.shape) % 3",
        "b = hash(self.name) % 3",
    ],
)
def test_look_alike_stays_silent(body: str):
    assert ours(in_forward(body)) == []


def test_print_and_logging_findings_are_not_doubled():
    assert codes(in_forward("print(repr(y))")) == ["TL101"]
    assert codes(in_forward('print(f"{y!r}")')) == ["TL101"]
    assert codes(in_forward('log.warning("%s", str(y))')) == ["TL102"]


def test_unknown_values_stay_silent():
    # Without evidence that these are tensors, nothing is said.
    source = """
    import torch

    @torch.compile
    def step(value, items):
        value.backward()
        s = str(value)
        k = hash(value) % 4
        return sorted(items, key=lambda item: item.score)
    """
    assert ours(source) == []


def test_parameters_in_init_are_fine():
    source = """
    import torch
    from torch import nn

    class Scale(nn.Module):
        def __init__(self, dim: int):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(dim))
            self.bias = nn.Parameter(torch.zeros(dim))

        def forward(self, x):
            return x * self.weight + self.bias
    """
    assert ours(source) == []


def test_lazily_created_parameter_is_reported():
    source = """
    import torch
    from torch import nn

    class LazyScale(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = None

        def forward(self, x):
            if self.weight is None:
                self.weight = nn.Parameter(torch.ones(x.shape[-1]))
            return x * self.weight
    """
    assert findings(source) == [("TL510", 12)]


@pytest.mark.parametrize(
    "source",
    [
        # `from ... import` spellings
        """
        import torch
        from torch.autograd import grad

        @torch.compile
        def penalty(x: torch.Tensor):
            (g,) = grad(x.pow(2).sum(), x)
            return g
        """,
        """
        import torch as T
        from torch.nn import Parameter as P

        @T.compile
        def build(x: T.Tensor):
            return x * P(T.ones(8))
        """,
        """
        import torch
        from torch.nn import LSTM

        class Tagger(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.encoder = LSTM(8, 8)

            def forward(self, x):
                return self.encoder(x)[0]
        """,
        """
        import torch
        import torch.nn as tnn

        class Tagger(tnn.Module):
            def __init__(self):
                super().__init__()
                self.encoder = tnn.modules.rnn.RNN(8, 8)

            def forward(self, x):
                return self.encoder(x)[0]
        """,
    ],
)
def test_aliases_resolve(source: str):
    assert len(ours(source)) == 1


def test_shadowed_names_are_not_the_builtins():
    source = """
    import torch

    def sorted(items, key=None):
        return items

    @torch.compile
    def step(x: torch.Tensor):
        str = lambda v: "tensor"
        s = str(x)
        rows = sorted(list(x.unbind(0)), key=lambda r: r.sum())
        return x
    """
    assert ours(source) == []


def test_code_outside_compiled_regions_is_not_reported():
    source = """
    import torch
    from torch import nn

    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.LSTM(8, 8)
            self.scale = nn.Parameter(torch.ones(8))
            class Config:
                depth = 2
            self.config = Config

        def describe(self, x: torch.Tensor):
            return str(x) + repr(self.scale) + str(hash(x) % 7)

        def forward(self, x):
            return x * self.scale

    def train_step(model, x: torch.Tensor):
        loss = model(x).sum()
        loss.backward()
        (g,) = torch.autograd.grad(loss, x)
        return sorted(list(x.unbind(0)), key=lambda r: r.sum())
    """
    assert ours(source) == []


def test_guarded_code_is_not_reported():
    body = """
    if not torch.compiler.is_compiling():
        self.summary = repr(y)
        ordered = sorted(ts, key=score)
        out, _ = self.lstm(y)
    """
    assert ours(in_forward(body)) == []


def test_class_statement_in_a_compiled_helper():
    source = """
    import torch

    def _pack(hidden: torch.Tensor):
        class Packed:
            pass
        return hidden

    @torch.compile
    def step(x: torch.Tensor):
        return _pack(x * 2)
    """
    assert findings(source) == [("TL514", 5)]


def test_trace_autograd_ops_silences_autograd_grad_and_backward():
    source = """
    import torch
    import torch._dynamo

    torch._dynamo.config.trace_autograd_ops = True

    @torch.compile
    def step(x: torch.Tensor):
        (g,) = torch.autograd.grad(x.pow(2).sum(), x, create_graph=True)
        g.sum().backward()
        torch.autograd.backward([g.sum()])
        return g
    """
    # `torch.autograd.backward` is skipped whatever the setting.
    assert [(code, row) for code, row in findings(source) if code in OURS] == [("TL509", 11)]


def test_messages_name_the_construct_and_the_fullgraph_failure():
    from pathlib import Path

    from torchlint.settings.config import Settings
    from torchlint.project.resolve import lint_text

    source = textwrap.dedent(
        """
        import torch
        from torch import nn

        class Tagger(nn.Module):
            def __init__(self):
                super().__init__()
                self.encoder = nn.GRU(8, 8)

            def forward(self, x: torch.Tensor):
                out, _ = self.encoder(x)
                return out

        compiled = torch.compile(Tagger(), fullgraph=True)

        @torch.compile
        def rank(x: torch.Tensor):
            return sorted(list(x.unbind(0)), key=lambda r: r.norm())
        """
    )
    root = Path("/project")
    found = {d.code: d.message for d in lint_text(source, str(root / "pkg" / "model.py"), Settings(root=root))}
    assert "`self.encoder`, an `nn.GRU`" in found["TL511"]
    assert "`nn.GRUCell`" in found["TL511"]
    assert found["TL511"].endswith("under `fullgraph=True` the compile fails")
    assert found["TL515"].startswith("`sorted()` with a key that gives a tensor")
    assert "fullgraph" not in found["TL515"]


def test_a_string_for_a_reordered_print_is_reported():
    # Dynamo moves the print after the graph, but still has to build its argument.
    source = in_forward("print(repr(y))")
    assert codes(source, reorderable_logging_functions=("print",)) == ["TL516"]
    assert codes(in_forward('print(f"{y}")'), reorderable_logging_functions=("print",)) == []


def test_trace_autograd_ops_in_the_config():
    body = "(g,) = torch.autograd.grad(y.sum(), x)\ny.sum().backward()\ntorch.autograd.backward(y.sum())"
    assert ours(in_forward(body)) == ["TL508", "TL509", "TL509"]
    assert ours(in_forward(body), trace_autograd_ops=True) == ["TL509"]


def test_an_unused_f_string_of_a_tensor_breaks_before_torch_2_13() -> None:
    from helpers import codes as _codes

    source = """
import torch

class Net(torch.nn.Module):
    def forward(self, x: torch.Tensor):
        self.summary = f"output {x}"
        return x
"""
    assert _codes(source, target_torch="2.13") == []
    assert _codes(source, target_torch="2.11") == ["TL516"]


def test_a_returned_f_string_of_a_tensor_traces_on_older_torch_too() -> None:
    from helpers import codes as _codes

    source = """
import torch

class Net(torch.nn.Module):
    def forward(self, x: torch.Tensor):
        assert x.shape[0] > 0, f"empty batch {x}"
        return x, f"output {x}"
"""
    assert _codes(source, target_torch="2.11") == []
