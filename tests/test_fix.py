"""`--fix`, `--diff`, `--fix-only`, `--show-fixes` and `--unsafe-fixes` through the command,
on real files: what is written, what is kept (comments, line endings, encoding, mode,
symbolic links), and that a second run changes nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from torchlint.report.diagnostic import Diagnostic, Edit, Fix, Location, Applicability
from torchlint.fix.fixing import apply_fixes

from helpers import Ran, run_in_process, write

MODEL = """\
import torch


class Net(torch.nn.Module):
    def forward(self, x):
        print("shape", x.shape)  # kept comment
        y = x * 2
        for _ in range(2):
            print(
                "step",
                y,
            )
        return y
"""

GUARDED = """\
import torch


class Net(torch.nn.Module):
    def forward(self, x):
        if not torch.compiler.is_compiling():
            print("shape", x.shape)  # kept comment
        y = x * 2
        for _ in range(2):
            if not torch.compiler.is_compiling():
                print(
                    "step",
                    y,
                )
        return y
"""


def torchlint(*args: str, cwd: Path) -> Ran:
    return run_in_process("check", "--no-cache", *args, cwd=cwd)


@pytest.fixture
def model(project: Path) -> Path:
    write(project, {"model.py": MODEL})
    return project / "model.py"


def test_unsafe_fixes_are_shown_but_not_applied_by_default(model: Path) -> None:
    result = torchlint("model.py", "--fix", cwd=model.parent)
    assert model.read_text() == MODEL
    assert result.returncode == 1
    assert "TL101 [*]" not in result.stdout
    assert "No fixes available (2 hidden fixes can be enabled with the `--unsafe-fixes` option)." in result.stderr


def test_fix_guards_each_print_and_a_second_run_changes_nothing(model: Path) -> None:
    listed = torchlint("model.py", "--unsafe-fixes", cwd=model.parent)
    assert listed.stdout.count("TL101 [*]") == 2 and "[*] 2 fixable with the `--fix` option." in listed.stderr
    fixed = torchlint("model.py", "--fix", "--unsafe-fixes", "--show-fixes", cwd=model.parent)
    assert model.read_text() == GUARDED
    assert fixed.returncode == 0, fixed.stderr
    assert "2 × TL101 (print-in-compiled-code)" in fixed.stderr and "1 × TL601 (break-in-loop)" in fixed.stderr
    assert "Found 3 findings (3 fixed, 0 remaining)." in fixed.stderr
    again = torchlint("model.py", "--fix", "--unsafe-fixes", cwd=model.parent)
    assert again.returncode == 0 and model.read_text() == GUARDED
    compile(model.read_text(), "model.py", "exec")


def test_diff_prints_the_fixes_and_writes_nothing(model: Path) -> None:
    result = torchlint("model.py", "--diff", "--unsafe-fixes", cwd=model.parent)
    assert result.returncode == 1
    assert result.stdout.startswith("--- model.py\n+++ model.py\n")
    assert "+        if not torch.compiler.is_compiling():\n" in result.stdout
    assert "Would fix 3 findings." in result.stderr
    assert model.read_text() == MODEL
    model.write_text(GUARDED)
    clean = torchlint("model.py", "--diff", "--unsafe-fixes", cwd=model.parent)
    assert clean.returncode == 0 and clean.stdout == ""


LOOP_OVER_A_BREAKING_HELPER = """\
import torch


def helper(x):
    print(x)
    return x * 2


class Net(torch.nn.Module):
    def forward(self, x):
        for blk in self.blocks:
            x = helper(blk(x))
        print(x.shape)
        return x
"""


def test_a_finding_another_fix_removes_counts_as_fixed_in_every_summary(project: Path) -> None:
    """Guarding the helper's print removes the loop's TL601 too, though no fix of its own was
    applied: four findings, four fixed, in `--fix`, `--diff`, `--show-fixes` and stdin alike."""
    write(project, {"model.py": LOOP_OVER_A_BREAKING_HELPER})
    before = torchlint("model.py", cwd=project)
    assert sorted(line.split()[1] for line in before.stdout.splitlines()) == ["TL101", "TL101", "TL601"]
    diff = torchlint("model.py", "--diff", "--unsafe-fixes", cwd=project)
    assert "Would fix 3 findings." in diff.stderr
    stdin = subprocess.run(
        [sys.executable, "-m", "torchlint", "check", "--no-cache", "--diff", "--unsafe-fixes", "--stdin-filename", "model.py", "-"],
        cwd=project, input=LOOP_OVER_A_BREAKING_HELPER, capture_output=True, text=True, timeout=120,
    )
    assert "Would fix 3 findings." in stdin.stderr
    fixed = torchlint("model.py", "--fix", "--unsafe-fixes", "--show-fixes", cwd=project)
    assert "1 × TL601 (break-in-loop)" in fixed.stderr and "2 × TL101 (print-in-compiled-code)" in fixed.stderr
    assert "Found 3 findings (3 fixed, 0 remaining)." in fixed.stderr
    assert torchlint("model.py", cwd=project).returncode == 0


def test_fix_only_reports_nothing_but_the_count(model: Path) -> None:
    result = torchlint("model.py", "--fix-only", "--unsafe-fixes", cwd=model.parent)
    assert result.returncode == 0 and result.stdout == ""
    assert result.stderr.strip() == "Fixed 3 findings."
    assert model.read_text() == GUARDED


def test_the_configuration_turns_fixing_on(model: Path) -> None:
    write(model.parent, {"pyproject.toml": "[tool.torchlint]\nfix = true\nunsafe-fixes = true\n"})
    assert torchlint("model.py", cwd=model.parent).returncode == 0
    assert model.read_text() == GUARDED


def test_a_fix_keeps_line_endings_encoding_mode_and_links(project: Path) -> None:
    source = "# -*- coding: latin-1 -*-\n" + MODEL.replace('"shape"', '"größe"')
    data = source.replace("\n", "\r\n").encode("latin-1")
    real = project / "real" / "model.py"
    real.parent.mkdir()
    real.write_bytes(data)
    real.chmod(0o751)
    link = project / "model.py"
    link.symlink_to(real)
    assert torchlint("model.py", "--fix", "--unsafe-fixes", cwd=project).returncode == 0
    assert link.is_symlink()
    written = real.read_bytes()
    assert b"gr\xf6\xdfe" in written
    assert written.count(b"\r\n") == written.count(b"\n")
    assert b"\r\n            if not torch.compiler.is_compiling():\r\n                print(\r\n                    \"step\",\r\n" in written
    assert real.stat().st_mode & 0o777 == 0o751


def test_import_torch_is_added_where_the_file_lacks_it(project: Path) -> None:
    write(project, {"model.py": "from torch import nn\n\n\nclass Net(nn.Module):\n    def forward(self, x):\n        print(x)\n        return x\n"})
    assert torchlint("model.py", "--fix", "--unsafe-fixes", cwd=project).returncode == 0
    assert (project / "model.py").read_text() == (
        "import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    def forward(self, x):\n"
        "        if not torch.compiler.is_compiling():\n            print(x)\n        return x\n"
    )


def test_a_file_that_imports_nothing_from_torch_imports_it_where_the_guard_runs(project: Path) -> None:
    # A helper module that must load without torch (an optional dependency) keeps loading without it.
    source = "import logging\n\nlog = logging.getLogger(__name__)\n\n\ndef probe(name):\n    log.debug(name)\n    return name\n"
    write(project, {"helpers.py": source, "torchlint.toml": 'entry-points = ["helpers.probe"]\n'})
    assert torchlint("helpers.py", "--fix", "--unsafe-fixes", cwd=project).returncode == 0
    fixed = source.replace(
        "    log.debug(name)\n",
        "    import torch\n    if not torch.compiler.is_compiling():\n        log.debug(name)\n",
    )
    assert (project / "helpers.py").read_text() == fixed
    assert torchlint("helpers.py", "--fix", "--unsafe-fixes", cwd=project).returncode == 0
    assert (project / "helpers.py").read_text() == fixed


def test_json_carries_the_fix(model: Path) -> None:
    result = torchlint("model.py", "--output-format", "json", cwd=model.parent)
    first = json.loads(result.stdout)[0]
    assert first["fix"] == {
        "applicability": "unsafe",
        "message": "Run `print()` in eager mode only",
        "edits": [{
            "content": "if not torch.compiler.is_compiling():\n            ",
            "location": {"row": 6, "column": 9},
            "end_location": {"row": 6, "column": 9},
        }],
    }


def test_a_print_whose_value_is_used_or_that_shares_its_line_has_no_fix(project: Path) -> None:
    write(project, {"model.py": "import torch\n\n\nclass Net(torch.nn.Module):\n    def forward(self, x):\n"
                                "        y = print(x)\n        print(x); z = x\n        return x\n"})
    found = json.loads(torchlint("model.py", "--output-format", "json", cwd=project).stdout)
    assert [f["code"] for f in found] == ["TL101", "TL101"] and all(f["fix"] is None for f in found)


def _finding(row: int, column: int, end: int, content: str) -> Diagnostic:
    edit = Edit(content, Location(row, column), Location(row, end))
    return Diagnostic("m.py", "TL999", "x", "x", Location(row, column), Location(row, end),
                      fix=Fix("fix", Applicability.SAFE, (edit,)))


def test_overlapping_fixes_wait_for_the_next_pass_and_shared_edits_are_made_once() -> None:
    text = "abcdef\nghij\n"
    first, overlapping = _finding(1, 2, 4, "XY"), _finding(1, 3, 5, "Z")
    shared = [_finding(2, 1, 1, "import torch\n"), _finding(2, 1, 1, "import torch\n")]
    fixed, done = apply_fixes(text, [overlapping, first, *shared], unsafe=False)
    assert fixed == "aXYdef\nimport torch\nghij\n"
    assert done == [first, *shared]


def test_sarif_carries_the_fix_and_stays_valid(model: Path) -> None:
    from sarif_schema import assert_valid_sarif

    document = json.loads(torchlint("model.py", "--output-format", "sarif", cwd=model.parent).stdout)
    assert_valid_sarif(document)
    fixes = document["runs"][0]["results"][0]["fixes"]
    replacement = fixes[0]["artifactChanges"][0]["replacements"][0]
    assert replacement["deletedRegion"] == {"startLine": 6, "startColumn": 9, "endLine": 6, "endColumn": 9}
    assert replacement["insertedContent"]["text"].startswith("if not torch.compiler.is_compiling():")


def test_torch_assert_checks_on_the_device_through_the_files_own_name_for_torch(project: Path) -> None:
    write(project, {"model.py": "import torch as th\n\n\nclass Net(th.nn.Module):\n    def forward(self, x):\n"
                                "        th._assert(x.sum() > 0, 'positive')\n"
                                "        th._assert(x.sum() > 0, f'sum {x.sum()}')\n        return x\n"})
    result = torchlint("model.py", "--fix", "--unsafe-fixes", cwd=project)
    assert result.returncode == 1  # the second message is built at run time: no fix
    assert (project / "model.py").read_text().splitlines()[5:7] == [
        "        th._assert_async(x.sum() > 0, 'positive')",
        "        th._assert(x.sum() > 0, f'sum {x.sum()}')",
    ]


def test_an_assert_with_a_formatted_message_is_checked_in_eager_mode_only(project: Path) -> None:
    write(project, {"model.py": "import torch\n\n\nclass Net(torch.nn.Module):\n    def forward(self, x):\n"
                                "        assert x.sum() > 0, f'sum {x.sum()}'\n        return x\n"})
    assert torchlint("model.py", "--fix", "--unsafe-fixes", cwd=project).returncode == 0
    assert (project / "model.py").read_text().splitlines()[5:7] == [
        "        if not torch.compiler.is_compiling():",
        "            assert x.sum() > 0, f'sum {x.sum()}'",
    ]


WHERE_CASES = {
    # an `if` with no `else` keeps the old value on the other side
    "        if y.abs().max() > 1.0:\n            y = y / y.abs().max()\n":
        "        y = torch.where(y.abs().max() > 1.0, y / y.abs().max(), y)\n",
    "        if y.sum() > 0:\n            y = y * 2\n        else:\n            y = -y\n":
        "        y = torch.where(y.sum() > 0, y * 2, -y)\n",
    "        y = y * 2 if y.mean() > 0 else y.neg()\n":
        "        y = torch.where(y.mean() > 0, y * 2, y.neg())\n",
    # a comment line above the `if` stays above what replaces it
    "        # keep it positive\n        if y.sum() > 0:\n            y = y * 2\n        else:\n            y = -y\n":
        "        # keep it positive\n        y = torch.where(y.sum() > 0, y * 2, -y)\n",
    # an index guard: the item is read on both sides
    "        t = y.sum().long()\n        y = y[t] if t >= 0 else y[-1]\n":
        "        t = y.sum().long()\n        y = torch.where(t >= 0, y[t.reshape(1)].squeeze(0), y[-1])\n",
}

NOT_REWRITTEN = (
    # a call that may do anything, two names, a comment, a name with no value before, and/or
    "        if y.sum() > 0:\n            y = helper(y)\n",
    "        if y.sum() > 0:\n            y = y * 2\n            z = y\n",
    "        if y.sum() > 0:\n            # why\n            y = y * 2\n",
    "        if y.sum() > 0:\n            fresh = y * 2\n",
    "        if y.sum() > 0 and y.max() < 9:\n            y = y * 2\n",
    "        if y.add_(1).sum() > 0:\n            y = y.mul_(2)\n",
    # sides torch.where cannot take, and conditions that are Python booleans
    "        y = y if y.sum() > 0 else None\n",
    "        z = (y, y) if y.sum() > 0 else (y,)\n",
    "        y = y if 0 in y else y * 2\n",
    # a side whose shape differs from the other's: a slice, a boolean mask, two indices
    "        if y.sum() > 1:\n            y = y.repeat(2, 1)\n",
    "        y = y[1:] if y.sum() > 0 else y\n",
    "        m = y > 0\n        y = y[m] if y.sum() > 0 else y\n",
    "        y = y[0, 1] if y.sum() > 0 else y\n",
)


def _forward(body: str) -> str:
    return ("import torch\n\n\ndef helper(t):\n    return t\n\n\nclass Net(torch.nn.Module):\n"
            "    def forward(self, x: torch.Tensor):\n        y = x * 1\n" + body + "        return y\n")


RETURN_CASES = {
    "        if y.sum() > 0:\n            return y * 2\n        return -y\n":
        "        return torch.where(y.sum() > 0, y * 2, -y)\n",
    "        # the sign decides\n        if y.sum() > 0:\n            return y * 2\n        return -y\n":
        "        # the sign decides\n        return torch.where(y.sum() > 0, y * 2, -y)\n",
    "        if y.max() < 1:\n            return y.exp()\n        else:\n            return y\n":
        "        return torch.where(y.max() < 1, y.exp(), y)\n",
}

RETURNS_KEPT = (
    # the second return has a comment of its own; a side that is not a tensor
    "        if y.sum() > 0:\n            return y * 2\n        return -y  # why\n",
    "        if y.sum() > 0:\n            return y * 2\n        return None\n",
    # two numbers: the caller gets a Python number back, and may pass numpy values (ot's
    # solve_1d_linesearch_quad, whose `torch.where(a + b < 0, 1.0, 0.0)` failed on numpy)
    "        if y.sum() > 0:\n            return 1.0\n        return 0.0\n",
)


def _returning(body: str) -> str:
    return "import torch\n\n\nclass Net(torch.nn.Module):\n    def forward(self, x: torch.Tensor):\n        y = x * 1\n" + body


# (how the case sits in a model, the branch, what --fix makes of it)
REWRITES = [(_forward, before, after) for before, after in WHERE_CASES.items()] + [
    (_returning, before, after) for before, after in RETURN_CASES.items()
]
LEFT_ALONE = [(_forward, body) for body in NOT_REWRITTEN] + [(_returning, body) for body in RETURNS_KEPT]


@pytest.mark.parametrize(("model", "before", "after"), REWRITES)
def test_a_branch_on_a_tensor_becomes_torch_where(project: Path, model, before: str, after: str) -> None:
    write(project, {"model.py": model(before)})
    assert torchlint("model.py", "--fix", "--unsafe-fixes", cwd=project).returncode == 0
    assert (project / "model.py").read_text() == model(after)


@pytest.mark.parametrize(("model", "body"), LEFT_ALONE)
def test_branches_torch_where_cannot_stand_for_are_left_alone(project: Path, model, body: str) -> None:
    write(project, {"model.py": model(body)})
    torchlint("model.py", "--fix", "--unsafe-fixes", cwd=project)
    assert (project / "model.py").read_text() == model(body)


CHECK = """\
import logging
import warnings

import torch

logger = logging.getLogger(__name__)


class Net(torch.nn.Module):
    def forward(self, x: torch.Tensor, pad=None):
        y = x * 2
        if pad is not None and (y < 0).any():
            if pad > 1:
                logger.warning("negative with pad")
            warnings.warn("negative values")
        elif y.sum() > 100:
            raise ValueError(
                "too big"
            )
        return y
"""

CHECK_IN_EAGER_MODE = """\
import logging
import warnings

import torch

logger = logging.getLogger(__name__)


class Net(torch.nn.Module):
    def forward(self, x: torch.Tensor, pad=None):
        y = x * 2
        if not torch.compiler.is_compiling():
            if pad is not None and (y < 0).any():
                if pad > 1:
                    logger.warning("negative with pad")
                warnings.warn("negative values")
            elif y.sum() > 100:
                raise ValueError(
                    "too big"
                )
        return y
"""


def test_a_check_that_only_reports_runs_in_eager_mode_whole(project: Path) -> None:
    # The guards the log and the warning would get inside it wait for the next pass, which
    # finds them ruled out: fixes inside a statement another fix moves are never made together.
    write(project, {"model.py": CHECK})
    assert torchlint("model.py", "--fix", "--unsafe-fixes", cwd=project).returncode == 0
    assert (project / "model.py").read_text() == CHECK_IN_EAGER_MODE


RAISES = """\
import torch


class Net(torch.nn.Module):
    def forward(self, x: torch.Tensor):
        y = x * 2
        if torch.isnan(y).any():
            raise ValueError("nan in the activations")
        if (y > 100).all():
            raise OverflowError
        if (y < -100).all():
            raise ValueError(f"below {{-100}}")
        if y.min() < -1e9:
            raise ValueError(f"too small: {y.min()}")
        return y
"""

RAISES_ON_THE_DEVICE = """\
import torch


class Net(torch.nn.Module):
    def forward(self, x: torch.Tensor):
        y = x * 2
        torch._assert_async(torch.logical_not(torch.isnan(y).any()), "nan in the activations")
        torch._assert_async(torch.logical_not((y > 100).all()), "OverflowError")
        torch._assert_async(torch.logical_not((y < -100).all()), "below {-100}")
        if not torch.compiler.is_compiling():
            if y.min() < -1e9:
                raise ValueError(f"too small: {y.min()}")
        return y
"""


def test_a_check_that_only_raises_a_constant_message_is_checked_on_the_device(project: Path) -> None:
    # A message formatted from the tensor cannot go to the device: that check runs in eager mode.
    write(project, {"model.py": RAISES})
    assert torchlint("model.py", "--fix", "--unsafe-fixes", cwd=project).returncode == 0
    assert (project / "model.py").read_text() == RAISES_ON_THE_DEVICE


def test_a_check_that_also_assigns_is_not_moved(project: Path) -> None:
    source = CHECK.replace('            warnings.warn("negative values")\n', '            y = y.abs()\n')
    write(project, {"model.py": source})
    torchlint("model.py", "--fix", "--unsafe-fixes", cwd=project)
    assert "            y = y.abs()\n" in (project / "model.py").read_text()
    assert "    if not torch.compiler.is_compiling():\n            if pad" not in (project / "model.py").read_text()


def test_a_math_call_on_a_tensor_becomes_its_torch_counterpart(project: Path) -> None:
    body = ("        t = x.mean()\n        a = x / math.exp(t)\n        b = math.log(t, 2)\n"
            "        c = math.fabs(t) + math.degrees(t)\n        return a + b + c\n")
    write(project, {"model.py": "import math\n\n" + _returning(body)})
    torchlint("model.py", "--fix", "--unsafe-fixes", cwd=project)
    assert (project / "model.py").read_text().splitlines()[9:12] == [
        "        a = x / torch.exp(t)",
        "        b = math.log(t, 2)",  # a base: torch.log takes none
        "        c = torch.abs(t) + torch.rad2deg(t)",
    ]


def test_a_buffer_from_stdin_comes_back_fixed_on_stdout(project: Path) -> None:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("TORCHLINT_")}
    command = [sys.executable, "-m", "torchlint", "check", "--no-cache", "--stdin-filename", "model.py", "-"]
    fixed = subprocess.run([*command, "--fix", "--unsafe-fixes"], input=MODEL.encode(), cwd=project,
                           capture_output=True, env=environment, timeout=120)
    assert fixed.returncode == 0 and fixed.stdout.decode() == GUARDED
    assert fixed.stderr.decode().strip() == "Fixed 3 findings, 0 remaining."
    # Without --unsafe-fixes nothing is applied: the buffer comes back as it was, the findings on stderr.
    kept = subprocess.run([*command, "--fix"], input=MODEL.encode(), cwd=project,
                          capture_output=True, env=environment, timeout=120)
    assert kept.returncode == 1 and kept.stdout.decode() == MODEL
    assert kept.stderr.decode().count("model.py:") == 3  # two prints, and the loop one of them is in
    assert kept.stderr.decode().endswith("Fixed 0 findings, 3 remaining.\n")
    assert not (project / "model.py").exists()
