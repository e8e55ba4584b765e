"""`torchlint server` in a real editor: headless Neovim runs the set-up docs/editors.md shows
(its start_client block and its fix-all-on-save block, with the server started by this test's
Python), opens a model file of a real project, and writes what it got to a JSON file. What
Neovim shows equals `torchlint check`; the quick fixes on a line include the noqa action; a
write applies the safe fixes."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pygls")

from editor_project import MODEL, checked, write_project  # noqa: E402

NVIM = shutil.which("nvim")
pytestmark = pytest.mark.skipif(NVIM is None, reason="needs Neovim (`nvim`) on PATH")

ROOT = Path(__file__).resolve().parents[1]
EDITORS = ROOT / "docs" / "editors.md"

# Neovim waits this long for the server's diagnostics and answers; the test waits a little
# longer for Neovim, then kills it.
WAIT_MS = 30_000
NVIM_TIMEOUT_S = 90

# Run after the model file is loaded: wait for the diagnostics, record them, ask for the code
# actions on the print line, write the buffer (fix-all on save), record what was written, quit.
# Whatever fails is recorded too, and Neovim always quits.
DRIVE = """\
local wait_ms = tonumber(os.getenv("TORCHLINT_NVIM_WAIT_MS"))

local function as_lsp(d)
  return {
    range = { start = { line = d.lnum, character = d.col }, ["end"] = { line = d.end_lnum, character = d.end_col } },
    severity = d.severity, code = d.code, source = d.source, message = d.message,
  }
end

local function drive()
  local result = { diagnostics = {}, actions = {} }
  vim.wait(wait_ms, function() return #vim.diagnostic.get(0) > 0 end, 50)
  local printing
  for _, d in ipairs(vim.diagnostic.get(0)) do
    table.insert(result.diagnostics, { lnum = d.lnum, col = d.col, code = d.code, source = d.source, message = d.message })
    if d.code == "TL101" then printing = d end
  end
  if printing then
    local params = {
      textDocument = { uri = vim.uri_from_bufnr(0) },
      range = as_lsp(printing).range,
      context = { diagnostics = { as_lsp(printing) } },
    }
    local responses = vim.lsp.buf_request_sync(0, "textDocument/codeAction", params, wait_ms)
    for _, response in pairs(responses or {}) do
      for _, action in ipairs(response.result or {}) do
        table.insert(result.actions, { title = action.title, kind = action.kind })
      end
    end
  end
  vim.cmd("write")
  return result
end

local ok, result = pcall(drive)
if not ok then result = { error = tostring(result) } end
local file = io.open(os.getenv("TORCHLINT_NVIM_OUT"), "w")
file:write(vim.fn.json_encode(result))
file:close()
vim.cmd("qa!")
"""


def _lua_blocks() -> list[str]:
    return re.findall(r"^```lua\n(.*?)^```$", EDITORS.read_text(encoding="utf-8"), re.MULTILINE | re.DOTALL)


def _documented_setup(python: str, init_options: str | None = None) -> str:
    """docs/editors.md's Neovim 0.7 block and its fix-all-on-save block, the server started
    by ``python`` (and given ``init_options``, a Lua table)."""
    (start,) = [block for block in _lua_blocks() if "vim.lsp.start_client" in block]
    (fix_all,) = [block for block in _lua_blocks() if "BufWritePre" in block]
    command = '{ "torchlint", "server" },'
    assert command in start, "docs/editors.md's start_client block starts `torchlint server`"
    ours = f'{{ [[{python}]], "-m", "torchlint", "server" }},'
    if init_options is not None:
        ours += f" init_options = {init_options},"
    return start.replace(command, ours) + "\n" + fix_all


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(tmp_path / "project")


def _neovim(project: Path, tmp_path: Path, path: Path, setup: str) -> dict:
    """Open ``path`` in headless Neovim with ``setup`` as its init.lua; what the driver recorded."""
    init = tmp_path / "init.lua"
    init.write_text(setup)
    drive = tmp_path / "drive.lua"
    drive.write_text(DRIVE)
    out = tmp_path / "neovim.json"
    home = tmp_path / "home"
    # Neovim's own files (log, state) under tmp_path, none of the user's configuration or plugins.
    env = {
        **os.environ,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_STATE_HOME": str(home / "state"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "TORCHLINT_NVIM_OUT": str(out),
        "TORCHLINT_NVIM_WAIT_MS": str(WAIT_MS),
    }
    command = [NVIM, "--headless", "-n", "-i", "NONE", "--noplugin", "-u", str(init), "-c", f"luafile {drive}", str(path)]
    run = subprocess.run(
        command, cwd=project, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=NVIM_TIMEOUT_S
    )
    assert out.exists(), f"Neovim wrote nothing (exit {run.returncode}): {run.stdout}{run.stderr}"
    result = json.loads(out.read_text())
    assert "error" not in result, result["error"]
    return result


def test_neovim_shows_what_check_reports_offers_noqa_and_fixes_on_save(project: Path, tmp_path: Path):
    model = project / "pkg" / "model.py"
    result = _neovim(project, tmp_path, model, _documented_setup(sys.executable))

    found = result["diagnostics"]
    # Neovim counts lines and columns from 0, check from 1 (the text is ASCII: bytes are characters)
    shown = sorted((d["code"], d["lnum"] + 1, d["col"] + 1) for d in found)
    assert shown == checked(project, model, MODEL)
    assert [code for code, _, _ in shown] == ["TL101", "TL201", "TL301", "TL505"]
    assert all(d["source"] == "torchlint" for d in found)
    assert all(re.search(r"\[GB\d{4}", d["message"]) for d in found), found

    titles = [action["title"] for action in result["actions"]]
    assert "TL101: add `# noqa: TL101`" in titles, titles
    assert any("(unsafe fix)" in title for title in titles), titles

    # The write ran fix-all first: the safe fix removed the explicit graph break, and only it.
    written = model.read_text()
    assert "graph_break" not in written
    assert "print(x.shape)" in written and "m.item()" in written


def test_neovim_sends_settings_that_select_what_is_shown_and_fixed(project: Path, tmp_path: Path):
    model = project / "pkg" / "model.py"
    setup = _documented_setup(sys.executable, init_options='{ settings = { ignore = { "TL505" } } }')
    result = _neovim(project, tmp_path, model, setup)

    shown = sorted((d["code"], d["lnum"] + 1, d["col"] + 1) for d in result["diagnostics"])
    assert shown == checked(project, model, MODEL, "--ignore", "TL505")
    assert [code for code, _, _ in shown] == ["TL101", "TL201", "TL301"]
    # What is not shown is not fixed either: the write leaves the graph break.
    assert model.read_text() == MODEL
