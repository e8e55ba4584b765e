"""The command line, run as a user runs it: a real process over real files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import BAD_FORWARD, without_root_privileges
from sarif_schema import assert_valid_sarif

CLEAN = "import torch\n\n\ndef add(x):\n    return x + 1\n"


def run(*args: str, cwd: Path, stdin: bytes | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    full_env = {**os.environ, **(env or {})}
    full_env.pop("TORCHLINT_OUTPUT_FORMAT", None) if not env or "TORCHLINT_OUTPUT_FORMAT" not in env else None
    return subprocess.run(
        [sys.executable, "-m", "torchlint", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        env=full_env,
        timeout=120,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "net.py").write_text(BAD_FORWARD)
    (tmp_path / "pkg" / "clean.py").write_text(CLEAN)
    return tmp_path


def test_findings_exit_1_in_concise_format(project: Path) -> None:
    result = run("check", "pkg", cwd=project)
    assert result.returncode == 1
    assert result.stdout.decode().splitlines() == [
        "pkg/net.py:7:9: TL101 `print()` in compiled code breaks the graph (Dynamo cannot trace the builtin); "
        "guard it with `torch.compiler.is_compiling()` or move it out"
    ]
    assert "Found 1 finding in 1 file." in result.stderr.decode()


def test_shorthand_and_default_path(project: Path) -> None:
    assert run("pkg", cwd=project).stdout == run("check", "pkg", cwd=project).stdout
    assert run(cwd=project).stdout == run("check", ".", cwd=project).stdout


def test_clean_exit_0_and_exit_zero(project: Path) -> None:
    clean = run("pkg/clean.py", cwd=project)
    assert clean.returncode == 0 and clean.stdout == b""
    assert "All checks passed!" in clean.stderr.decode()
    assert run("--exit-zero", "pkg", cwd=project).returncode == 0


def test_quiet_prints_findings_only(project: Path) -> None:
    result = run("-q", "pkg", cwd=project)
    assert result.returncode == 1 and result.stderr == b"" and b"TL101" in result.stdout


def test_selection_options(project: Path) -> None:
    assert run("--select", "TL9", "pkg", cwd=project).returncode == 0
    assert run("--ignore", "TL101", "pkg", cwd=project).returncode == 0
    assert run("--select", "TL9", "--extend-select", "TL101", "pkg", cwd=project).returncode == 1
    bad = run("--select", "TL77", "pkg", cwd=project)
    assert bad.returncode == 2 and b"unknown rule selector `TL77`" in bad.stderr


def test_unknown_option_is_a_usage_error(project: Path) -> None:
    assert run("--no-such-option", "pkg", cwd=project).returncode == 2


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_json_and_sarif_from_option_and_environment(project: Path, fmt: str) -> None:
    by_option = run("--output-format", fmt, "pkg", cwd=project)
    by_env = run("pkg", cwd=project, env={"TORCHLINT_OUTPUT_FORMAT": fmt})
    assert by_option.stdout == by_env.stdout
    document = json.loads(by_option.stdout)
    if fmt == "json":
        (finding,) = document
        assert finding["code"] == "TL101" and finding["location"] == {"row": 7, "column": 9}
        assert finding["filename"] == str(project / "pkg" / "net.py")
        assert finding["noqa_row"] == 7
    else:
        assert_valid_sarif(document)
        assert document["version"] == "2.1.0"
        (result,) = document["runs"][0]["results"]
        assert result["ruleId"] == "TL101"


def test_github_and_full_formats(project: Path) -> None:
    github = run("--output-format", "github", "pkg", cwd=project).stdout.decode()
    assert github.startswith("::error title=torchlint (TL101),file=pkg/net.py,line=7,col=9,")
    full = run("--output-format", "full", "pkg", cwd=project).stdout.decode()
    assert '    print("x", x.shape)' in full and "^^^" in full and "help:" in full


def test_output_file(project: Path) -> None:
    result = run("-o", "report.json", "--output-format", "json", "pkg", cwd=project)
    assert result.returncode == 1 and result.stdout == b""
    assert json.loads((project / "report.json").read_text())[0]["code"] == "TL101"


def test_statistics(project: Path) -> None:
    (project / "pkg" / "more.py").write_text(BAD_FORWARD.replace("class Net", "class Other"))
    result = run("--statistics", "pkg", cwd=project)
    assert result.returncode == 1
    assert result.stdout.decode().split() == ["2", "TL101", "print-in-compiled-code"]
    # Fixable once unsafe fixes are on: marked as ruff marks it.
    unsafe = run("--statistics", "--unsafe-fixes", "pkg", cwd=project)
    assert unsafe.stdout.decode() == "2\tTL101\t[*] print-in-compiled-code\n"
    as_json = json.loads(run("--statistics", "--unsafe-fixes", "--output-format", "json", "pkg", cwd=project).stdout)
    assert as_json == [{"code": "TL101", "name": "print-in-compiled-code", "count": 2, "fixable": True}]


def test_stdin_for_editors(project: Path) -> None:
    named = run("--stdin-filename", "pkg/buffer.py", cwd=project, stdin=BAD_FORWARD.encode())
    assert named.returncode == 1
    assert named.stdout.decode().startswith("pkg/buffer.py:7:9: TL101")
    dash = run("check", "-", cwd=project, stdin=BAD_FORWARD.encode())
    assert dash.returncode == 1 and dash.stdout.decode().startswith("-:7:9: TL101")
    clean = run("-", cwd=project, stdin=CLEAN.encode())
    assert clean.returncode == 0


def test_force_exclude_for_explicit_files(project: Path) -> None:
    (project / "torchlint.toml").write_text('extend-exclude = ["pkg/net.py"]\n')
    assert run("pkg/net.py", cwd=project).returncode == 1  # named explicitly: checked
    assert run("pkg", cwd=project).returncode == 0  # walked: excluded
    assert run("--force-exclude", "pkg/net.py", cwd=project).returncode == 0
    stdin = run("--force-exclude", "--stdin-filename", "pkg/net.py", cwd=project, stdin=BAD_FORWARD.encode())
    assert stdin.returncode == 0 and stdin.stdout == b""


def test_show_files(project: Path) -> None:
    (project / "build").mkdir()
    (project / "build" / "gen.py").write_text(CLEAN)
    result = run("--show-files", cwd=project)
    assert result.returncode == 0
    assert result.stdout.decode().splitlines() == ["pkg/clean.py", "pkg/net.py"]


def test_config_error_exits_2_naming_file_and_key(project: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.torchlint]\nselct = []\n")
    result = run("pkg", cwd=project)
    assert result.returncode == 2
    assert "pyproject.toml" in result.stderr.decode() and "`selct`" in result.stderr.decode()
    assert b"Traceback" not in result.stderr


def test_syntax_error_is_a_finding_and_the_run_goes_on(project: Path) -> None:
    (project / "pkg" / "broken.py").write_text("import torch\ndef f(:\n    pass\n")
    result = run("pkg", cwd=project)
    lines = result.stdout.decode().splitlines()
    assert result.returncode == 1
    assert any(line.startswith("pkg/broken.py:2:") and "TL901" in line for line in lines)
    assert any("pkg/net.py:7:9: TL101" in line for line in lines)


def _bad_inputs(project: Path) -> dict[str, str]:
    pkg = project / "pkg"
    (pkg / "binary.py").write_bytes(b"\x00\x01torch\x02")
    (pkg / "latin.py").write_bytes("import torch\nname = 'caf\xe9'\n".encode("latin-1"))
    (pkg / "dangling.py").symlink_to(project / "missing.py")
    (pkg / "folder.py").mkdir()
    return {
        "pkg/binary.py": "binary",
        "pkg/latin.py": "decode",
        "pkg/dangling.py": "broken symbolic link",
    }


def test_unreadable_files_get_one_line_errors_and_exit_2(project: Path) -> None:
    expected = _bad_inputs(project)
    result = run("pkg", cwd=project)
    stderr = result.stderr.decode()
    assert result.returncode == 2
    assert "Traceback" not in stderr
    for path, cause in expected.items():
        (line,) = [line for line in stderr.splitlines() if path in line]
        assert line.startswith("error: ") and cause in line
    # the readable files were still checked
    assert "pkg/net.py:7:9: TL101" in result.stdout.decode()


def test_directory_named_like_a_python_file(project: Path) -> None:
    (project / "pkg" / "folder.py").mkdir()
    result = run("pkg/folder.py", "pkg/net.py", cwd=project)
    assert result.returncode == 2
    assert "pkg/folder.py" in result.stderr.decode() and "directory" in result.stderr.decode()
    assert "pkg/net.py:7:9: TL101" in result.stdout.decode()


def test_permission_denied(project: Path) -> None:
    locked = project / "pkg" / "locked.py"
    locked.write_text(BAD_FORWARD)
    locked.chmod(0)
    result = subprocess.run(
        [*without_root_privileges(), sys.executable, "-m", "torchlint", "pkg"],
        cwd=project, capture_output=True, timeout=120,
    )
    assert result.returncode == 2 and "permission denied" in result.stderr.decode()
    assert "pkg/net.py:7:9: TL101" in result.stdout.decode()


def test_missing_path(project: Path) -> None:
    result = run("nowhere.py", "pkg", cwd=project)
    assert result.returncode == 2 and "nowhere.py" in result.stderr.decode()


def test_rules_and_rule_pages(project: Path) -> None:
    listing = run("rules", cwd=project).stdout.decode()
    assert "TL101  print-in-compiled-code" in listing
    table = json.loads(run("rules", "--output-format", "json", cwd=project).stdout)
    assert {"code": "TL101", "gb_ids": ["GB0059"]}.items() <= next(r for r in table if r["code"] == "TL101").items()
    page = run("rule", "tl101", cwd=project)
    assert page.returncode == 0 and page.stdout.decode().startswith("# TL101")
    assert run("rule", "print-in-compiled-code", cwd=project).stdout == page.stdout
    unknown = run("rule", "TL999", cwd=project)
    assert unknown.returncode == 2 and b"unknown rule `TL999`" in unknown.stderr
    typo = run("rule", "print-in-compiled-cod", cwd=project)
    assert typo.returncode == 2 and b"did you mean `TL101` (print-in-compiled-code)?" in typo.stderr


def test_version(project: Path) -> None:
    from torchlint import __version__

    assert run("--version", cwd=project).stdout.decode().strip().endswith(__version__)


def test_check_never_imports_torch(project: Path) -> None:
    probe = (
        "import sys\n"
        "from torchlint.cli import cli\n"
        "try:\n"
        "    cli(['check', 'pkg'])\n"
        "except SystemExit as done:\n"
        "    assert done.code == 1, done.code\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
        "print('ok')\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], cwd=project, capture_output=True, timeout=120)
    assert result.stdout.decode().strip().endswith("ok"), result.stderr.decode()


UNSAFE_ONLY = b'import torch\n\n\n@torch.compile\ndef step(x):\n    print("x", x.shape)\n    return x * 2\n'


def test_diff_says_how_many_fixes_unsafe_fixes_would_add(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_bytes(UNSAFE_ONLY)
    hidden = "No fixes to apply (1 hidden fix can be enabled with the `--unsafe-fixes` option)."
    plain = run("check", "--diff", "--no-cache", "m.py", cwd=tmp_path)
    assert (plain.returncode, plain.stdout) == (0, b"")
    assert hidden in plain.stderr.decode()
    piped = run("check", "--diff", "--no-cache", "-", "--stdin-filename", "m.py", cwd=tmp_path, stdin=UNSAFE_ONLY)
    assert hidden in piped.stderr.decode()
    unsafe = run("check", "--diff", "--unsafe-fixes", "--no-cache", "m.py", cwd=tmp_path)
    assert unsafe.returncode == 1 and b"+++ m.py" in unsafe.stdout
    assert "Would fix 1 finding." in unsafe.stderr.decode() and "hidden" not in unsafe.stderr.decode()


def test_server_without_pygls_says_which_extra_to_install(tmp_path: Path) -> None:
    # pygls made unimportable, as on an install without the `server` extra
    code = "import sys; sys.modules['pygls'] = None; sys.argv = ['torchlint', 'server']; from torchlint.cli import main; main()"
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert run.returncode == 2
    assert "pip install 'torchlint[server]'" in run.stderr
    assert run.stdout == ""
