"""Deeply nested but valid code is checked like any other: long `elif` chains, sums,
method chains and the like nest libcst's tree as deep as they are long, deeper than
Python's default recursion limit, yet CPython compiles them. Code nested deeper than
CPython accepts is a syntax error, never a crash."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

import torchlint

_PACKAGE_ROOT = Path(torchlint.__file__).resolve().parents[1]

# Statements that CPython compiles and libcst parses, each nesting the tree hundreds deep.
DEEP_STATEMENTS = {
    "elif-chain": "if x.sum() > 0:\n    y = 0\n" + "".join(f"elif n == {i}:\n    y = {i}\n" for i in range(600)),
    "adjacent-strings": "s = (" + " ".join(f'"part{i}"' for i in range(600)) + ")\n",
    "method-chain": "y = x" + ".relu()" * 300 + "\n",
    "and-terms": "b = " + " and ".join(f"n{i}" for i in range(600)) + "\n",
    "plus-terms": "z = " + " + ".join("x" for _ in range(400)) + "\n",
    "nested-list": "l = " + "[" * 190 + "x" + "]" * 190 + "\n",
}


def _indented(code: str, prefix: str) -> str:
    return "".join(prefix + line + "\n" for line in code.splitlines())


def in_forward(statement: str) -> str:
    """``statement`` in a compiled `forward`, followed by a `print` on its last line but one."""
    return (
        "import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    def forward(self, x, n):\n"
        + _indented(statement, "        ")
        + "        print(x)\n        return x\n"
    )


def at_module_level(statement: str) -> str:
    """``statement`` at module level, before a compiled `forward` whose `print` proves the
    whole file was checked."""
    return (
        "import torch\nfrom torch import nn\n\nx = torch.ones(3)\nn = 1\n"
        + statement
        + "\n\nclass Net(nn.Module):\n    def forward(self, x):\n        print(x)\n        return x\n"
    )


def _print_row(source: str) -> int:
    return source.splitlines().index(next(line for line in source.splitlines() if line.strip() == "print(x)")) + 1


# Nests that CPython refuses; libcst alone would take gigabytes or overflow its stack.
TOO_DEEP_FOR_PYTHON = {
    "parentheses": "p = " + "(" * 100_000 + "x" + ")" * 100_000 + "\n",
    "lists": "p = " + "[" * 5_000 + "x" + "]" * 5_000 + "\n",
    "calls": "p = " + "f(" * 5_000 + "x" + ")" * 5_000 + "\n",
    "not": "b = " + "not " * 20_000 + "x\n",
    "unary-minus": "b = " + "-" * 100_000 + "x\n",
}
# Far more than a check needs, and little enough that a runaway parse fails fast.
_MEMORY_LIMIT = 4 * 1024**3


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (_MEMORY_LIMIT, _MEMORY_LIMIT))


def _run(*args: str, cwd: Path, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(_PACKAGE_ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.run(
        [sys.executable, "-m", "torchlint", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        env=env,
        timeout=300,
        preexec_fn=_limit_memory,
    )


PLACEMENTS = {"in-forward": in_forward, "module-level": at_module_level}


@pytest.fixture(scope="module")
def checked_deep_files(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One `torchlint check` over a file per deep statement and placement: its findings by
    file name, and what it printed on stderr."""
    folder = tmp_path_factory.mktemp("deep")
    for case, statement in DEEP_STATEMENTS.items():
        for placement, place in PLACEMENTS.items():
            (folder / f"{case}-{placement}.py").write_text(place(statement), encoding="utf-8")
    done = _run("check", "--output-format", "json", ".", cwd=folder)
    by_file: dict[str, set] = {}
    for finding in json.loads(done.stdout or "[]"):
        by_file.setdefault(Path(finding["filename"]).name, set()).add((finding["code"], finding["location"]["row"]))
    return {"findings": by_file, "stderr": done.stderr.decode(), "exit": done.returncode}


@pytest.mark.parametrize("placement", sorted(PLACEMENTS))
@pytest.mark.parametrize("case", sorted(DEEP_STATEMENTS))
def test_deep_statement_is_checked(case: str, placement: str, checked_deep_files: dict) -> None:
    """`torchlint check` reports the `print` after the deep statement, and nothing goes wrong."""
    name = f"{case}-{placement}.py"
    assert f"{name}:" not in checked_deep_files["stderr"], checked_deep_files["stderr"]
    assert checked_deep_files["exit"] == 1, checked_deep_files["stderr"]
    source = PLACEMENTS[placement](DEEP_STATEMENTS[case])
    assert ("TL101", _print_row(source)) in checked_deep_files["findings"].get(name, set())


def test_deep_code_from_stdin_is_checked(tmp_path: Path) -> None:
    source = in_forward(DEEP_STATEMENTS["elif-chain"])
    done = _run("check", "--stdin-filename", "model.py", "-", cwd=tmp_path, stdin=source.encode())
    assert "error:" not in done.stderr.decode(), done.stderr.decode()
    assert done.returncode == 1
    assert f"model.py:{_print_row(source)}:9: TL101" in done.stdout.decode()


def test_deep_code_shows_its_regions(tmp_path: Path) -> None:
    (tmp_path / "model.py").write_text(in_forward(DEEP_STATEMENTS["method-chain"]), encoding="utf-8")
    done = _run("check", "--show-regions", "model.py", cwd=tmp_path)
    assert "error:" not in done.stderr.decode(), done.stderr.decode()
    assert "Net.forward" in done.stdout.decode()


@pytest.mark.parametrize("case", sorted(TOO_DEEP_FOR_PYTHON))
def test_code_nested_deeper_than_python_accepts_is_a_syntax_error(case: str, tmp_path: Path) -> None:
    path = tmp_path / "model.py"
    path.write_text(in_forward(TOO_DEEP_FOR_PYTHON[case]), encoding="utf-8")
    done = _run("check", "--output-format", "json", path.name, cwd=tmp_path)
    assert done.returncode == 1, done.stderr.decode()[-2000:]
    assert [d["code"] for d in json.loads(done.stdout)] == ["TL901"]
