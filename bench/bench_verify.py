"""Measure torchlint's static findings against TorchDynamo on real third-party model code.

    python bench/bench_verify.py [--cache-dir DIR] [--jobs N] [--only NAME] [--json PATH]

Installs pinned model libraries outside the repository, runs the tiny models declared in
`real_models_targets.py` through `torchlint verify`, and reports breaks, findings, matches,
false positives, misses, precision and recall per library and per rule family.
"""

from __future__ import annotations

import argparse
import importlib.machinery
import json
import os
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

from _cache import REPO_ROOT, cache_dir
from torchlint.verify.compare import family_of, rule_for_gb_type
from torchlint.verify.report import score

TARGETS = Path(__file__).resolve().with_name("real_models_targets.py")
# The libraries whose code is measured.
LIBRARIES = ["transformers==4.57.1", "diffusers==0.35.2", "x-transformers==2.11.24"]
# The top-level package each installs, which names the library in the report.
LIBRARY_PACKAGES = [requirement.partition("==")[0].replace("-", "_") for requirement in LIBRARIES]
# Their runtime dependencies, as (requirement, import name). Everything is installed with
# --no-deps so that pip never resolves torch; a dependency the running Python already
# imports is left out.
DEPENDENCIES = [
    ("huggingface-hub==0.36.0", "huggingface_hub"),
    ("tokenizers==0.22.1", "tokenizers"),
    ("safetensors==0.6.2", "safetensors"),
    ("tqdm==4.67.1", "tqdm"),
    ("pillow==11.3.0", "PIL"),
    ("importlib-metadata==8.7.0", "importlib_metadata"),
    ("zipp==3.23.0", "zipp"),
    ("einops==0.8.1", "einops"),
    ("einx==0.3.0", "einx"),
    ("frozendict==2.4.6", "frozendict"),
    ("loguru==0.7.3", "loguru"),
    ("numpy==2.4.6", "numpy"),
    ("sympy==1.14.0", "sympy"),
    ("packaging==26.3", "packaging"),
    ("pyyaml==6.0.3", "yaml"),
    ("regex==2026.5.9", "regex"),
    ("requests==2.34.2", "requests"),
    # requests' own, which a fresh virtual environment does not have
    ("urllib3==2.7.0", "urllib3"),
    ("idna==3.13", "idna"),
    ("charset-normalizer==3.4.7", "charset_normalizer"),
    ("certifi==2026.5.20", "certifi"),
    ("filelock==4.2.11", "filelock"),
    ("fsspec==2026.9.0", "fsspec"),
    ("typing-extensions==4.15.0", "typing_extensions"),
]
# Written last, so an interrupted install is redone rather than trusted.
INSTALLED_MARKER = ".installed"
# Nothing may reach a model hub: every config is built in code.
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1"}


def missing_dependencies(site: Path) -> list[str]:
    # Look on the interpreter's own path only: the install folder may be on PYTHONPATH already.
    path = [p for p in sys.path if Path(p or ".").resolve() != site]
    find = importlib.machinery.PathFinder.find_spec
    return [requirement for requirement, module in DEPENDENCIES if find(module, path) is None]


def install(site: Path) -> float:
    """Install the libraries into ``site`` unless the same requirements are there already."""
    requirements = LIBRARIES + missing_dependencies(site)
    marker = site / INSTALLED_MARKER
    wanted = "\n".join(requirements) + "\n"
    if marker.is_file() and marker.read_text(encoding="utf-8") == wanted:
        return 0.0
    started = time.perf_counter()
    site.mkdir(parents=True, exist_ok=True)
    marker.unlink(missing_ok=True)
    command = [
        sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
        "--no-deps", "--upgrade", "--target", str(site),
        "-c", str(REPO_ROOT / "constraints.txt"), *requirements,
    ]
    print("installing:", " ".join(command), file=sys.stderr)
    subprocess.run(command, check=True)
    marker.write_text(wanted, encoding="utf-8")
    return time.perf_counter() - started


def run_verify(site: Path, output: Path, jobs: int, timeout: float, only: list[str]) -> dict:
    arguments = [f"{TARGETS}::{name}" for name in only] or [str(TARGETS)]
    command = [
        sys.executable, "-m", "torchlint", "verify", *arguments, "--output-format", "json",
        "-o", str(output), "--jobs", str(jobs), "--timeout", str(timeout), "--quiet",
    ]
    env = {**os.environ, **OFFLINE}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
    output.unlink(missing_ok=True)
    print("running:", " ".join(command), file=sys.stderr)
    # Exit 1 only says that findings and breaks disagree, which is what is measured here.
    completed = subprocess.run(command, env=env, cwd=REPO_ROOT)
    if not output.is_file():
        sys.exit(f"error: torchlint verify exited {completed.returncode} without writing {output}")
    return json.loads(output.read_text(encoding="utf-8"))


# -- the figures -------------------------------------------------------------------


def library_of(file: str | None, site: Path) -> str:
    if not file:
        return "unknown"
    path = Path(file).resolve()
    if site in path.parents:
        return path.relative_to(site).parts[0]
    return "targets" if path == TARGETS else "other"


def shown(file: str | None, site: Path) -> str | None:
    """A path relative to the install folder (so it starts with the library) or the repository."""
    if not file:
        return file
    path = Path(file).resolve()
    for root in (site, REPO_ROOT):
        if root in path.parents:
            return str(path.relative_to(root))
    return str(path)


def where(item: dict, site: Path) -> str:
    return f"{shown(item['file'], site)}:{item['line']}" if item["file"] else "<unknown location>"


def tally(data: dict, site: Path) -> dict[str, dict[str, dict]]:
    """library -> family ("all" for every family) -> figures, as verify counts them overall."""
    # Breaks and findings are counted once, however many targets ran the line.
    # break -> the codes of the findings that matched it (empty: a miss)
    breaks: dict[tuple, list[str]] = {}
    matched: set[tuple] = set()
    for target in data["targets"]:
        for brk in target["breaks"]:
            key = (brk["file"], brk["line"], brk["gb_type"])
            breaks[key] = breaks.get(key) or list(brk["matched_by"])
        for finding in target["findings"]:
            if finding["matched"]:
                matched.add((finding["file"], finding["line"], finding["code"], finding["message"]))
    counts: dict[str, dict[str, dict[str, int]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(int)))
    # Every library gets a row, even one where nothing broke and nothing was reported.
    for library in [*LIBRARY_PACKAGES, "overall"]:
        counts[library]["all"]

    def add(file: str | None, family: str, what: str) -> None:
        for library in (library_of(file, site), "overall"):
            counts[library]["all"][what] += 1
            counts[library][family][what] += 1

    for (file, _, gb_type), codes in breaks.items():
        if codes:
            add(file, family_of(codes[0]), "covered")
        else:
            add(file, family_of(rule_for_gb_type(gb_type)), "misses")
    for file, _, code, _ in matched:
        add(file, family_of(code), "matched")
    for finding in data["false_positives"]:
        add(finding["file"], family_of(finding["code"]), "false_positives")
    # The libraries first, then "targets", "other" and "unknown", then the overall figures.
    order = {name: rank for rank, name in enumerate([*LIBRARY_PACKAGES, "targets", "other", "unknown", "overall"])}
    return {
        library: {
            family: score(*(counts[library][family][what] for what in ("matched", "false_positives", "covered", "misses")))
            for family in sorted(counts[library], key=lambda name: (name != "all", name))
        }
        for library in sorted(counts, key=lambda name: (order.get(name, len(order)), name))
    }


# -- the report --------------------------------------------------------------------


def fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def report(data: dict, figures: dict, site: Path, seconds: dict) -> str:
    lines = [
        f"torch {data['torch_version']} · device {data['device']} · backend {data['backend']}",
        "libraries: " + ", ".join(LIBRARIES),
        "",
        f"{'target':<22} {'seconds':>7} {'breaks':>6} {'findings':>8}  fullgraph",
    ]
    for target in data["targets"]:
        name = target["id"].rpartition("::")[2]
        if target["status"] != "ok":
            lines.append(f"{name:<22} error: {target['error']}")
            continue
        fullgraph = target["fullgraph"] or {}
        verdict = "compiles" if fullgraph.get("ok") else f"fails ({fullgraph.get('error')})"
        lines.append(
            f"{name:<22} {target['seconds'] or 0:>7.1f} {len(target['breaks']):>6} "
            f"{len(target['findings']):>8}  {verdict}"
        )
    lines += [
        "",
        f"{'library':<16} {'family':<6} {'breaks':>6} {'findings':>8} {'matched':>7} {'FP':>4} "
        f"{'misses':>6} {'precision':>9} {'recall':>6}",
    ]
    for library, families in figures.items():
        for family, s in families.items():
            lines.append(
                f"{library:<16} {family:<6} {s['breaks']:>6} {s['findings']:>8} {s['matched']:>7} "
                f"{s['false_positives']:>4} {s['misses']:>6} {fmt(s['precision']):>9} {fmt(s['recall']):>6}"
            )
    overall = figures.get("overall", {}).get("all")
    summary = {k: data["summary"][k] for k in ("breaks", "findings", "matched", "false_positives", "misses")}
    if overall and {k: overall[k] for k in summary} != summary:
        lines.append(f"note: verify's own summary counts differently: {summary}")
    lines += ["", "false positives (ran, reported, Dynamo did not break):"]
    lines += [f"  {where(f, site)}: {f['code']} {f['message']}"
              for f in data["false_positives"]] or ["  none"]
    lines += ["", "misses (Dynamo broke, nothing reported):"]
    lines += [
        f"  {where(m, site)}: {m['gb_type']} ({m['gb_id'] or 'no id'}; "
        f"{'rule ' + m['rule'] if m['rule'] else 'no rule'})"
        for m in data["misses"]
    ] or ["  none"]
    lines += traced_report(data, site)
    errors = [t for t in data["targets"] if t["status"] != "ok"]
    lines += [""] * bool(errors) + [f"error in {t['id']}: {t['error']}" for t in errors]
    lines += ["", "seconds: " + ", ".join(f"{k} {v:.1f}" for k, v in seconds.items())]
    return "\n".join(lines)


def traced_report(data: dict, site: Path) -> list[str]:
    """The rules apart from region inference: every function that ran counts as compiled."""
    traced = data.get("traced_regions")
    if not traced:
        return []
    lines = ["", "with every function that ran taken as compiled (the rules alone, without region inference):"]
    for family, s in {"all": traced["summary"], **traced["families"]}.items():
        lines.append(
            f"  {family:<6} {s['breaks']:>6} breaks {s['findings']:>4} findings {s['matched']:>4} matched "
            f"{s['false_positives']:>3} FP {s['misses']:>3} misses  precision {fmt(s['precision'])} "
            f"recall {fmt(s['recall'])}"
        )
    lines += [f"  false positive: {where(f, site)}: {f['code']} {f['message']}" for f in traced["false_positives"]]
    lines += [
        f"  miss: {where(m, site)}: {m['gb_type']} ({m['gb_id'] or 'no id'}; "
        f"{'rule ' + m['rule'] if m['rule'] else 'no rule'})"
        for m in traced["misses"]
    ]
    return lines


def relative_lists(data: dict, site: Path) -> dict:
    def located(item: dict) -> dict:
        return {**item, "library": library_of(item["file"], site), "file": shown(item["file"], site)}

    return {
        "false_positives": [located(f) for f in data["false_positives"]],
        "misses": [located(m) for m in data["misses"]],
        "targets": [
            {
                "name": t["id"].rpartition("::")[2],
                "status": t["status"],
                "error": t["error"],
                "seconds": t["seconds"],
                "fullgraph": t["fullgraph"],
                "breaks": [located(b) for b in t["breaks"]],
            }
            for t in data["targets"]
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache-dir", metavar="DIR", help="the install goes in DIR/site (default ~/.cache/torchlint-bench)")
    parser.add_argument("--jobs", type=int, default=1, help="verify worker processes (default 1)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds one target may take")
    parser.add_argument("--only", action="append", default=[], metavar="NAME", help="run only this target")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the figures to this file")
    options = parser.parse_args()

    site = cache_dir(options.cache_dir) / "site"
    started = time.perf_counter()
    seconds = {"install": install(site)}
    verify_started = time.perf_counter()
    data = run_verify(site, site.parent / "verify.json", options.jobs, options.timeout, options.only)
    seconds["verify"] = time.perf_counter() - verify_started
    seconds["total"] = time.perf_counter() - started
    figures = tally(data, site)
    print(report(data, figures, site, seconds))
    if options.json:
        result = {
            "torch_version": data["torch_version"],
            "libraries": LIBRARIES,
            "seconds": {k: round(v, 1) for k, v in seconds.items()},
            "summary": data["summary"],
            "by_library": figures,
            "traced_regions": data.get("traced_regions"),
            **relative_lists(data, site),
        }
        options.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
