"""`--fix` on generated model files: whatever the nesting, indentation, line endings and
spellings, the result compiles, keeps every line of the original, keeps its line endings,
and a further pass has nothing left to apply."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from torchlint.settings.config import Settings
from torchlint.project.resolve import lint_text
from torchlint.fix.fixing import MAX_PASSES, fix_text

GUARD = "if not torch.compiler.is_compiling():"

# One statement each, `{i}` standing for the indentation of its continuation lines.
STATEMENTS = (
    'print("shape", x.shape)',
    'print(\n{i}    "multi",\n{i}    x,\n{i})',
    'print("kept")  # a trailing comment',
    'logger.info("x %s", x.shape)',
    'warnings.warn("deprecated")',
    'sys.stdout.write("step\\n")',
    "breakpoint()",
    "y = x * 2",
    "print(x); z = x",
    "value = print(x)",
    'print("""a string\nover two lines""")',
    "torch._dynamo.graph_break()",
    "z = x  # noqa: TL101",
    "print(x)  # noqa: TL101, TL301",
)
BLOCKS = ("for _ in range(2):", "if x.dim() > 1:", "with torch.no_grad():", "while False:")


def _body(rng: random.Random, indent: str, unit: str, depth: int) -> list[str]:
    lines = []
    for _ in range(rng.randint(1, 4)):
        if depth < 2 and rng.random() < 0.3:
            block = rng.choice(BLOCKS + ("try:",))
            lines.append(indent + block)
            lines += _body(rng, indent + unit, unit, depth + 1)
            if block == "try:":
                lines += [indent + "except Exception:", indent + unit + "pass"]
        elif rng.random() < 0.1:
            lines.append(indent + "if x.shape[0] > 1: print(x)")
        else:
            lines.append(indent + rng.choice(STATEMENTS).replace("{i}", indent))
    return lines


def generated_model(seed: int) -> str:
    rng = random.Random(seed)
    unit = rng.choice(("    ", "  ", "\t"))
    imports_torch = rng.random() < 0.7
    header = [
        "import logging",
        "import sys",
        "import warnings",
        "import torch" if imports_torch else "from torch import nn",
        "",
        "logger = logging.getLogger(__name__)",
        "",
        "",
        f"class Net({'torch.nn' if imports_torch else 'nn'}.Module):",
        unit + "def forward(self, x):",
    ]
    lines = header + _body(rng, unit * 2, unit, 0) + [unit * 2 + "return x", ""]
    return "\n".join(lines).replace("\n", rng.choice(("\n", "\r\n")))


def _fix_all(text: str) -> tuple[str, int]:
    result = fix_text(text, lambda current: lint_text(current, "model.py", Settings(root=Path("."))), True, "model.py")
    # A pass dropped for not compiling would hide the broken rewrite: none may be.
    assert result.problem is None, result.problem
    return result.text, result.passes


# What the safe fixes take out: a graph break (a `pass` where it was alone), unused noqa codes.
_REMOVED = (GUARD, "import torch", "torch._dynamo.graph_break()", "pass")
_NOQA = re.compile(r"\s*# noqa: [A-Z0-9, ]+$")


def _kept_lines(text: str) -> list[str]:
    lines = (_NOQA.sub("", line).strip() for line in text.splitlines())
    return [line for line in lines if line not in _REMOVED]


@pytest.mark.parametrize("seed", range(150))
def test_fixing_a_generated_model(seed: int) -> None:
    original = generated_model(seed)
    fixed, passes = _fix_all(original)
    assert passes < MAX_PASSES
    compile(fixed, "model.py", "exec", dont_inherit=True)
    assert _kept_lines(fixed) == _kept_lines(original)
    # A string's text is never touched: the two lines of the triple-quoted one stay as they were.
    unindented = [line for line in fixed.splitlines() if line.startswith('over two lines"""')]
    assert len(unindented) == original.count('over two lines"""')
    if "\r\n" in original:
        assert fixed.count("\n") == fixed.count("\r\n")
    left = lint_text(fixed, "model.py", Settings(root=Path(".")))
    assert not [d for d in left if d.fix_applies(True)], [(d.code, d.location) for d in left]
    # Every side-effect call that stands on a line of its own is now guarded.
    assert not [d for d in left if d.code in ("TL101", "TL102", "TL103", "TL104", "TL106")
                and _alone_on_its_line(fixed, d.location.row)]


def _alone_on_its_line(text: str, row: int) -> bool:
    line = text.splitlines()[row - 1].strip()
    return ";" not in line and "=" not in line.split("(")[0] and not line.startswith("if ")


# The TL3xx and TL4xx rewrites: (before, after), `{n}` standing for a number of its own, `{j}` for
# the statement's indentation and `{i}` for that of its continuation lines.
VALUE_STATEMENTS = (
    ("y = y * y.sum().item()", "y = y * y.sum().detach()"),
    ("s{n} = y.abs().amax().item()\n{j}y = y / (s{n} + 1e-6)", "s{n} = y.abs().amax().detach()\n{j}y = y / (s{n} + 1e-6)"),
    ("y = y * (\n{i}    y.mean().item()  # kept\n{i})", "y = y * (\n{i}    y.mean().detach()  # kept\n{i})"),
    ("y = y / float(y.norm())", "y = y / y.norm().detach()"),
    ("y = y * int(y.argmax()); z{n} = y", "y = y * y.argmax(); z{n} = y"),
    ("y = y + table[y.argmax()]", "y = y + table[y.argmax().reshape(1)].squeeze(0)"),
    (
        "r{n} = torch.repeat_interleave(\n{i}    table,\n{i}    torch.tensor([2, 1]),  # pairs\n{i})",
        "r{n} = torch.repeat_interleave(\n{i}    table,\n{i}    torch.tensor([2, 1]), output_size=3,  # pairs\n{i})",
    ),
    ("m{n} = torch.masked_select(y, y > 0).sum()", "m{n} = torch.where(y > 0, y, 0).sum()"),
    ("y = y * y[y > 0].sum()", "y = y * torch.where(y > 0, y, 0).sum()"),
    ("h{n} = F.one_hot(table.long() % 3)", "h{n} = F.one_hot(table.long() % 3, num_classes=3)"),
)
VALUE_BLOCKS = ("for _ in range(2):", "if x.dim() > 1:", "with torch.no_grad():")


def _value_body(rng: random.Random, indent: str, unit: str, depth: int, count: list[int]) -> tuple[list[str], list[str]]:
    before: list[str] = []
    after: list[str] = []
    for _ in range(rng.randint(1, 4)):
        if depth < 2 and rng.random() < 0.3:
            block = rng.choice(VALUE_BLOCKS)
            inner = _value_body(rng, indent + unit, unit, depth + 1, count)
            before += [indent + block, *inner[0]]
            after += [indent + block, *inner[1]]
        else:
            count[0] += 1
            pair = rng.choice(VALUE_STATEMENTS)
            for lines, text in zip((before, after), pair):
                lines.append(indent + text.format(n=count[0], j=indent, i=indent))
    return before, after


def generated_value_model(seed: int) -> tuple[str, str]:
    """A model whose forward holds TL3xx and TL4xx patterns, and the model `--fix
    --unsafe-fixes` must make of it."""
    rng = random.Random(seed)
    unit = rng.choice(("    ", "  ", "\t"))
    header = [
        "import torch",
        "import torch.nn.functional as F",
        "",
        "",
        "class Net(torch.nn.Module):",
        unit + "def forward(self, x: torch.Tensor, table: torch.Tensor):",
        unit * 2 + "y = x * 1",
    ]
    before, after = _value_body(rng, unit * 2, unit, 0, [0])
    newline = rng.choice(("\n", "\r\n"))
    footer = [unit * 2 + "return y", ""]
    return tuple(newline.join(header + body + footer) for body in (before, after))


@pytest.mark.parametrize("seed", range(60))
def test_fixing_generated_tensor_values(seed: int) -> None:
    original, expected = generated_value_model(seed)
    fixed, passes = _fix_all(original)
    assert passes < MAX_PASSES
    compile(fixed, "model.py", "exec", dont_inherit=True)
    assert fixed == expected
    left = lint_text(fixed, "model.py", Settings(root=Path(".")))
    assert not [d for d in left if d.fix_applies(True)], [(d.code, d.location) for d in left]
