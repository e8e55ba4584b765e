"""The recorded ground truth: what Dynamo did on every target, kept so scoring needs no Dynamo run.

Per target: the graph breaks (file, line, GB type and id), the lines and instruction spans that
ran in measured code, whether it compiles with fullgraph=True, and how long it took. Paths are
relative to the install folder, so they start with the package and do not depend on the machine.
"""

from __future__ import annotations

import json
import os
import platform
import sys
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from _corpus import Library, declared_compiles, requirements
from torchlint.settings.config import ConfigResolver
from torchlint.verify.pool import WorkerPool
from torchlint.verify.run import Extra, VerifyOptions, run_targets

FORMAT = 1
# Nothing may reach a model hub: every config is built in code.
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1"}
# A reason is for people reading a miss; the whole of a long one says nothing more.
REASON_CHARS = 300


class TruthError(Exception):
    """The recorded truth cannot be used for this corpus; the message says what to run."""


@dataclass
class Truth:
    header: dict
    # target name -> its record
    targets: dict[str, dict]

    def for_libraries(self, names: set[str]) -> dict[str, dict]:
        return {name: target for name, target in self.targets.items() if target["library"] in names}


def load(path: Path) -> Truth:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TruthError(f"{path}: no recorded truth; run with --refresh to record it") from None
    except (OSError, ValueError) as error:
        raise TruthError(f"{path}: unreadable ({error}); run with --refresh to record it again") from None
    if data.get("format") != FORMAT:
        raise TruthError(f"{path}: format {data.get('format')}, this script reads {FORMAT}; run with --refresh")
    return Truth({k: v for k, v in data.items() if k != "targets"}, data["targets"])


def save(truth: Truth, path: Path) -> None:
    # One target per line keeps the file diffable; a temporary file keeps it whole if interrupted.
    fields = [f"  {json.dumps(key)}: {json.dumps(value, sort_keys=True)}" for key, value in sorted(truth.header.items())]
    entries = [f"    {json.dumps(name)}: {json.dumps(record, sort_keys=True)}" for name, record in sorted(truth.targets.items())]
    text = "{\n" + ",\n".join(fields) + ',\n  "targets": {\n' + ",\n".join(entries) + "\n  }\n}\n"
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


def stale_for(truth: Truth, libraries: list[Library]) -> list[str]:
    """Why the truth does not describe these libraries as the corpus pins them (empty: it does)."""
    problems = []
    recorded = truth.header.get("requirements", {})
    for library in libraries:
        pins = sorted(requirements([library]))
        if recorded.get(library.name) != pins:
            problems.append(f"{library.name}: recorded {recorded.get(library.name)}, the corpus pins {pins}")
    return problems


def record(
    libraries: list[Library],
    measured: set[str],
    site: Path,
    *,
    jobs: int,
    timeout: float,
    previous: Truth | None,
    only: list[str],
    overlay: Path | None = None,
    extra: Extra | None = None,
) -> Truth:
    """Run the libraries' targets (or just the ``only`` ones) through `torchlint verify`'s workers.

    ``measured``: the packages whose breaks and executed lines are kept, those of the whole
    corpus (one library's target runs another's code). Targets not run keep their records.
    ``overlay``: a folder imported before the site (a copy of some of its packages, fixed),
    whose files are recorded by their paths in it as if they were the site's. ``extra``: what
    to add to each target's request (`run_targets`).
    """
    env = {**os.environ, **OFFLINE}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(overlay or ""), str(site), env.get("PYTHONPATH")]))
    roots = [folder for folder in (overlay, site) if folder is not None]
    options = VerifyOptions(device="cpu", backend="eager", timeout=timeout, jobs=jobs)
    targets = dict(previous.targets) if previous is not None else {}
    torch_version = None
    for library in libraries:
        names = [n for n in declared_compiles(library) if n in only] if only else []
        if only and not names:
            continue
        arguments = [f"{library.targets_file}::{n}" for n in names] or [str(library.targets_file)]

        def progress(done: int, total: int, key: str, library: Library = library) -> None:
            print(f"[{done}/{total}] {library.name}: {key.rpartition('::')[2]}", file=sys.stderr, flush=True)

        # Fresh workers for each library: one library's patches to torch or to global state
        # (pyro's, for one) must not change what another's targets do.
        with WorkerPool(jobs, env=env) as pool:
            runs = run_targets(arguments, ConfigResolver(cwd=site), options, pool, progress, extra)
        torch_version = runs.torch_version or torch_version
        for key, response in runs.results:
            # A file whose targets could not be listed comes back under its own path.
            path, separator, name = key.rpartition("::")
            if not separator or not name:
                raise TruthError(f"{key}: cannot list its targets: {response.get('error')}")
            targets[name] = _target_record(library, response, roots, measured)
    header = dict(previous.header) if previous is not None else {}
    header.update(
        format=FORMAT,
        recorded=date.today().isoformat(),
        torch=torch_version,
        python=platform.python_version(),
        platform=f"{platform.system()} {platform.machine()}",
        device=options.device,
        backend=options.backend,
    )
    header.setdefault("requirements", {}).update({library.name: sorted(requirements([library])) for library in libraries})
    return Truth(header, targets)


def _relative(file: str | None, roots: list[Path]) -> str | None:
    if not file:
        return None
    path = Path(file)
    for root in roots:
        if path.is_relative_to(root):
            return path.relative_to(root).as_posix()
    return None


def _target_record(library: Library, response: dict, roots: list[Path], measured: set[str]) -> dict:
    def in_measured(relative: str | None) -> bool:
        return relative is not None and relative.split("/", 1)[0] in measured

    def measured_positions(positions: list) -> list[list]:
        relative = [[_relative(file, roots), line] for file, line in positions]
        return [position for position in relative if in_measured(position[0])]

    breaks = []
    outside = 0
    skipped_elsewhere = []
    for brk in response.get("breaks", []):
        relative = _relative(brk["file"], roots)
        skipped_at = measured_positions(brk.get("skipped_at", []))
        if not in_measured(relative):
            outside += 1
            skipped_elsewhere.extend(skipped_at)
            continue
        breaks.append({
            "file": relative, "line": brk["line"], "gb_type": brk["gb_type"], "gb_id": brk["gb_id"],
            "frame_skipped": brk["frame_skipped"], "reason": (brk.get("reason") or "")[:REASON_CHARS],
            "skipped_at": skipped_at,
        })
    executed = {}
    for file, lines in response.get("executed", {}).items():
        relative = _relative(file, roots)
        if in_measured(relative):
            executed[relative] = _ranges(lines)
    spans = {}
    for file, found in response.get("executed_spans", {}).items():
        relative = _relative(file, roots)
        if in_measured(relative):
            spans[relative] = sorted(found)
    kept = {key: response[key] for key in ("output_saved", "original_output") if key in response}
    return {
        **kept,
        "library": library.name,
        "status": response.get("status"),
        "error": response.get("error"),
        "seconds": round(response.get("seconds") or 0.0, 2),
        "fullgraph": response.get("fullgraph"),
        "outputs_match": response.get("outputs_match"),
        "breaks": sorted(breaks, key=lambda b: (b["file"], b["line"], b["gb_type"])),
        "breaks_outside": outside,
        "skipped_elsewhere": sorted(map(list, {tuple(position) for position in skipped_elsewhere})),
        "executed": executed,
        "spans": spans,
    }


def _ranges(lines: list[int]) -> str:
    """[1, 2, 3, 7, 9, 10] -> "1-3,7,9-10"."""
    parts: list[str] = []
    ordered = sorted(set(lines))
    start = previous = None
    for line in [*ordered, None]:
        if line is not None and previous is not None and line == previous + 1:
            previous = line
            continue
        if start is not None:
            parts.append(str(start) if start == previous else f"{start}-{previous}")
        start = previous = line
    return ",".join(parts)


def lines_of(ranges: str) -> set[int]:
    found: set[int] = set()
    for part in filter(None, ranges.split(",")):
        first, _, last = part.partition("-")
        found.update(range(int(first), int(last or first) + 1))
    return found


def response_of(record: dict, site: Path) -> dict:
    """A recorded target as verify's comparison reads a worker's response (absolute paths)."""
    return {
        "status": record["status"],
        "error": record["error"],
        "breaks": [
            {**b, "file": str(site / b["file"]), "skipped_at": [[str(site / f), line] for f, line in b.get("skipped_at", ())]}
            for b in record["breaks"]
        ],
        "skipped_elsewhere": [[str(site / f), line] for f, line in record.get("skipped_elsewhere", ())],
        "executed": {str(site / f): sorted(lines_of(r)) for f, r in record["executed"].items()},
        "executed_spans": {str(site / f): s for f, s in record["spans"].items()},
    }
