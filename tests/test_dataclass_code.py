"""The code `dataclasses` compiles, kept between commands (torchlint/dataclass_code.py):
real commands in fresh processes, each with a cache folder of its own."""

from __future__ import annotations

import dataclasses
import marshal
import os
import subprocess
import sys
from pathlib import Path

import pytest

from torchlint.dataclass_code import DISABLE, cache_file, kept_between_commands
from torchlint.user_cache import KEY_FILE, checked_body, signed

MODEL = "import torch\n\n\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        print(x)\n        return x\n"
# Dataclasses of every kind whose methods `dataclasses` writes, and what they do.
SCRIPT = """
import dataclasses, sys
from torchlint.dataclass_code import kept_between_commands
with kept_between_commands():
    @dataclasses.dataclass(frozen=True, order=True)
    class Frozen:
        a: int
        b: list = dataclasses.field(default_factory=list, compare=False)
        c: str = "c"
    @dataclasses.dataclass(eq=True, unsafe_hash=True)
    class Plain:
        x: float = 1.5
    f = Frozen(2, [1])
    try:
        f.a = 3
    except dataclasses.FrozenInstanceError as error:
        print("frozen", type(error).__name__)
    print(repr(f), f == Frozen(2), f < Frozen(3), hash(f) == hash(Frozen(2)), Frozen.__init__.__annotations__)
    print(repr(Plain()), hash(Plain()) == hash(Plain(1.5)), Plain.__init__.__defaults__)
"""


def _environment(cache_home: Path, **extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != DISABLE}
    return {**env, "XDG_CACHE_HOME": str(cache_home), **extra}


def _check_model(cache_home: Path, **extra: str) -> subprocess.CompletedProcess:
    model = cache_home.parent / "model.py"  # beside the cache folder, in the test's own folder
    model.write_text(MODEL)
    return subprocess.run(
        [sys.executable, "-m", "torchlint", "check", "--no-cache", str(model)],
        env=_environment(cache_home, **extra), capture_output=True, text=True, cwd=model.parent,
    )


def _cache_file(cache_home: Path) -> Path:
    (found,) = (cache_home / "torchlint").glob("dataclass-code-*.marshal")
    return found


def _key(cache_home: Path) -> bytes:
    return (cache_home / "torchlint" / KEY_FILE).read_bytes()


def _signed(cache_home: Path, body: bytes) -> bytes:
    """``body`` as a command of this user's would write it under ``cache_home``."""
    return b"torchlint-dataclass-code 2\n" + body + signed(_key(cache_home), Path(cache_file()).name, body)


def _body(cache_home: Path, kept: Path) -> object:
    """What a cache file holds, where it checks out under the key in ``cache_home``."""
    body = checked_body(_key(cache_home), kept.name, b"torchlint-dataclass-code 2\n", kept.read_bytes())
    assert body is not None
    return marshal.loads(body)


def _same(run: subprocess.CompletedProcess, expected: subprocess.CompletedProcess) -> bool:
    return (run.returncode, run.stdout, run.stderr) == (expected.returncode, expected.stdout, expected.stderr)


@pytest.fixture(scope="module")
def expected(tmp_path_factory: pytest.TempPathFactory) -> subprocess.CompletedProcess:
    """The command's output with nothing kept."""
    folder = tmp_path_factory.mktemp("nothing-kept")
    run = _check_model(folder / "cache", **{DISABLE: "1"})
    assert not (folder / "cache").exists()
    assert run.returncode == 1 and "model.py:6:9: TL101" in run.stdout
    return run


@pytest.fixture(scope="module")
def kept_texts(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """What a cache file holds as a command leaves it."""
    folder = tmp_path_factory.mktemp("kept")
    _check_model(folder / "cache")
    return _body(folder / "cache", _cache_file(folder / "cache"))


def _with_cache_file(tmp_path: Path, content: bytes | None = None, signing: bytes | None = None) -> Path:
    """A private cache folder under ``tmp_path``, with this user's key in it, that holds
    ``content`` as the cache file (or ``signing`` signed with the key)."""
    folder = tmp_path / "cache/torchlint"
    folder.mkdir(parents=True, mode=0o700)
    (folder / KEY_FILE).write_bytes(os.urandom(32))
    (folder / KEY_FILE).chmod(0o600)
    kept = folder / Path(cache_file()).name  # the name depends on the Python build alone
    kept.write_bytes(content if signing is None else _signed(tmp_path / "cache", signing))
    kept.chmod(0o600)
    return kept


def test_a_command_keeps_the_code_and_the_next_one_uses_it_with_the_same_output(
    tmp_path: Path, expected: subprocess.CompletedProcess
) -> None:
    first = _check_model(tmp_path / "cache")
    kept = _cache_file(tmp_path / "cache")
    written = kept.stat().st_mtime_ns, kept.read_bytes()
    assert oct(kept.stat().st_mode & 0o777) == "0o600"
    again = _check_model(tmp_path / "cache")
    assert _same(first, expected) and _same(again, expected)
    # Nothing was compiled again, so nothing was written.
    assert (kept.stat().st_mtime_ns, kept.read_bytes()) == written


def test_dataclasses_made_with_kept_code_behave_as_ones_compiled_afresh(tmp_path: Path) -> None:
    def run(**extra: str) -> str:
        done = subprocess.run([sys.executable, "-c", SCRIPT], env=_environment(tmp_path, **extra), capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout

    afresh = run(**{DISABLE: "1"})
    assert "frozen FrozenInstanceError" in afresh and "Frozen(a=2, b=[1], c='c') True True True" in afresh
    assert run() == afresh  # compiles, and keeps
    assert run() == afresh  # from what was kept


def test_kept_code_is_used_only_from_a_folder_no_one_else_may_write_to_and_signed_with_the_users_key(
    tmp_path: Path, expected: subprocess.CompletedProcess, kept_texts: dict
) -> None:
    # Every entry is code that does not make the method asked for.
    planted = marshal.dumps({text: compile("pass", "<string>", "exec") for text in kept_texts})
    kept = _with_cache_file(tmp_path, signing=planted)
    used = _check_model(tmp_path / "cache")
    # Signed with the user's key, the planted code is run: nothing else tells that the file is read at all.
    assert "TL101" not in used.stdout and "KeyError: '__create_fn__'" in used.stderr
    # Unsigned, or signed with another key, it is passed over.
    for unsigned in (planted, b"torchlint-dataclass-code 2\n" + planted + bytes(32)):
        kept.write_bytes(unsigned)
        assert _same(_check_model(tmp_path / "cache"), expected)
    kept.write_bytes(_signed(tmp_path / "cache", planted))
    kept.parent.chmod(0o777)
    try:
        passed_over = _check_model(tmp_path / "cache")
    finally:
        kept.parent.chmod(0o700)
    assert _same(passed_over, expected)


@pytest.mark.parametrize("content", [b"", b"\x00not marshal", marshal.dumps(["a list"]), marshal.dumps({"text": 3})])
def test_a_damaged_file_is_passed_over_and_written_again(
    tmp_path: Path, content: bytes, expected: subprocess.CompletedProcess
) -> None:
    for kept in (_with_cache_file(tmp_path / "plain", content), _with_cache_file(tmp_path / "signed", signing=content)):
        cache_home = kept.parent.parent
        assert _same(_check_model(cache_home), expected)
        assert isinstance(_body(cache_home, kept), dict) and len(kept.read_bytes()) > 1000


def test_an_unwritable_cache_folder_costs_nothing_but_the_time(tmp_path: Path, expected: subprocess.CompletedProcess) -> None:
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache/torchlint").write_text("a file where the folder would go")
    assert _same(_check_model(tmp_path / "cache"), expected)


def test_dataclasses_is_left_as_it_was_even_when_the_block_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(DISABLE, raising=False)
    with pytest.raises(ZeroDivisionError), kept_between_commands():
        assert "exec" in vars(dataclasses)
        dataclasses.make_dataclass("Point", ["x", "y"])
        1 / 0
    assert "exec" not in vars(dataclasses)
    # What was compiled before the failure is kept.
    assert _cache_file(tmp_path / "cache").stat().st_size > 0


def test_without_an_absolute_cache_folder_nothing_is_kept_anywhere(tmp_path: Path) -> None:
    """Relative XDG_CACHE_HOME and HOME would put the file in whatever folder the command
    runs in: it is kept nowhere instead."""
    env = {**_environment(tmp_path, XDG_CACHE_HOME="relative/cache"), "HOME": "relative-home"}
    model = tmp_path / "model.py"
    model.write_text(MODEL)
    done = subprocess.run([sys.executable, "-m", "torchlint", "check", "--no-cache", "model.py"],
                          env=env, cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 1 and "model.py:6:9: TL101" in done.stdout
    assert [path.name for path in tmp_path.iterdir()] == ["model.py"]
