"""Cache files planted in a project by someone else: a repository that commits its
`.torchlint_cache`, an image built by another user. Every kind of cache file (each entry and
the record) is replaced by a payload that runs a command when loaded the way a pickle is, or
that the decoder could be tricked with; then `torchlint check`, the pre-commit hook and the
language server run in the project. No payload may run, and each must report what a run
without the cache reports."""

from __future__ import annotations

import asyncio
import hashlib
import marshal
import os
import subprocess
import sys
from pathlib import Path

import pytest
from editor_project import checked, start_session, write_project

from torchlint.user_cache import KEY_FILE, signed

pytest_lsp = pytest.importorskip("pytest_lsp")
from lsprotocol import types  # noqa: E402
from pygls.uris import from_fs_path  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient  # noqa: E402

# What the pickle in each payload runs: a file written where every command would write it
# (the tests' own cache home, whatever folder the command runs in).
MARKER = Path(os.environ["XDG_CACHE_HOME"]) / "payload-ran"
COMMAND = f"echo PWNED > {MARKER}"
# `GLOBAL torchlint.run.cache os.system`, the command, `REDUCE`: the module passed the old
# loader's allow-list, and the dotted name walks from it to `os.system`.
PICKLE = b"\x80\x04ctorchlint.run.cache\nos.system\n(X" + len(COMMAND).to_bytes(4, "little") + COMMAND.encode() + b"tR."
OLD_MAGIC = b"torchlint-cache\n"
MAGIC = b"torchlint-cache 2\n"


def _key() -> bytes:
    """This user's key (the tests keep their cache home in a folder of the session's own)."""
    return (Path(os.environ["XDG_CACHE_HOME"]) / "torchlint" / KEY_FILE).read_bytes()


def _with_mac(body: bytes, label: str) -> bytes:
    return MAGIC + body + signed(_key(), label, body)


def _encoded_with_tag(tag: int, *fields: object) -> bytes:
    return marshal.dumps((tag, *fields), 0)


# name -> what a planted file holds, given the name it is kept under ("<subfolder>/<file>")
PAYLOADS = {
    # the file the hostile round planted: the old envelope, a pickle, a digest anyone can compute
    "old envelope, pickle": lambda label: OLD_MAGIC + PICKLE + hashlib.blake2b(PICKLE, digest_size=32).digest(),
    "new envelope, pickle, no MAC": lambda label: MAGIC + PICKLE,
    "new envelope, pickle, forged MAC": lambda label: MAGIC + PICKLE + hashlib.sha256(PICKLE).digest(),
    # With this user's key, as if the key were known: the decoder alone stands in the way.
    "signed pickle": lambda label: _with_mac(PICKLE, label),
    "signed code object": lambda label: _with_mac(marshal.dumps(compile(f"__import__('os').system({COMMAND!r})", "<p>", "exec")), label),
    "signed unknown tag": lambda label: _with_mac(_encoded_with_tag(4000, "os", "system"), label),
    "signed class with a field short": lambda label: _with_mac(_encoded_with_tag(16), label),
    "signed untagged tuple": lambda label: _with_mac(marshal.dumps(("os.system", COMMAND), 0), label),
    "signed for another name": lambda label: _with_mac(marshal.dumps((0, "key", None), 0), label + ".elsewhere"),
}


def test_the_pickle_payload_runs_when_unpickled(tmp_path: Path) -> None:
    """The payload is live: loaded as a pickle, it runs its command."""
    script = f"import pickle, sys; sys.path.insert(0, {str(Path(__file__).parents[1])!r}); pickle.loads({PICKLE!r})"
    subprocess.run([sys.executable, "-c", script], cwd=tmp_path, check=True)
    assert MARKER.read_text() == "PWNED\n"


def _cache_files(project: Path) -> list[Path]:
    files = sorted(path for path in (project / ".torchlint_cache").glob("*/*") if path.suffix in (".entry", ".record"))
    assert any(path.suffix == ".record" for path in files) and any(path.suffix == ".entry" for path in files)
    return files


def _plant(project: Path, kinds: list[str]) -> dict[Path, bytes]:
    """Every cache file of every subfolder (each torchlint install has its own) replaced by a
    payload, the kinds taken in turn; what each file now holds."""
    planted = {}
    for i, path in enumerate(_cache_files(project)):
        planted[path] = PAYLOADS[kinds[i % len(kinds)]](f"{path.parent.name}/{path.name}")
        path.write_bytes(planted[path])
    return planted


def _rewritten(planted: dict[Path, bytes]) -> list[Path]:
    """The planted files written again since: read, found wanting, and replaced."""
    return [path for path, data in planted.items() if path.exists() and path.read_bytes() != data]


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCHLINT_")}
    return subprocess.run([sys.executable, "-m", "torchlint", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def _payload_ran() -> bool:
    return MARKER.exists()


@pytest.fixture(autouse=True)
def _no_marker() -> None:
    MARKER.unlink(missing_ok=True)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(tmp_path / "project")


@pytest.mark.parametrize("kind", [*PAYLOADS, "all kinds at once"])
def test_a_planted_cache_file_is_a_miss_for_check(project: Path, kind: str) -> None:
    expected = _run("check", "--no-cache", ".", cwd=project)
    assert expected.returncode == 1 and "TL101" in expected.stdout
    _run("check", ".", cwd=project)
    planted = _plant(project, list(PAYLOADS) if kind == "all kinds at once" else [kind])
    (project / "pkg/model.py").touch()
    again = _run("check", ".", cwd=project)
    assert not _payload_ran()
    assert (again.returncode, again.stdout, again.stderr) == (expected.returncode, expected.stdout, expected.stderr)
    # Written again as torchlint's own: the next run reads it.
    assert _rewritten(planted) == [path for path in planted if path.exists()]
    assert _run("check", ".", cwd=project).stdout == expected.stdout


@pytest.mark.hooks
def test_a_planted_cache_file_is_a_miss_for_the_pre_commit_hook(project: Path, tmp_path: Path) -> None:
    """The hook as a project configures it (`repo:` and `rev:` in `.pre-commit-config.yaml`):
    its environment is made once and kept, so both runs use one torchlint."""
    from test_precommit import REPO_ROOT, TIMEOUT_S, _environment, _git, _init_repository, _snapshot

    env = _environment(tmp_path)
    hook_repo = _snapshot(REPO_ROOT, tmp_path / "hook-repo", env)
    revision = _git(hook_repo, env, "rev-parse", "HEAD").strip()
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {hook_repo}\n    rev: {revision}\n    hooks:\n      - id: torchlint\n"
    )
    _init_repository(project, env)
    _git(project, env, "add", "-A")

    def hook() -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "pre_commit", "run", "--all-files"]
        return subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)

    def reported(done: subprocess.CompletedProcess[str]) -> list[str]:
        return sorted(line for line in done.stdout.splitlines() if ": TL" in line)

    first = hook()
    assert first.returncode == 1 and reported(first), first.stdout + first.stderr
    planted = _plant(project, list(PAYLOADS))
    again = hook()
    assert not _payload_ran() and _rewritten(planted)
    assert again.returncode == 1 and reported(again) == reported(first)


@pytest.fixture
def planted(tmp_path: Path) -> dict[Path, bytes]:
    project = write_project(tmp_path / "project")
    _run("check", ".", cwd=project)
    return _plant(project, list(PAYLOADS))


@pytest.fixture
def planted_project(planted: dict[Path, bytes]) -> Path:
    return next(iter(planted)).parents[2]


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "torchlint", "server"]))
async def planted_client(lsp_client: LanguageClient, planted_project: Path):
    await start_session(lsp_client, planted_project)
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_a_planted_cache_file_is_a_miss_for_the_language_server(
    planted_client: LanguageClient, planted_project: Path, planted: dict[Path, bytes]
) -> None:
    model = planted_project / "pkg/model.py"
    uri = from_fs_path(str(model))
    planted_client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=model.read_text())
    ))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 60
    while not planted_client.diagnostics.get(uri) and loop.time() < deadline:
        await asyncio.sleep(0.05)
    found = list(planted_client.diagnostics.get(uri) or [])
    assert not _payload_ran()
    # The server read the planted entries of the files it analysed, and wrote them again.
    assert any(path.suffix == ".entry" for path in _rewritten(planted))
    as_check = sorted((str(d.code), d.range.start.line + 1, d.range.start.character + 1) for d in found)
    assert as_check and as_check == checked(planted_project, model)
