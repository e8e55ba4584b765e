"""The fixes of the TL3xx and TL4xx rules (torchlint/rules/value_fixes.py): where each is
offered, the exact text it writes, its safety, and where it is not offered. Static: the
page probes (tests/test_rule_pages.py) run the pages' Examples fixed through Dynamo."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import textwrap
from pathlib import Path

import pytest

from torchlint.settings.config import Settings
from torchlint.report.diagnostic import Applicability
from torchlint.project.resolve import lint_text
from torchlint.fix.fixing import apply_fixes, fix_text

from helpers import write
from test_fix import torchlint

SAFE, UNSAFE, DISPLAY_ONLY = Applicability.SAFE, Applicability.UNSAFE, Applicability.DISPLAY_ONLY

HEADER = """\
import torch
import torch.nn.functional as F


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(8, 8)
        self.router = torch.nn.Linear(8, 4)
        self.temperatures = [0.5, 1.0, 2.0]
        self.blocks = torch.nn.ModuleList([torch.nn.Linear(8, 8)])
        self.register_buffer("group_size", torch.tensor([1, 3, 2, 2]))

    def forward(self, x: torch.Tensor, table: torch.Tensor):
        y = self.proj(x)
"""


def _model(body: str) -> str:
    return HEADER + textwrap.indent(textwrap.dedent(body), " " * 8) + "        return y\n"


def _lint(text: str):
    return lint_text(text, "model.py", Settings(root=Path(".")))


def _fixed(text: str, unsafe: bool) -> str:
    result = fix_text(text, _lint, unsafe, "model.py")
    assert result.problem is None, result.problem
    return result.text


# (code, body before, body after, safety): `--fix` (with `--unsafe-fixes` for an unsafe fix)
# writes the body after; a second pass has nothing to do.
FIXED = [
    # TL301: the value stays a 0-d tensor where every use is tensor arithmetic
    ("TL301", "s = y.abs().amax().item()\ny = y / (s + 1e-6)\n", "s = y.abs().amax().detach()\ny = y / (s + 1e-6)\n", UNSAFE),
    ("TL301", "y = y * y.sum().item()\n", "y = y * y.sum().detach()\n", UNSAFE),
    ("TL301", "y = y - 2 * -y.mean().item()\n", "y = y - 2 * -y.mean().detach()\n", UNSAFE),
    ("TL301", "y = y * (\n    y.sum().item()  # kept\n)\n", "y = y * (\n    y.sum().detach()  # kept\n)\n", UNSAFE),
    # TL303: int() and float() likewise, truncating as int() does where the dtype is not known
    ("TL303", "n = int(y.argmax())\ny = y * n\n", "n = y.argmax()\ny = y * n\n", UNSAFE),
    ("TL303", "y = y * int(y.sum())\n", "y = y * y.sum().long()\n", UNSAFE),
    ("TL303", "y = y / float(y.norm())\n", "y = y / y.norm().detach()\n", UNSAFE),
    ("TL303", "y = y / float(y.argmax())\n", "y = y / y.argmax().float()\n", UNSAFE),
    ("TL303", "y = y / float(y.sum() + 1)\n", "y = y / (y.sum() + 1).detach()\n", UNSAFE),
    # a boolean tensor computes as numbers do once it is a float or a long
    ("TL303", "y = y * (1 - float(y.sum() > 0))\n", "y = y * (1 - (y.sum() > 0).float())\n", UNSAFE),
    ("TL303", "y = y * (1 - int((y > 0).any()))\n", "y = y * (1 - (y > 0).any().long())\n", UNSAFE),
    # TL305: a 0-d index as a one-element one; a list of numbers as a tensor
    ("TL305", "i = y.argmax()\ny = table[i] * y\n", "i = y.argmax()\ny = table[i.reshape(1)].squeeze(0) * y\n", SAFE),
    ("TL305", "y = y + table[y.argmax() + 1]\n", "y = y + table[(y.argmax() + 1).reshape(1)].squeeze(0)\n", SAFE),
    (
        "TL305",
        "level = y.mean().round().long().clamp(0, 2)\ny = y / self.temperatures[level]\n",
        "level = y.mean().round().long().clamp(0, 2)\n"
        "y = y / torch.tensor(self.temperatures, device=level.device)[level.reshape(1)].squeeze(0)\n",
        UNSAFE,
    ),
    # TL401: the rows of nonzero() counted, where only the count is used, in tensor arithmetic
    ("TL401", "y = y / y.nonzero().shape[0]\n", "y = y / y.count_nonzero()\n", UNSAFE),
    ("TL401", "n = torch.nonzero(y > 0).size(0)\ny = y * n\n", "n = torch.count_nonzero(y > 0)\ny = y * n\n", UNSAFE),
    ("TL401", "y = y + len(torch.argwhere(y)) * y\n", "y = y + torch.count_nonzero(y) * y\n", UNSAFE),
    (
        "TL401",
        "active = torch.nonzero(y)\ny = y.sum() / active.shape[0] + y / (1 + len(active))\n",
        "active = torch.count_nonzero(y)\ny = y.sum() / active + y / (1 + active)\n",
        UNSAFE,
    ),
    # TL406: the total written in the code; a buffer's total is unsafe
    (
        "TL406",
        "y = torch.repeat_interleave(y, torch.tensor([1, 3, 2, 2]), dim=0)\n",
        "y = torch.repeat_interleave(y, torch.tensor([1, 3, 2, 2]), dim=0, output_size=8)\n",
        SAFE,
    ),
    (
        "TL406",
        "r = torch.full((4,), 2)\ny = y.repeat_interleave(r, dim=0)\n",
        "r = torch.full((4,), 2)\ny = y.repeat_interleave(r, dim=0, output_size=8)\n",
        SAFE,
    ),
    (
        "TL406",
        "y = torch.repeat_interleave(\n    y,\n    self.group_size,\n    dim=0,  # rows\n)\n",
        "y = torch.repeat_interleave(\n    y,\n    self.group_size,\n    dim=0, output_size=8,  # rows\n)\n",
        UNSAFE,
    ),
    # TL407: the class count the code shows
    (
        "TL407",
        "expert = self.router(x).argmax(dim=-1)\ny = F.one_hot(expert).float()\n",
        "expert = self.router(x).argmax(dim=-1)\ny = F.one_hot(expert, num_classes=self.router.out_features).float()\n",
        UNSAFE,
    ),
    ("TL407", "y = F.one_hot(y.long() % 5, -1)\n", "y = F.one_hot(y.long() % 5, num_classes=5)\n", UNSAFE),
    # TL403, TL405: a masked sum kept in shape
    ("TL403", "y = y[y > 0].sum()\n", "y = torch.where(y > 0, y, 0).sum()\n", SAFE),
    ("TL403", "ok = ~torch.isnan(y)\ny = y[ok].sum()\n", "ok = ~torch.isnan(y)\ny = torch.where(ok, y, 0).sum()\n", SAFE),
    ("TL405", "y = torch.masked_select(y, x > 0).sum()\n", "y = torch.where(x > 0, y, 0).sum()\n", SAFE),
    ("TL405", "y = y.masked_select(x > 0).sum()\n", "y = torch.where(x > 0, y, 0).sum()\n", SAFE),
]


@pytest.mark.parametrize(("code", "before", "after", "safety"), FIXED, ids=[f"{c[0]}-{n}" for n, c in enumerate(FIXED)])
def test_the_fix_writes_this(code: str, before: str, after: str, safety: Applicability) -> None:
    found = [d for d in _lint(_model(before)) if d.code == code]
    assert [d.fix.applicability for d in found if d.fix] == [safety]
    assert _fixed(_model(before), unsafe=True) == _model(after)
    # A safe fix needs no `--unsafe-fixes`; an unsafe one is not applied without it.
    assert _fixed(_model(before), unsafe=False) == (_model(after) if safety is SAFE else _model(before))
    assert not [d for d in _lint(_model(after)) if d.fix_applies(True)]


# (code, body): the finding stays, with no fix `--fix` applies.
NOT_FIXED = [
    # the number goes where a tensor would change what the code does
    ("TL301", "s = y.sum().item()\ny = y * s\nprint(s)\n"),
    ("TL301", "s = y.sum().item()\ny = y * s\nz = [s]\n"),
    ("TL301", "for _ in range(y.sum().long().item()):\n    y = y * 2\n"),
    ("TL301", "y = y * max(y.sum().item(), 1.0)\n"),
    ("TL301", "sums = [r.sum().item() for r in y]\n"),
    ("TL301", "s = y.sum().item()\ns = s * 2\ny = y * s\n"),
    # a kept tensor would share storage with one changed in place
    ("TL301", "s = y.sum(dim=0)[0].item()\ny.add_(1)\ny = y * s\n"),
    # a boolean `.item()` kept a tensor would not compute as a bool does (`1 - flag` fails)
    ("TL301", "flag = (y > 0).any().item()\ny = y * (1 - flag)\n"),
    ("TL301", "y = y * (y.sum() > 0).item()\n"),
    ("TL303", "n = int(y.argmax())\ny += 1\ny = y * n\n"),
    ("TL303", "y = y / max(float(y.norm()), 1e-6)\n"),
    ("TL303", "flag = bool(y.sum() > 0)\ny = y * flag\n"),
    # the indices used, or the count where Python needs an int
    ("TL401", "idx = y.nonzero()\ny = y * idx.shape[0] + idx.sum()\n"),
    ("TL401", "n = y.nonzero().shape[0]\ny = y[:n]\n"),
    ("TL401", "y = y * torch.nonzero(y, as_tuple=False).shape[0]\n"),
    ("TL401", "y = y * y.nonzero().shape[1]\n"),
    ("TL401", "active = y.nonzero()\nactive = y.argwhere()\ny = y / active.shape[0]\n"),
    # a write, a boolean 0-d index, an index of two parts
    ("TL305", "table[y.argmax()] = 0\n"),
    ("TL305", "y = table[(y > 0).max()] * y\n"),
    # a list of modules, an index computed where it stands
    ("TL305", "level = y.mean().long()\ny = self.blocks[level](y)\n"),
    ("TL305", "y = y / self.temperatures[y.mean().long()]\n"),
]


@pytest.mark.parametrize(("code", "body"), NOT_FIXED, ids=[f"{c[0]}-{n}" for n, c in enumerate(NOT_FIXED)])
def test_no_fix_where_the_rewrite_would_change_the_code(code: str, body: str) -> None:
    found = [d for d in _lint(_model(body)) if d.code == code]
    assert found and not [d for d in found if d.fix_applies(True)]


# (code, body, the line the skeleton shows): display-only, never applied.
SKELETONS = [
    (
        "TL406",
        "y = torch.repeat_interleave(y, (y > 0).sum(dim=-1), dim=0)\n",
        "y = torch.repeat_interleave(y, (y > 0).sum(dim=-1), dim=0, output_size=...)",
    ),
    # one repeat is broadcast along the dim: the total is not the sum
    ("TL406", "y = y.repeat_interleave(torch.tensor([3]))\n", "y = y.repeat_interleave(torch.tensor([3]), output_size=...)"),
    ("TL407", "y = F.one_hot(x.argmax(dim=-1)).float()\n", "y = F.one_hot(x.argmax(dim=-1), num_classes=...).float()"),
    ("TL407", "y = F.one_hot(table.long(), num_classes=-1)\n", "y = F.one_hot(table.long(), num_classes=...)"),
    # the mask is not shown to have the values' shape; a mean; a selection kept
    ("TL403", "ok = ~torch.isnan(x)\ny = y[ok].sum()\n", "y = torch.where(ok, y, 0).sum()"),
    ("TL403", "y = y[y > 0].mean()\n", "y = torch.where(y > 0, y, 0).sum() / (y > 0).sum()"),
    ("TL405", "y = torch.masked_select(y, x > 0)\n", "y = torch.where(x > 0, y, 0)"),
]


@pytest.mark.parametrize(("code", "body", "shown"), SKELETONS, ids=[f"{c[0]}-{n}" for n, c in enumerate(SKELETONS)])
def test_a_skeleton_is_shown_but_never_applied(code: str, body: str, shown: str) -> None:
    [finding] = [d for d in _lint(_model(body)) if d.code == code]
    assert finding.fix is not None and finding.fix.applicability is DISPLAY_ONLY
    assert _fixed(_model(body), unsafe=True) == _model(body)
    # What the skeleton reads like, were it applied.
    forced = dataclasses.replace(finding, fix=dataclasses.replace(finding.fix, applicability=SAFE))
    rewritten, _ = apply_fixes(_model(body), [forced], unsafe=False)
    assert shown in rewritten.splitlines()[finding.location.row - 1]


def test_full_output_and_json_show_a_display_only_fix(project: Path) -> None:
    write(project, {"model.py": _model("y = torch.repeat_interleave(y, (y > 0).sum(dim=-1), dim=0)\n")})
    full = torchlint("model.py", "--output-format", "full", cwd=project).stdout
    assert (
        "   = fix (display-only): Pass `output_size=`, the sum of the repeats (fill in the `...`)\n"
        "   |         y = torch.repeat_interleave(y, (y > 0).sum(dim=-1), dim=0, output_size=...)\n"
    ) in full
    [finding] = json.loads(torchlint("model.py", "--output-format", "json", cwd=project).stdout)
    assert finding["fix"]["applicability"] == "display-only"
    assert finding["fix"]["edits"][0]["content"] == "dim=0, output_size=..."
    # Never applied, with or without --unsafe-fixes.
    before = (project / "model.py").read_text()
    assert torchlint("model.py", "--fix", "--unsafe-fixes", cwd=project).returncode == 1
    assert (project / "model.py").read_text() == before


# Runs in a fresh interpreter (the test process never imports torch): each FIXED case, run
# eager as written, then fixed and compiled with `fullgraph=True`, must agree.
_UNDER_DYNAMO = """
import importlib.util, json, sys
import torch
from test_value_fixes import FIXED, _fixed, _model
from torchlint.verify.breaks import fullgraph_compiles

def load(source, name):
    path = f"{sys.argv[1]}/{name}.py"
    open(path, "w").write(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

problems = []
for number, (code, before, _, _) in enumerate(FIXED):
    torch._dynamo.reset()
    original, fixed = load(_model(before), f"before_{number}"), load(_fixed(_model(before), True), f"after_{number}")
    torch.manual_seed(0)
    eager = original.Net()
    torch.manual_seed(0)
    compiled = fixed.Net()
    torch.manual_seed(1)
    args = (torch.randn(4, 8), torch.randn(40))
    ok, why, output = fullgraph_compiles(compiled, args)
    if not ok:
        problems.append(f"{number} {code}: {why}")
        continue
    try:
        torch.testing.assert_close(output, eager(*args))
    except AssertionError as error:
        problems.append(f"{number} {code}: {error}")
print(json.dumps(problems))
"""


@pytest.mark.dynamo
def test_each_fixed_case_compiles_whole_and_computes_what_it_did(tmp_path: Path) -> None:
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed")
    import os
    import subprocess
    import sys

    tests = Path(__file__).resolve().parent
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tests), str(tests.parent), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run(
        [sys.executable, "-c", _UNDER_DYNAMO, str(tmp_path)],
        capture_output=True, text=True, env=environment, timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert json.loads(result.stdout.splitlines()[-1]) == []
