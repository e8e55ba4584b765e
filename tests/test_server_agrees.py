"""Every file opened in `torchlint server` shows the findings `torchlint check` reports for it:
on every fixture, and on a library of the real-code benchmark (x-transformers)."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytest.importorskip("pygls")
pytest_lsp = pytest.importorskip("pytest_lsp")

from lsprotocol import types  # noqa: E402
from pygls.uris import from_fs_path  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient  # noqa: E402

from editor_project import start_session  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
# where the benchmark installs its libraries (bench/_install.py)
BENCH_SITE = Path.home() / ".cache" / "torchlint-bench" / "site"
LIBRARY = ("x_transformers", "x-transformers==2.11.24")
TIMEOUT_S = 120


def _fixtures(folder: Path) -> Path:
    shutil.copytree(REPO / "fixtures", folder / "fixtures")
    (folder / "pyproject.toml").write_text("[tool.torchlint]\n")
    return folder


def _library(folder: Path) -> Path:
    """The library's sources: from the benchmark's installation, or its wheel from the
    package index; skipped where neither is at hand."""
    package, requirement = LIBRARY
    installed = BENCH_SITE / package
    if installed.is_dir():
        shutil.copytree(installed, folder / package, ignore=shutil.ignore_patterns("__pycache__"))
        return folder
    wheels = folder / "wheels"
    download = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "-d", str(wheels), requirement],
        capture_output=True, text=True,
    )
    if download.returncode != 0:
        pytest.skip(f"{requirement} is neither installed for the benchmark nor downloadable: {download.stderr[-300:]}")
    (wheel,) = wheels.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            if name.startswith(f"{package}/") and name.endswith(".py"):
                archive.extract(name, folder)
    shutil.rmtree(wheels)
    return folder


PROJECTS = {"fixtures": _fixtures, "x-transformers": _library}


@pytest.fixture(params=sorted(PROJECTS))
def project(request, tmp_path: Path) -> Path:
    return PROJECTS[request.param](tmp_path)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "torchlint", "server"]))
async def client(lsp_client: LanguageClient, project: Path):
    await start_session(lsp_client, project)
    yield
    await lsp_client.shutdown_session()


def _checked(project: Path) -> dict[str, list[tuple]]:
    """`torchlint check --output-format json` of the project, by file."""
    run = subprocess.run(
        [sys.executable, "-m", "torchlint", "check", "--output-format", "json", "--no-cache", "."],
        cwd=project, capture_output=True, text=True,
    )
    assert run.returncode in (0, 1), run.stderr
    found: dict[str, list[tuple]] = {}
    for item in json.loads(run.stdout):
        found.setdefault(str(Path(item["filename"]).resolve()), []).append(
            (item["code"], item["location"]["row"], item["location"]["column"], item["message"])
        )
    return {path: sorted(rows) for path, rows in found.items()}


def _shown(diagnostics) -> list[tuple]:
    rows = []
    for d in diagnostics:
        message = d.message
        gb_ids = (d.data or {}).get("gb_ids")
        if gb_ids:
            message = message.removesuffix(f" [{', '.join(gb_ids)}]")
        rows.append((str(d.code), d.range.start.line + 1, d.range.start.character + 1, message))
    return sorted(rows)


@pytest.mark.asyncio
async def test_every_open_file_shows_what_check_reports(client: LanguageClient, project: Path):
    expected = _checked(project)
    files = sorted(path for path in project.rglob("*.py") if "__pycache__" not in path.parts)
    assert len(expected) >= 5, "the project has findings to compare"
    for version, path in enumerate(files, start=1):
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=from_fs_path(str(path)), language_id="python", version=version, text=path.read_text(encoding="utf-8")
                )
            )
        )
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT_S
    while True:
        shown = {str(path): _shown(client.diagnostics.get(from_fs_path(str(path)), [])) for path in files}
        published = all(from_fs_path(str(path)) in client.diagnostics for path in files)
        wanted = {str(path): expected.get(str(path), []) for path in files}
        if published and shown == wanted:
            break
        if loop.time() > deadline:
            differ = {path: (shown[path], wanted[path]) for path in wanted if shown[path] != wanted[path]}
            raise AssertionError(f"server and check differ on {len(differ)} files: {differ}")
        await asyncio.sleep(0.2)
    assert sum(map(len, shown.values())) == sum(map(len, expected.values()))
