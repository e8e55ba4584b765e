"""The project the language server's tests open in an editor (pytest-lsp's client, headless
Neovim), and what `torchlint check` reports for its files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HELPERS = """\
import torch


def stats(x):
    return x.mean()
"""

MODEL = """\
import torch
from torch import nn

from .helpers import stats


class Net(nn.Module):
    def forward(self, x):
        print(x.shape)
        torch._dynamo.graph_break()
        m = stats(x)
        if m > 0:
            x = x * 2
        return x + m.item()
"""


def write_project(root: Path) -> Path:
    """A configured project whose package has a helper returning a tensor and a model using it."""
    package = root / "pkg"
    package.mkdir(parents=True)
    (root / "pyproject.toml").write_text("[tool.torchlint]\n")
    (package / "__init__.py").write_text("")
    (package / "helpers.py").write_text(HELPERS)
    (package / "model.py").write_text(MODEL)
    return root


def checked(project: Path, path: Path, text: str | None = None, *options: str) -> list[tuple[str, int, int]]:
    """What `torchlint check` reports for ``path`` (holding ``text`` where given), as
    (code, row, column)."""
    command = [sys.executable, "-m", "torchlint", "check", "--output-format", "json", "--no-cache", *options]
    if text is None:
        run = subprocess.run([*command, str(path)], cwd=project, capture_output=True, text=True, timeout=120)
    else:
        run = subprocess.run(
            [*command, "--stdin-filename", str(path), "-"], cwd=project, input=text, capture_output=True, text=True, timeout=120
        )
    return sorted((d["code"], d["location"]["row"], d["location"]["column"]) for d in json.loads(run.stdout))


async def start_session(client, project: Path, registrations: list | None = None, capabilities=None) -> None:
    """Initialise pytest-lsp's ``client`` on ``project`` as VS Code would (or with
    ``capabilities``); the capabilities the server registers go to ``registrations`` where given."""
    from lsprotocol import types
    from pygls.uris import from_fs_path
    from pytest_lsp import client_capabilities

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def _register(params: types.RegistrationParams) -> None:
        if registrations is not None:
            registrations.extend(params.registrations)

    uri = from_fs_path(str(project))
    await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities if capabilities is not None else client_capabilities("visual-studio-code"),
            root_uri=uri,
            workspace_folders=[types.WorkspaceFolder(uri=uri, name="project")],
        )
    )
