"""Static findings scored against the recorded truth: per break site, per target, per library,
per rule family, and per half of the corpus.

A break site is a line of measured code where Dynamo broke; a line that breaks in several
targets counts once. A finding is exercised when code inside it ran in some target: it is matched
when a break lies in its statement (for TL6xx, in its block) in a target that ran it, and a
false positive otherwise; a TL6xx finding never covers a site itself. Findings on code no target ran are unexercised: nothing
says whether they break, so they are counted apart.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from _corpus import Library
from _truth import response_of
from torchlint.settings.config import ConfigResolver, Settings
from torchlint.report.diagnostic import Diagnostic
from torchlint.run.runner import check_files
from torchlint.verify.compare import compare, family_of, rule_for_gb_type
from torchlint.verify.run import lint_work as verify_lint_work, with_packages
from torchlint.verify.traced import functions_that_ran
from torchlint.analysis.engine import module_name


# Break placement: findings about the breaks inside a loop, `try` or `with` block.
PLACEMENT = "TL6"


@dataclass
class Site:
    file: str  # relative to the install folder
    line: int
    gb_types: set[str] = field(default_factory=set)
    gb_ids: set[str] = field(default_factory=set)
    targets: set[str] = field(default_factory=set)
    matched_by: list[str] = field(default_factory=list)

    @property
    def family(self) -> str:
        if self.matched_by:
            return family_of(self.matched_by[0])
        return family_of(self.rule)

    @property
    def rule(self) -> str | None:
        """The rule that should have fired: the first that names one of the site's GB types."""
        for gb_type in sorted(self.gb_types):
            code = rule_for_gb_type(gb_type)
            if code is not None:
                return code
        return None


def ratio(part: int, whole: int) -> float | None:
    """``part`` of ``whole``; None where there is nothing to measure."""
    return part / whole if whole else None


def f1(precision: float | None, recall: float | None) -> float | None:
    if precision is None or recall is None:
        return None
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


@dataclass
class Finding:
    diagnostic: Diagnostic
    file: str
    matched: bool = False
    targets: set[str] = field(default_factory=set)


class Scored:
    """Precision, recall and F1 of ``covered`` of the ``wanted`` events (break sites,
    recompiles) and ``matched`` of the ``findings`` judged."""

    covered: int
    findings: int
    matched: int

    @property
    def wanted(self) -> int:
        raise NotImplementedError

    @property
    def misses(self) -> int:
        return self.wanted - self.covered

    @property
    def false_positives(self) -> int:
        return self.findings - self.matched

    @property
    def precision(self) -> float | None:
        return ratio(self.matched, self.findings)

    @property
    def recall(self) -> float | None:
        return ratio(self.covered, self.wanted)

    @property
    def f1(self) -> float | None:
        return f1(self.precision, self.recall)


@dataclass
class Counts(Scored):
    targets: int = 0
    sites: int = 0
    covered: int = 0
    findings: int = 0
    matched: int = 0
    unexercised: int = 0

    @property
    def wanted(self) -> int:
        return self.sites

    def as_dict(self) -> dict:
        return {
            "targets": self.targets, "break_sites": self.sites, "covered": self.covered, "misses": self.misses,
            "findings": self.findings, "matched": self.matched, "false_positives": self.false_positives,
            "unexercised": self.unexercised, "precision": self.precision, "recall": self.recall, "f1": self.f1,
        }


@dataclass
class TargetScore:
    name: str
    library: str
    record: dict
    counts: Counts


@dataclass
class Scores:
    sites: list[Site]
    exercised: list[Finding]
    unexercised: list[Finding]
    targets: list[TargetScore]
    library_of_file: dict[str, Library]

    def library(self, file: str) -> Library:
        return self.library_of_file[file.split("/", 1)[0]]

    def counts(self, libraries: set[str] | None = None, family: str | None = None) -> Counts:
        """Figures for some libraries (default all) and one rule family (default all)."""

        def kept(file: str, its_family: str) -> bool:
            return (libraries is None or self.library(file).name in libraries) and family in (None, its_family)

        counts = Counts()
        for site in self.sites:
            if kept(site.file, site.family):
                counts.sites += 1
                counts.covered += bool(site.matched_by)
        for finding in self.exercised:
            if kept(finding.file, family_of(finding.diagnostic.code)):
                counts.findings += 1
                counts.matched += finding.matched
        counts.unexercised = sum(kept(f.file, family_of(f.diagnostic.code)) for f in self.unexercised)
        if family is None:
            counts.targets = sum(libraries is None or t.library in libraries for t in self.targets)
        return counts

    def families(self) -> list[str]:
        found = {site.family for site in self.sites} | {family_of(f.diagnostic.code) for f in self.exercised}
        return sorted(found, key=lambda family: (family == "none", family))


def static_findings(
    site: Path, files: list[str], entry_points: tuple[str, ...], traced: dict[str, set[int]] | None = None
) -> dict[str, list[Diagnostic]]:
    """`torchlint check` of the files as one project, with the declared entry points.

    With ``traced`` (file -> lines that ran), every function that ran joins the entry points:
    the rules measured apart from region inference.
    """
    return {result.path: result.diagnostics for result in check_files(lint_work(site, files, entry_points, traced))}


def lint_work(
    site: Path, files: list[str], entry_points: tuple[str, ...], traced: dict[str, set[int]] | None = None
) -> list[tuple[Path, Settings]]:
    """Each file with the settings the bench lints (and fixes) it with: `static_findings`'s."""
    resolver = ConfigResolver(cwd=site)

    def extra(path: str, settings: Settings) -> tuple[str, ...]:
        if traced is None:
            return entry_points
        module = module_name(path, settings)
        return entry_points + tuple(f"{module}.{name}" for name in sorted(functions_that_ran(path, traced.get(path, set()))))

    return verify_lint_work(files, resolver, extra)


def files_to_lint(records: Iterable[dict], site: Path) -> list[str]:
    """Every measured file that ran or broke, the other modules of its folder, and the
    `__init__.py` of its packages. A user lints the package: a file whose functions never ran
    still holds the classes that a dispatch table names or that override a method."""
    found = set()
    for record in records:
        found.update(str(site / f) for f in record["executed"])
        found.update(str(site / b["file"]) for b in record["breaks"])
    folders = {Path(file).parent for file in found}
    found.update(str(module) for folder in folders for module in folder.glob("*.py"))
    return with_packages(found)


def score(
    records: dict[str, dict], findings: dict[str, list[Diagnostic]], libraries: list[Library], site: Path
) -> Scores:
    by_package = {package: library for library in libraries for package in library.packages}
    prefix = str(site) + "/"

    def relative(path: str) -> str:
        return path[len(prefix):] if path.startswith(prefix) else path

    def measured(path: str | None) -> bool:
        return bool(path) and relative(path).split("/", 1)[0] in by_package

    results = [(name, response_of(record, site)) for name, record in records.items()]
    comparison = compare(results, lambda path: findings.get(path, []), [])
    sites: dict[tuple[str, int], Site] = {}
    exercised: dict[tuple, Finding] = {}
    targets = []
    for target in comparison.targets:
        counts = Counts(targets=1)
        seen_sites: dict[tuple[str, int], bool] = {}
        for brk, codes in target.breaks:
            if not measured(brk["file"]):
                continue
            # A TL6xx finding is right or wrong about the breaks inside its block; it finds none
            # of its own (the findings it reports on do).
            codes = [code for code in codes if family_of(code) != PLACEMENT]
            key = (relative(brk["file"]), brk["line"])
            site_record = sites.setdefault(key, Site(*key))
            site_record.gb_types.add(brk["gb_type"])
            site_record.gb_ids.add(brk["gb_id"] or "")
            site_record.targets.add(target.key)
            if codes and not site_record.matched_by:
                site_record.matched_by = codes
            seen_sites[key] = seen_sites.get(key, False) or bool(codes)
        counts.sites, counts.covered = len(seen_sites), sum(seen_sites.values())
        for diagnostic, hit in target.findings:
            if not measured(diagnostic.path):
                continue
            key = _key(diagnostic)
            finding = exercised.setdefault(key, Finding(diagnostic, relative(diagnostic.path)))
            finding.matched |= hit
            finding.targets.add(target.key)
            counts.findings += 1
            counts.matched += hit
        record = records[target.key]
        targets.append(TargetScore(target.key, record["library"], record, counts))
    unexercised = [
        Finding(d, relative(path))
        for path, found in sorted(findings.items())
        if measured(path)
        for d in found
        if _key(d) not in exercised
    ]
    return Scores(
        sorted(sites.values(), key=lambda s: (s.file, s.line)),
        sorted(exercised.values(), key=lambda f: (f.file, Diagnostic.sort_key(f.diagnostic))),
        unexercised,
        targets,
        by_package,
    )


def _key(diagnostic: Diagnostic) -> tuple:
    return (diagnostic.path, diagnostic.location.row, diagnostic.location.column, diagnostic.code)
