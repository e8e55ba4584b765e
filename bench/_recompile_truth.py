"""The recompile benchmark's recorded truth: what `torchlint verify --recompiles` saw for every case,
per backend, kept in `recompile_truth.json` so that scoring needs no Dynamo run.

Per case: the frames Dynamo compiled (file, function, first and last line, compiles, recompiles,
limit hit, each failing guard with the user line it names), whether the outputs differed from an
eager run of the same calls, whether nothing was compiled, the events verify derives from them,
the functions the case compiles (verify's entry points) and the lines of user code that ran when
the calls were made eagerly (verify's `executed`, which its JSON report leaves out: a cause such as
`model.epoch = epoch` runs between the calls). Paths are relative:
to the install folder for libraries, to the repository for the case files, to `site-packages`
for torch.

Run as a script (`python _recompile_truth.py FILE::TARGET ...`) it lists, for each case, the
functions it compiles and the lines of user code its calls ran, compiling nothing.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path

from _cache import REPO_ROOT
from _recompile_corpus import Case
from _truth import OFFLINE, _ranges, lines_of

FORMAT = 1
# A guard's text is for people reading a miss; its whole hint says nothing more.
GUARD_CHARS = 200


class RecompileTruthError(Exception):
    """The recorded truth cannot be used; the message says what to run."""


def load(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RecompileTruthError(f"{path}: no recorded truth; run with --record") from None
    except (OSError, ValueError) as error:
        raise RecompileTruthError(f"{path}: unreadable ({error}); run with --record") from None
    if data.get("format") != FORMAT:
        raise RecompileTruthError(f"{path}: format {data.get('format')}, this script reads {FORMAT}; run with --record")
    return data


def save(truth: dict, path: Path) -> None:
    # One case per line keeps the file diffable; a temporary file keeps it whole if interrupted.
    header = {key: value for key, value in truth.items() if key != "backends"}
    lines = [f"  {json.dumps(key)}: {json.dumps(value, sort_keys=True)}," for key, value in sorted(header.items())]
    lines.append('  "backends": {')
    backends = truth.get("backends", {})
    for index, (backend, run) in enumerate(sorted(backends.items())):
        lines.append(f"    {json.dumps(backend)}: {{")
        for key, value in sorted((k, v) for k, v in run.items() if k != "cases"):
            lines.append(f"      {json.dumps(key)}: {json.dumps(value, sort_keys=True)},")
        cases = sorted(run.get("cases", {}).items())
        lines.append('      "cases": {')
        lines += [f"        {json.dumps(name)}: {json.dumps(record, sort_keys=True)}{',' * (i < len(cases) - 1)}"
                  for i, (name, record) in enumerate(cases)]
        lines.append("      }")
        lines.append("    }" + "," * (index < len(backends) - 1))
    lines.append("  }")
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text("{\n" + "\n".join(lines) + "\n}\n", encoding="utf-8")
    os.replace(temporary, path)


def relative(path: str | None, site: Path) -> str | None:
    """A path as the truth keeps it: relative to the install folder, the repository, or
    `site-packages` (torch); as it is otherwise (`<string>`, the standard library)."""
    if not path:
        return None
    real = os.path.realpath(path)
    for root in (site, REPO_ROOT):
        root_real = os.path.realpath(root)
        if real.startswith(root_real + os.sep):
            return real[len(root_real) + 1:]
    marker = f"{os.sep}site-packages{os.sep}"
    return real.rpartition(marker)[2] if marker in real else real


def absolute(path: str | None, site: Path) -> str | None:
    """The inverse of `relative` for the files scoring lints: the install folder's and the
    repository's; others stay as recorded (they are never linted)."""
    if not path or os.path.isabs(path) or path.startswith("<"):
        return path
    if (REPO_ROOT / path).is_file():
        return str(REPO_ROOT / path)
    if (site / path).is_file():
        return str(site / path)
    return path


def _environment(site: Path) -> dict[str, str]:
    env = {**os.environ, **OFFLINE}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
    env.pop("TORCH_COMPILE_JOB_ID", None)
    return env


def _arguments(cases: list[Case], every: dict[Path, int]) -> list[str]:
    """Whole files where every case of a file is asked for, `file::target` otherwise."""
    asked: dict[Path, list[str]] = {}
    for case in cases:
        asked.setdefault(case.file, []).append(case.target)
    arguments = []
    for file, targets in sorted(asked.items()):
        if len(targets) == every[file]:
            arguments.append(str(file))
        else:
            arguments += [f"{file}::{target}" for target in targets]
    return arguments


def _case_id(key: str) -> str:
    path, _, target = key.rpartition("::")
    return f"{Path(path).name}::{target}"


def _frame(frame: dict, site: Path) -> dict:
    kept = {key: frame[key] for key in ("function", "first_line", "last_line", "compiles", "recompiles", "graphs",
                                        "failed", "limit_hit", "user")}
    guards = [{"attempt": g["attempt"], "guard": g["guard"][:GUARD_CHARS], "file": relative(g["file"], site),
               "line": g["line"]} for g in frame.get("guards", [])]
    return {"file": relative(frame["file"], site), **kept, "guards": guards}


def _event(event: dict, site: Path) -> dict:
    frame = event.get("frame")
    return {
        "kind": event["kind"],
        "file": relative(event.get("file"), site),
        "line": event.get("line"),
        "sites": [[relative(file, site), line] for file, line in event.get("sites", [])],
        "frame": None if frame is None else {**frame, "file": relative(frame["file"], site)},
        "recompiles": event.get("recompiles"),
        "limit_hit": event.get("limit_hit"),
    }


def record(
    cases: list[Case], every: dict[Path, int], site: Path, measured: Callable[[str], bool], *, backend: str, jobs: int,
    timeout: float,
) -> dict:
    """Run `torchlint verify --recompiles` on the cases under ``backend``; one backend's record.
    ``measured``: whether a file's executed lines are kept (case files, the corpus libraries)."""
    env = _environment(site)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="torchlint-recompiles-") as folder:
        report = Path(folder) / "report.json"
        command = [sys.executable, "-m", "torchlint", "verify", "--recompiles", "--output-format", "json",
                   "--output-file", str(report), "--backend", backend, "--jobs", str(jobs), "--timeout", str(timeout),
                   *_arguments(cases, every)]
        print(f"recording {len(cases)} cases under {backend}", file=sys.stderr, flush=True)
        done = subprocess.run(command, env=env, cwd=REPO_ROOT, check=False)
        # 1: findings and runs disagree; 2: a case failed (kept in the truth with its error).
        if done.returncode not in (0, 1, 2) or not report.is_file():
            raise RecompileTruthError(f"torchlint verify --recompiles exited {done.returncode}")
        verified = json.loads(report.read_text(encoding="utf-8"))
    seconds = time.perf_counter() - started
    listed = list_calls(cases, site, measured)
    records = {}
    for target in verified["targets"]:
        name = _case_id(target["id"])
        records[name] = {
            "status": target["status"],
            "error": target.get("error"),
            "seconds": round(target.get("seconds") or 0.0, 2),
            "calls": target.get("calls"),
            "outputs_match": target.get("outputs_match"),
            "compiled_nothing": target.get("compiled_nothing"),
            "frames": [_frame(frame, site) for frame in target.get("frames", [])],
            "events": [_event(event, site) for event in target.get("events", [])],
            **listed.get(name, {"compiled": [], "executed": {}}),
        }
    return {"recorded": date.today().isoformat(), "seconds": round(seconds, 1), "jobs": jobs,
            "torch": verified.get("torch_version"), "cases": records}


def header(truth: dict, requirements: dict[str, list[str]]) -> dict:
    return {**truth, "format": FORMAT, "python": platform.python_version(),
            "platform": f"{platform.system()} {platform.machine()}", "device": "cpu", "requirements": requirements}


def list_calls(cases: list[Case], site: Path, measured: Callable[[str], bool]) -> dict[str, dict]:
    """For each case, the functions it compiles and the lines of user code its calls ran, from
    this file run as a script in a fresh Python."""
    command = [sys.executable, str(Path(__file__)), *(f"{case.file}::{case.target}" for case in cases)]
    done = subprocess.run(command, env=_environment(site), cwd=REPO_ROOT, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RecompileTruthError(f"listing what the cases compile failed:\n{done.stderr[-3000:]}")
    found = json.loads(done.stdout.strip().splitlines()[-1])
    return {name: {"compiled": entry["compiled"],
                   "executed": {relative(file, site): _ranges(lines) for file, lines in entry["lines"].items()
                                if measured(file)}}
            for name, entry in found.items()}


def executed_lines(record: dict, site: Path) -> dict[str, set[int]]:
    return {absolute(file, site): lines_of(ranges) for file, ranges in record.get("executed", {}).items()}


def _list(arguments: list[str]) -> dict:
    """Each case's calls made eagerly (`force_eager`), as verify's eager run makes them: the
    compiled callables' names, and the lines of user code (neither torch nor the standard
    library) that ran, between the calls and inside them."""
    import importlib.util

    import torch

    import torchlint
    from torchlint.verify.breaks import is_user_file
    from torchlint.verify.targets import calls_of
    from torchlint.verify.worker import _compiled_function, _seed_everything

    folder = str(Path(arguments[0].partition("::")[0]).resolve().parent) if arguments else ""
    sys.path.insert(0, folder)
    # torchlint's own code (the calls' plumbing) is no user code of the case.
    own = os.path.dirname(os.path.realpath(torchlint.__file__)) + os.sep
    user: dict[str, bool] = {}
    found = {}
    for index, argument in enumerate(arguments):
        path, _, name = argument.partition("::")
        path = os.path.realpath(path)
        spec = importlib.util.spec_from_file_location(f"_recompile_case_{index}", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        _seed_everything()
        spec.loader.exec_module(module)
        lines: dict[str, set[int]] = {}

        def tracer(frame, event, arg, lines=lines):
            filename = frame.f_code.co_filename
            if filename not in user:
                user[filename] = is_user_file(filename) and not os.path.realpath(filename).startswith(own)
            if not user[filename]:
                return None
            rows = lines.setdefault(os.path.realpath(filename), set())
            rows.add(frame.f_lineno)

            def local(frame, event, arg):
                if event == "line":
                    rows.add(frame.f_lineno)
                return local

            return local

        compiled = []
        _seed_everything()
        with torch.compiler.set_stance("force_eager"):
            sys.settrace(tracer)
            try:
                for fn, args, kwargs in calls_of(module.torchlint_targets()[name]):
                    compiled.append(_compiled_function(fn))
                    fn(*args, **kwargs)
            finally:
                sys.settrace(None)
        found[f"{Path(path).name}::{name}"] = {
            "compiled": sorted({qualname for qualname in compiled if qualname}),
            "lines": {file: sorted(rows) for file, rows in lines.items()},
        }
        sys.modules.pop(spec.name, None)
    return found


if __name__ == "__main__":
    print(json.dumps(_list(sys.argv[1:])))
