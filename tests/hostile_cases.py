"""The cases of the hostile-input sweep (`hostile_sweep`): one or more per reliability
item, and generated programs fixed whole."""

from __future__ import annotations

import os
import pwd
import random
import subprocess
import sys
from pathlib import Path

from hostile_sweep import FIXED_MARK, FORWARD_PRINT, Case, Outcome, Violation, files

NET = {"net.py": FORWARD_PRINT}
FINDING = r"^net\.py:6:9: TL101 "
FIX = ["check", "--fix", "--unsafe-fixes"]


def _also(*steps):
    def setup(root: Path) -> None:
        for step in steps:
            step(root)

    return setup


def _mode(name: str, mode: int):
    return lambda root: (root / name).chmod(mode)


def _fixed(name: str):
    def check(project: Path, outcome: Outcome) -> None:
        if FIXED_MARK not in (project / name).read_text():
            raise Violation(f"{name} was not fixed")

    return check


def _unchanged(name: str, text: str):
    def check(project: Path, outcome: Outcome) -> None:
        if (project / name).read_text() != text:
            raise Violation(f"{name} changed")

    return check


def _nobody_owns(name: str):
    def setup(root: Path) -> None:
        nobody = pwd.getpwnam("nobody")
        os.chown(root / name, nobody.pw_uid, nobody.pw_gid)
        (root / name).chmod(0o640)

    return setup


def _hard_link(name: str, other: str):
    return lambda root: os.link(root / name, root / other)


def _same_under_both(name: str, other: str):
    def check(project: Path, outcome: Outcome) -> None:
        if (project / name).read_bytes() != (project / other).read_bytes() or FIXED_MARK not in (project / name).read_text():
            raise Violation("the hard link was split or not fixed")

    return check


def _fifo(name: str):
    return lambda root: os.mkfifo(root / name)


def _symlinked_cache(root: Path) -> None:
    target = root.parent / "outside" / "cache-target"
    target.mkdir()
    (root / ".torchlint_cache").symlink_to(target)


def _fifo_in_cache(root: Path) -> None:
    # A first run makes the cache; its files are then swapped for pipes.
    subprocess.run([sys.executable, "-m", "torchlint", "check", "."], cwd=root, capture_output=True, timeout=120,
                   env={k: v for k, v in os.environ.items() if not k.startswith("TORCHLINT_")})
    for path in list((root / ".torchlint_cache").rglob("*")):
        if path.is_file() and path.suffix in (".entry", ".record"):
            path.unlink()
            os.mkfifo(path)


def _fake_torch(version: str):
    def setup(root: Path) -> None:
        site = root.parent / "outside" / "site"
        if site.exists():
            for old in site.iterdir():
                for inner in old.iterdir():
                    inner.unlink()
                old.rmdir()
        info = site / f"torch-{version}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n")

    return setup


SAVED = '"""Saved meanwhile."""\n' + FORWARD_PRINT
MANY_MODELS = FORWARD_PRINT + "".join(
    FORWARD_PRINT.split("\n\n\n", 1)[1].replace("class Net", f"class Net{i}") for i in range(150)
)


def _helpers(count: int):
    return files(**{f"helper_{i}.py": f"import torch\n\n\ndef helper_{i}(x):\n    return torch.relu(x)\n"
                    for i in range(count)})


def _fixed_once(name: str, guards: int):
    def check(project: Path, outcome: Outcome) -> None:
        if (project / name).read_text().count(FIXED_MARK) != guards:
            raise Violation(f"{name} was not fixed exactly once")

    return check


DEEPCOPY = "import copy\nimport torch\n\n\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        table = copy.deepcopy({'a': 1})\n        return x * table['a']\n"


def _data_module(size: int) -> str:
    row = "    [" + ", ".join(["0.123456"] * 12) + "],\n"
    return "import torch\n\nWEIGHTS = [\n" + row * (size // len(row)) + "]\nTABLE = torch.tensor(WEIGHTS)\n"


def _patch_applies(name: str):
    def check(project: Path, outcome: Outcome) -> None:
        copy = project.parent / "outside" / "patched.py"
        copy.write_bytes((project / name).read_bytes())
        applied = subprocess.run(["patch", "-s", str(copy)], input=outcome.stdout.encode("utf-8", "surrogateescape"),
                                 capture_output=True, timeout=60)
        if applied.returncode != 0 or FIXED_MARK not in copy.read_text():
            raise Violation(f"the diff does not apply: {applied.stdout!r} {applied.stderr!r}")
        copy.unlink()
        for leftover in copy.parent.glob("patched.py.*"):
            leftover.unlink()

    return check


def _non_utf8_name(root: Path) -> None:
    with open(os.path.join(os.fsencode(root), b"caf\xe9.py"), "w") as handle:
        handle.write(FORWARD_PRINT)


def _sarif_is_json(project: Path, outcome: Outcome) -> None:
    import json

    document = json.loads(outcome.stdout)
    uris = [result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for result in document["runs"][0]["results"]]
    if "caf%E9.py" not in uris:
        raise Violation(f"the file name is not in the report: {uris}")


def cases() -> list[Case]:
    """Every case of the sweep, item by item."""
    made_unreadable = Case("cached, then unreadable", 10, _mode("net.py", 0), ["check", "net.py"], (2,),
                           r"error: net\.py: permission denied", unprivileged=True)
    return [
        # 1-3: no server: nothing is handed to a socket (every run is audited for that).
        Case("a planted server is never reached", 1, files(**NET), ["check", "net.py"], (1,), FINDING),
        Case("a mode-000 file is not read", 2, _also(files(**NET, **{"locked.py": FORWARD_PRINT}), _mode("locked.py", 0)),
             ["check", "locked.py", "net.py"], (2,), r"error: locked\.py: permission denied", unprivileged=True),
        Case("a read-only folder is not written", 2,
             _also(files(**{"ro__net.py": FORWARD_PRINT}), _mode("ro", 0o555)),
             [*FIX, "ro/net.py"], (0,), r"\(1 fixed, 0 remaining\)", changes=("ro/net.py",), unprivileged=True,
             after=_fixed("ro/net.py")),
        # 4-6: what --fix writes.
        Case("fix writes the fixed file", 4, files(**NET), [*FIX, "net.py"], (0,), r"\(1 fixed, 0 remaining\)",
             changes=("net.py",), after=_fixed("net.py")),
        Case("a save between the check and the write wins", 4, files(**NET), [*FIX, "net.py"], (2,),
             r"error: net\.py: changed since it was checked; fixes not written", changes=("net.py",),
             env={"SWEEP_SAVE_BEFORE_WRITE": SAVED}, after=_unchanged("net.py", SAVED)),
        Case("two fixing runs at once", 5, _also(files(**{"model.py": MANY_MODELS}), _helpers(300)),
             [*FIX, "model.py"], (0, 2), "", changes=("model.py",), alongside=1, stagger=0.3,
             after=_fixed_once("model.py", 151),
             then=Case("the cache after two fixing runs", 5, files(), ["check", "model.py"], (0,), r"All checks passed")),
        Case("a read-only file is left alone", 6, _also(files(**NET), _mode("net.py", 0o444)), [*FIX, "net.py"], (2,),
             r"error: net\.py: read-only; fixes not written", after=_unchanged("net.py", FORWARD_PRINT)),
        Case("a hard-linked file is fixed under both names", 6, _also(files(**NET), _hard_link("net.py", "twin.py")),
             [*FIX, "net.py"], (0,), r"\(1 fixed, 0 remaining\)", changes=("net.py", "twin.py"),
             after=_same_under_both("net.py", "twin.py")),
        Case("another user's file keeps its owner", 6, _also(files(**NET), _nobody_owns("net.py")), [*FIX, "net.py"],
             (0,), r"\(1 fixed, 0 remaining\)", changes=("net.py",), root_only=True, after=_fixed("net.py")),
        # 7: a report never overwrites an input.
        Case("-o naming an input", 7, files(**NET), ["check", "-o", "net.py", "net.py"], (2,),
             r"is one of the files checked", after=_unchanged("net.py", FORWARD_PRINT)),
        # 8: --diff.
        Case("--diff with a form feed and U+2028", 8,
             files(**{"net.py": FORWARD_PRINT.replace("import torch\n", "import torch\n\x0c\n# a\u2028b\n")}),
             ["check", "--diff", "--unsafe-fixes", "net.py"], (1,), r"Would fix 1 finding", after=_patch_applies("net.py")),
        Case("--diff on a binary file", 8, files(**{"blob.py": b"import torch\0\n"}), ["check", "--diff", "blob.py"],
             (2,), r"error: blob\.py: binary file"),
        # 9: the installed torch is part of the cache's key.
        Case("torch 2.11, then 2.13", 9, _also(files(**{"net.py": DEEPCOPY}), _fake_torch("2.11.0")),
             ["check", "net.py"], (1,), r"TL503", env={"PYTHONPATH": "{top}/outside/site"},
             then=Case("upgraded", 9, _fake_torch("2.13.0"), ["check", "net.py"], (0,), r"All checks passed",
                       env={"PYTHONPATH": "{top}/outside/site"})),
        # 10: a file made unreadable after a cached run.
        Case("a cached run", 10, files(**NET), ["check", "net.py"], (1,), FINDING, then=made_unreadable),
        # 11: the cache folder as found.
        Case("a cache folder that is a link", 11, _also(files(**NET), _symlinked_cache), ["check", "net.py"], (1,),
             r"warning: \.torchlint_cache is a symbolic link; the cache is not used"),
        Case("pipes in place of cache files", 11, _also(files(**NET), _fifo_in_cache), ["check", "net.py"], (1,),
             FINDING),
        # 12: a file too large to parse.
        Case("a 5 MB data module", 12, files(**NET, **{"weights.py": _data_module(5_000_000)}), ["check", "."], (2,),
             r"error: weights\.py: not checked: 5\.0 MB is over", max_seconds=10, max_peak_mib=1024),
        # 13: deep code, and Ctrl-C while libcst is busy.
        Case("a chain CPython refuses", 13, files(**NET, **{"deep.py": "import torch\nx = a" + "[0]" * 3100 + "\n"}),
             ["check", "."], (1,), r"deep\.py:1:1: TL901 .*nested deeper than Python can compile"),
        Case("Ctrl-C during a long parse", 13, files(**{"deep.py": "import torch\nx = a" + "[0]" * 2900 + "\n"}),
             ["check", "deep.py"], (130,), signal_after=2.0, max_seconds=2.0),
        # 14: what used to end in an internal error.
        Case("a file name that is not UTF-8, as SARIF", 14, _non_utf8_name, ["check", "--output-format", "sarif", "."],
             (1,), r'"version": "2\.1\.0"', after=_sarif_is_json),
        Case("--stdin-filename in a folder that does not exist", 14, files(), ["check", "--stdin-filename",
             "newdir/x.py", "-"], (1,), r"newdir/x\.py:6:9: TL101", stdin=FORWARD_PRINT.encode()),
        Case("a TOML file nested 5,000 deep", 14,
             files(**NET, **{"pyproject.toml": "[tool.torchlint]\nx = " + "[" * 5000 + "]" * 5000 + "\n"}),
             ["check", "net.py"], (2,), r"invalid TOML"),
        Case("a pipe as --config", 14, _also(files(**NET), _fifo("conf.toml")), ["check", "--config", "conf.toml",
             "net.py"], (2,), r"not a regular file \(a named pipe\)"),
        Case("a pipe as a source file", 14, _also(files(**NET), _fifo("pipe.py")), ["check", "pipe.py", "net.py"], (2,),
             r"error: pipe\.py: not a regular file \(a named pipe\)"),
    ]


def generated_cases(count: int, seed: int = 0) -> list[Case]:
    """Projects of generated model files, fixed whole: every fix compiles, every other file
    stays as it was, and a second run finds nothing more to fix."""
    from test_fix_properties import generated_model

    made = []
    for number in range(count):
        rng = random.Random(seed * 100_003 + number)
        models = {f"model_{i}.py": generated_model(rng.randrange(1 << 30)) for i in range(rng.randint(1, 4))}
        bystanders = {"notes.txt": "kept\n", "clean.py": "def add(a, b):\n    return a + b\n"}
        made.append(Case(
            f"generated project {number}", 0, files(**models, **bystanders), [*FIX, "."], (0, 1), "",
            changes=tuple(models), then=Case(f"generated project {number}, again", 0, files(), [*FIX, "--diff", "."],
                                             (0,), r"No fixes to apply"),
        ))
    return made
