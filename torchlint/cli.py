"""The command line: `torchlint check`, `torchlint rules`, `torchlint rule CODE`, `torchlint verify`,
`torchlint server`.

`torchlint PATHS...` is short for `torchlint check PATHS...`. Exit codes: 0 clean,
1 findings, 2 usage, configuration or file errors.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import click

from torchlint import __version__
from torchlint.wording import counted
from torchlint.run.cache import cache_folder, refused_folder
from torchlint.settings.config import CliOverrides, ConfigError, ConfigResolver
from torchlint.report.diagnostic import FileError
from torchlint.report import FORMATS, ReportContext, render
from torchlint.report.paths import display_path, os_path, readable
from torchlint.report.progress import ProgressLine
from torchlint.report.style import wants_colour
from torchlint.rules import all_rules, rule_by_code
from torchlint.settings.selection import SelectorError, validate

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class _CheckByDefault(click.Group):
    """Routes `torchlint [OPTIONS] PATHS` to `check`, as ruff does."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        top_level = {"--help", "-h", "--version"}
        if not args or (args[0] not in self.commands and args[0] not in top_level):
            args = ["check", *args]
        return super().parse_args(ctx, args)


@click.group(cls=_CheckByDefault, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="torchlint")
def cli() -> None:
    """Find torch.compile graph breaks before the code runs."""


def main() -> None:
    """The console entry point: never a traceback, always an exit code."""
    from torchlint.run.workers import stop_on_signals, tune_collector

    tune_collector()
    stop_on_signals()
    try:
        cli()
    except Exception as error:  # noqa: BLE001 - the last line of defence
        click.echo(f"error: internal error: {type(error).__name__}: {error}", err=True)
        sys.exit(EXIT_ERROR)


def _selectors(values: tuple[str, ...], option: str) -> tuple[str, ...]:
    items = [item for value in values for item in value.split(",") if item.strip()]
    if values and not items:
        # An empty `--select ''` would silently turn every rule off.
        raise click.UsageError(f"{option} needs at least one rule code, prefix or ALL")
    try:
        return validate(items, option)
    except SelectorError as error:
        raise click.UsageError(str(error)) from None


def _fail(message: str) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(EXIT_ERROR)


def _writable_report(ctx: click.Context, param: click.Parameter, path: Path | None) -> Path | None:
    """Refuse a report file that cannot be written before the run, not after it."""
    if path is None:
        return None
    folder = path.absolute().parent
    if path.is_dir():
        raise click.BadParameter(f"'{path}' is a directory", param_hint="'-o' / '--output-file'")
    if not folder.is_dir():
        raise click.BadParameter(f"folder '{folder}' does not exist", param_hint="'-o' / '--output-file'")
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise click.BadParameter(f"'{path}' is not writable", param_hint="'-o' / '--output-file'")
    return path


def _refuse_an_input(output_file: Path, named: list[str], resolver: ConfigResolver, force_exclude: bool) -> None:
    """`-o` naming one of the files checked would replace its source with the report."""
    from torchlint.files.inputs import is_input

    if is_input(output_file, named, resolver, force_exclude=force_exclude):
        raise click.BadParameter(
            f"'{output_file}' is one of the files checked; the report would overwrite it",
            param_hint="'-o' / '--output-file'",
        )


_report_file_option = click.option(
    "-o", "--output-file", type=click.Path(dir_okay=False, path_type=Path), callback=_writable_report,
    help="Write the report to this file instead of stdout.",
)


@cli.command()
# Plain strings: click's own path checks would stop the whole run at the first unreadable
# path, where each one should get its error line while the others are still checked.
@click.argument("paths", nargs=-1)
@click.option("--select", multiple=True, metavar="CODES", help="Rules to enable: codes, prefixes (TL1) or ALL; comma-separated. Replaces the configured selection.")
@click.option("--extend-select", multiple=True, metavar="CODES", help="Rules to enable on top of the selection.")
@click.option("--ignore", multiple=True, metavar="CODES", help="Rules to disable.")
@click.option("--output-format", type=click.Choice(FORMATS), default="concise", show_default=True, envvar="TORCHLINT_OUTPUT_FORMAT", help="How findings are printed (also TORCHLINT_OUTPUT_FORMAT).")
@_report_file_option
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--statistics", is_flag=True, help="Print a count per rule instead of the findings.")
@click.option("-q", "--quiet", is_flag=True, help="Print findings only: no summary.")
@click.option("--config", "config_path", type=click.Path(path_type=Path), help="Use this pyproject.toml or torchlint.toml for every file.")
@click.option("--stdin-filename", metavar="PATH", help="Read the source from stdin and report it under this name.")
@click.option("--force-exclude", is_flag=True, help="Apply excludes to files named on the command line too (for pre-commit).")
@click.option("--show-files", is_flag=True, help="List the files that would be checked, and exit.")
@click.option("--show-regions", is_flag=True, help="List the compiled functions of each file and why they are compiled, and exit.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), help="Worker processes (default: one per CPU).")
@click.option("--no-project", is_flag=True, help="Read only the named files: calls into them from the rest of their project are not followed.")
@click.option("--no-cache", is_flag=True, envvar="TORCHLINT_NO_CACHE", help="Neither read nor write the cache (also TORCHLINT_NO_CACHE).")
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), envvar="TORCHLINT_CACHE_DIR", help="Where to keep the cache (also TORCHLINT_CACHE_DIR; default: .torchlint_cache in the project root).")
@click.option("--fix/--no-fix", default=None, help="Apply fixes, then report what is left (config key `fix`).")
@click.option("--unsafe-fixes/--no-unsafe-fixes", default=None, help="Count fixes that change behaviour somewhere as applicable (config key `unsafe-fixes`).")
@click.option("--fix-only", is_flag=True, help="Apply fixes and report nothing else; exit 0 unless a file could not be checked.")
@click.option("--diff", is_flag=True, help="Print the fixes as a unified diff and change nothing; exit 1 when there is something to fix.")
@click.option("--show-fixes", is_flag=True, help="List the findings fixed, by file and rule.")
def check(
    paths: tuple[str, ...],
    select: tuple[str, ...],
    extend_select: tuple[str, ...],
    ignore: tuple[str, ...],
    output_format: str,
    output_file: Path | None,
    exit_zero: bool,
    statistics: bool,
    quiet: bool,
    config_path: Path | None,
    stdin_filename: str | None,
    force_exclude: bool,
    show_files: bool,
    show_regions: bool,
    jobs: int | None,
    no_project: bool,
    no_cache: bool,
    cache_dir: Path | None,
    fix: bool | None,
    unsafe_fixes: bool | None,
    fix_only: bool,
    diff: bool,
    show_fixes: bool,
) -> None:
    """Check PATHS (files or folders; default: the current folder) for graph breaks."""
    from torchlint.run.runner import check_paths, check_stdin

    overrides = CliOverrides(
        select=_selectors(select, "--select") if select else None,
        extend_select=_selectors(extend_select, "--extend-select"),
        ignore=_selectors(ignore, "--ignore"),
    )
    cwd = Path.cwd()
    try:
        resolver = ConfigResolver(overrides, config_path, cwd)
        from_stdin = paths == ("-",) or (not paths and stdin_filename is not None)
        if show_files:
            _show_files(paths or (".",), resolver, force_exclude, cwd)
            return
        where = {"whole_project": not no_project, "cache_dir": None if no_cache else _cache_dir(cache_dir, resolver.for_path(cwd).root, cwd)}
        if show_regions:
            _show_regions(paths or (".",), resolver, force_exclude, jobs, from_stdin, stdin_filename, cwd, where)
            return
        if output_file is not None:
            named = ([stdin_filename] if stdin_filename else []) if from_stdin else list(paths or (".",))
            _refuse_an_input(output_file, named, resolver, force_exclude)
        keep_sources = output_format == "full"
        root = resolver.for_path(cwd)
        unsafe = bool(root.unsafe_fixes) if unsafe_fixes is None else unsafe_fixes
        fixing = fix_only or (root.fix if fix is None else fix)
        fixed = None
        if (fixing or diff) and from_stdin:
            _fix_stdin(stdin_filename, resolver, unsafe, diff, quiet, cwd, where)
            return
        if fixing or diff:
            from torchlint.fix.fixing import fix_paths

            fixed = fix_paths(paths or (".",), resolver, unsafe=unsafe, write=not diff, force_exclude=force_exclude,
                              keep_sources=keep_sources, jobs=jobs, **where)
            if diff:
                _report_diff(fixed, cwd, unsafe)
                return
            run = fixed.check
        elif from_stdin:
            run = check_stdin(sys.stdin.buffer.read(), stdin_filename, resolver, force_exclude=force_exclude, keep_sources=keep_sources, **where)
        else:
            progress = _check_progress(quiet)
            try:
                run = check_paths(paths or (".",), resolver, force_exclude=force_exclude, keep_sources=keep_sources, jobs=jobs,
                                  progress=progress, **where)
            finally:
                if progress is not None:
                    progress.finish()
    except ConfigError as error:
        # Nothing was checked: the summary says why, as it counts a setting the code contradicts.
        click.echo(f"error: {error}", err=True)
        if not quiet:
            click.echo("1 configuration error.", err=True)
        sys.exit(EXIT_ERROR)
    except SelectorError as error:
        _fail(str(error))
        return

    diagnostics = run.diagnostics
    errors = run.all_errors + (fixed.errors if fixed is not None else [])
    # A report written to a file is never coloured.
    colour = output_file is None and wants_colour(sys.stdout.isatty())
    _echo_errors(errors, cwd)
    unwritten = False
    if fix_only:
        diagnostics = []  # nothing but the count is reported
    else:
        if statistics:
            report = _statistics(diagnostics, output_format, unsafe)
        else:
            # SARIF's rule table lists every rule, as ruff's does, so results index into one table.
            context = ReportContext(cwd, run.sources, all_rules(), __version__, unsafe_fixes=unsafe, colour=colour)
            report = render(output_format, diagnostics, context)
        # A message may name a file whose name is not UTF-8, which no strict stream takes.
        report = readable(report)
        if output_file is not None:
            unwritten = not _write_report(report, output_file)
        elif report:
            # click strips colour from a stream that is not a terminal unless told otherwise.
            click.echo(report, nl=False, color=colour or None)
    if show_fixes and fixed is not None:
        _echo_fixed(fixed, cwd)
    if not quiet:
        _summary(diagnostics, errors, fixed, unsafe, fix_only)
    if errors or unwritten:
        sys.exit(EXIT_ERROR)
    sys.exit(EXIT_FINDINGS if diagnostics and not exit_zero else EXIT_CLEAN)


def _check_progress(quiet: bool) -> ProgressLine | None:
    """The count of files checked, on stderr where it is a terminal and `-q` is off."""
    if quiet or not sys.stderr.isatty():
        return None
    return ProgressLine(sys.stderr)


def _cache_dir(option: Path | None, root: Path, cwd: Path) -> Path | None:
    """Where the cache is kept; None, with a warning, when the default folder is not one to use."""
    folder = cache_folder(option, root)
    refused = refused_folder(folder) if option is None else None
    if refused is not None:
        click.echo(f"warning: {display_path(str(folder), cwd)} {refused}; the cache is not used", err=True)
        return None
    return folder


def _echo_errors(errors, cwd: Path) -> None:
    for error in errors:
        click.echo(f"error: {display_path(error.path, cwd)}: {error.message}", err=True)


def _summary(diagnostics, errors, fixed=None, unsafe: bool = False, fix_only: bool = False) -> None:
    """What was found (and fixed) on stderr; "All checks passed!" only when every file was
    checked and clean. Without `--fix`, how many findings it would fix, and how many more
    `--unsafe-fixes` would."""
    failed = _failed(errors)
    done = fixed.fixed_count if fixed is not None else 0
    if fix_only:
        click.echo(f"Fixed {counted(done, 'finding')}. {failed}".rstrip(), err=True)
        return
    if not diagnostics:
        if done:
            click.echo(f"Found {counted(done, 'finding')} ({done} fixed, 0 remaining). {failed}".rstrip(), err=True)
        else:
            click.echo(failed or "All checks passed!", err=True)
        return
    files = len({d.path for d in diagnostics})
    if fixed is not None:
        found = f"Found {counted(len(diagnostics) + done, 'finding')} ({done} fixed, {len(diagnostics)} remaining) in {counted(files, 'file')}."
    else:
        found = f"Found {counted(len(diagnostics), 'finding')} in {counted(files, 'file')}."
    click.echo(f"{found} {failed}".rstrip(), err=True)
    applicable = sum(d.fix_applies(unsafe) for d in diagnostics)
    hint = _hidden_fixes_hint(diagnostics, unsafe)
    if applicable and fixed is None:
        click.echo(f"[*] {applicable} fixable with the `--fix` option{hint}.", err=True)
    elif hint:
        click.echo(f"No fixes available{hint}.", err=True)


def _failed(errors) -> str:
    """`2 files could not be checked.`, `1 configuration error.` (a setting the code
    contradicts: every file was checked), both, or ""."""
    from torchlint.settings.config import SettingError

    unchecked = len({error.path for error in errors if not isinstance(error, SettingError)})
    settings = sum(isinstance(error, SettingError) for error in errors)
    parts = [f"{counted(unchecked, 'file')} could not be checked." if unchecked else ""]
    parts.append(f"{counted(settings, 'configuration error')}." if settings else "")
    return " ".join(part for part in parts if part)


def _hidden_fixes_hint(diagnostics, unsafe: bool) -> str:
    """` (2 hidden fixes can be enabled with the `--unsafe-fixes` option)`, or "" where every
    fix the findings offer already applies."""
    hidden = sum(d.fix_applies(True) and not d.fix_applies(unsafe) for d in diagnostics)
    fixes = "hidden fix" if hidden == 1 else "hidden fixes"
    return f" ({hidden} {fixes} can be enabled with the `--unsafe-fixes` option)" if hidden else ""


def _echo_fixed(fixed, cwd: Path) -> None:
    if not fixed.fixed:
        click.echo("No findings fixed.", err=True)
        return
    click.echo(f"Fixed {counted(fixed.fixed_count, 'finding')}:", err=True)
    for path, counts in sorted(fixed.fixed.items()):
        click.echo(f"- {display_path(path, cwd)}:", err=True)
        for code, count in sorted(counts.items()):
            rule = rule_by_code(code)
            click.echo(f"    {count} × {code} ({rule.name if rule else code})", err=True)


def _fix_stdin(filename: str | None, resolver: ConfigResolver, unsafe: bool, diff: bool, quiet: bool,
               cwd: Path, where: dict) -> None:
    """An editor's buffer with `--fix`: the fixed text on stdout (with `--diff`, the diff),
    what is left on stderr, as ruff does."""
    from torchlint.fix.fixing import fix_text
    from torchlint.run.runner import check_stdin
    from torchlint.files.source import SourceError, decode_source, encode_source

    data = sys.stdin.buffer.read()
    try:
        original = decode_source(data)
    except SourceError as error:
        _echo_errors([FileError(filename or "-", str(error))], cwd)
        sys.exit(EXIT_ERROR)
    errors: list[FileError] = []

    def check(text: str) -> list:
        run = check_stdin(encode_source(text, data), filename, resolver, **where)
        errors[:] = run.all_errors
        return run.diagnostics

    result = fix_text(original, check, unsafe, filename or "-")
    if result.problem is not None:
        errors.append(FileError(filename or "-", result.problem))
    if diff:
        from torchlint.files.unified_diff import unified_diff

        name = os_path(filename, cwd) if filename else "-"
        click.echo(unified_diff(data, _on_disk(result.text, data), os.fsencode(name)), nl=False)
    else:
        sys.stdout.buffer.write(encode_source(result.text, data))
        sys.stdout.flush()
    fixed = sum(result.removed.values())
    left = [] if diff else result.left
    _echo_errors(errors, cwd)
    if left:
        click.echo(render("concise", left, ReportContext(cwd, {}, all_rules(), __version__, unsafe_fixes=unsafe)), nl=False, err=True)
    if not quiet:
        if diff:
            hint = _hidden_fixes_hint(result.left, unsafe)
            done_text = f"Would fix {counted(fixed, 'finding')}{hint}." if fixed else f"No fixes to apply{hint}."
        else:
            done_text = f"Fixed {counted(fixed, 'finding')}, {len(left)} remaining."
        click.echo(done_text, err=True)
    if errors:
        sys.exit(EXIT_ERROR)
    sys.exit(EXIT_FINDINGS if (fixed if diff else left) else EXIT_CLEAN)


def _on_disk(text: str, original: bytes) -> bytes:
    """``text`` as the file that held ``original`` would hold it: its encoding, its byte
    order mark."""
    from torchlint.files.source import SourceError, encode_source

    try:
        return encode_source(text, original)
    except (SourceError, UnicodeError):
        return text.encode("utf-8", "surrogateescape")


def _file_diff(path: str, before: str, after: str, cwd: Path) -> bytes:
    from torchlint.files.source import SourceError, read_bytes
    from torchlint.files.unified_diff import unified_diff

    try:
        original = read_bytes(Path(path))
    except SourceError:
        original = before.encode("utf-8", "surrogateescape")  # gone since: its cookie still tells
    name = os.fsencode(os_path(path, cwd))
    return unified_diff(_on_disk(before, original), _on_disk(after, original), name)


def _report_diff(fixed, cwd: Path, unsafe: bool) -> None:
    """`--diff`: the fixes as a unified diff on stdout, and how many fixes `--unsafe-fixes`
    would add; exit 1 when there is one, 2 when a file could not be checked."""
    for path, (before, after) in sorted(fixed.changed.items()):
        click.echo(_file_diff(path, before, after, cwd), nl=False)
    errors = fixed.check.all_errors + fixed.errors
    _echo_errors(errors, cwd)
    done = fixed.fixed_count
    failed = f" {_failed(errors)}" if errors else ""
    hint = _hidden_fixes_hint(fixed.check.diagnostics, unsafe)
    outcome = f"Would fix {counted(done, 'finding')}{hint}." if done else f"No fixes to apply{hint}."
    click.echo(outcome + failed, err=True)
    if errors:
        sys.exit(EXIT_ERROR)
    sys.exit(EXIT_FINDINGS if done else EXIT_CLEAN)


def _as_json(value: object) -> str:
    # Imported here: the usual run prints text.
    import json

    return json.dumps(value, indent=2) + "\n"


def _statistics(diagnostics, output_format: str, unsafe: bool) -> str:
    """A count per code, most first; as ruff does, `[*]` marks a code `--fix` would fix
    (with the unsafe fixes where they are on) once any code is fixable."""
    counts = Counter(d.code for d in diagnostics)
    fixable = {d.code for d in diagnostics if d.fix_applies(unsafe)}
    rows = []
    for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        rule = rule_by_code(code)
        rows.append({"code": code, "name": rule.name if rule else "", "count": count, "fixable": code in fixable})
    if output_format == "json":
        return _as_json(rows)
    width = max((len(str(row["count"])) for row in rows), default=1)

    def mark(row: dict) -> str:
        return ("[*] " if row["fixable"] else "[ ] ") if fixable else ""

    return "".join(f"{row['count']:>{width}}\t{row['code']}\t{mark(row)}{row['name']}\n" for row in rows)


def _show_files(paths, resolver: ConfigResolver, force_exclude: bool, cwd: Path) -> None:
    from torchlint.files.discovery import discover

    found = discover(paths, resolver, force_exclude=force_exclude)
    for path in found.files:
        click.echo(display_path(str(path), cwd))
    for error in found.errors:
        click.echo(f"error: {display_path(error.path, cwd)}: {error.message}", err=True)
    sys.exit(EXIT_ERROR if found.errors else EXIT_CLEAN)


def _show_regions(
    paths,
    resolver: ConfigResolver,
    force_exclude: bool,
    jobs: int | None,
    from_stdin: bool,
    stdin_filename: str | None,
    cwd: Path,
    where: dict,
) -> None:
    """Each file's compiled functions with the reason, as the check of the same paths sees them."""
    from torchlint.run.runner import show_regions, show_regions_stdin

    if from_stdin:
        run = show_regions_stdin(sys.stdin.buffer.read(), stdin_filename, resolver, **where)
    else:
        run = show_regions(paths, resolver, force_exclude=force_exclude, jobs=jobs, **where)
    compiled = 0
    for path, rows in sorted(run.files.items()):
        if not rows:
            continue
        click.echo(display_path(path, cwd))
        for row in rows:
            compiled += row.status != "disabled"
            tag = "" if row.status == "compiled" else f" [{row.status}]"
            click.echo(f"  {row.row}: {row.qualname}{tag}: {row.reason}")
    if run.unparsable:
        # Reported as `check` reports them: nothing in such a file can be listed.
        click.echo(render("concise", run.unparsable, ReportContext(cwd, {}, all_rules(), __version__)), nl=False)
    _echo_errors(run.errors, cwd)
    files = sum(1 for rows in run.files.values() if any(row.status != "disabled" for row in rows))
    click.echo(f"{counted(compiled, 'compiled function')} in {counted(files, 'file')}.", err=True)
    if run.errors:
        sys.exit(EXIT_ERROR)
    sys.exit(EXIT_FINDINGS if run.unparsable else EXIT_CLEAN)


@cli.command("server")
def server_command() -> None:
    """Run the language server on stdin and stdout, for editors (needs `torchlint[server]`)."""
    try:
        from torchlint.server.server import serve
    except ImportError as error:
        _fail(f"`torchlint server` needs pygls: pip install 'torchlint[server]' ({error})")
        return
    serve()


@cli.command("rules")
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text", show_default=True)
def list_rules(output_format: str) -> None:
    """List every rule: code, name, family and Dynamo graph-break ids."""
    rules = all_rules()
    if output_format == "json":
        payload = [
            {
                "code": rule.code,
                "name": rule.name,
                "family": rule.family(),
                "message": rule.message,
                "gb_ids": list(rule.gb_ids),
                "gb_types": list(rule.gb_types),
                "url": rule.url(),
            }
            for rule in rules
        ]
        click.echo(_as_json(payload), nl=False)
        return
    for rule in rules:
        gb = ", ".join(rule.gb_ids) or "-"
        click.echo(f"{rule.code}  {rule.name:<32} {rule.family():<28} {gb}")


@cli.command("rule")
@click.argument("code")
def show_rule(code: str) -> None:
    """Print the documentation page of rule CODE or name (TL101, print-in-compiled-code)."""
    import difflib

    from torchlint.pages import page_text

    by_name = {rule.name: rule for rule in all_rules()}
    rule = rule_by_code(code) or by_name.get(code.lower())
    if rule is None:
        close = difflib.get_close_matches(code.lower(), list(by_name), n=1)
        hint = f"; did you mean `{by_name[close[0]].code}` ({close[0]})?" if close else ""
        _fail(f"unknown rule `{code}`{hint} `torchlint rules` lists them")
        return
    click.echo(page_text(rule), nl=False)


def _write_report(report: str, output_file: Path) -> bool:
    """Write the report to ``output_file``; False, with an error line, where it cannot be."""
    from torchlint.files.report_file import write_report

    problem = write_report(report, output_file)
    if problem is not None:
        click.echo(f"error: {readable(str(output_file))}: cannot write the report: {problem}", err=True)
    return problem is None


def _verify_report(report: str, output_file: Path | None) -> None:
    report = readable(report)
    if output_file is None:
        click.echo(report, nl=False)
    elif not _write_report(report, output_file):
        sys.exit(EXIT_ERROR)


def _verify_progress(on_terminal: bool) -> Callable[[int, int, str], None]:
    """A bar on a terminal; otherwise a line per target, for runs of more than a few."""

    def bar(done: int, total: int, key: str) -> None:
        width = 30
        filled = width * done // max(total, 1)
        click.echo(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total}", err=True, nl=done == total)

    def lines(done: int, total: int, key: str) -> None:
        if total > 3:
            click.echo(f"[{done}/{total}] {display_path(key, Path.cwd())}", err=True)

    return bar if on_terminal else lines


@cli.command("verify")
@click.argument("targets", nargs=-1, required=True, metavar="PATHS_OR_TARGETS...")
@click.option("--device", default="cpu", show_default=True, help="cpu, cuda or cuda:N.")
@click.option("--backend", type=click.Choice(["eager", "inductor"]), default="eager", show_default=True, help="torch.compile backend; inductor also compares outputs with eager.")
@click.option("--mode", default=None, help="torch.compile mode (default, reduce-overhead, max-autotune, ...).")
@click.option("--timeout", type=click.FloatRange(min=1), default=300, show_default=True, help="Seconds one target may take before its worker is replaced.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True, help="Worker processes.")
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@_report_file_option
@click.option("--config", "config_path", type=click.Path(path_type=Path), help="Configuration for the static findings.")
@click.option("--fix", is_flag=True, help="Apply the fixes to a temporary copy, run the targets again, and report breaks before and after and any output that changed.")
@click.option("--unsafe-fixes", is_flag=True, help="With --fix: apply unsafe fixes too.")
@click.option("--recompiles", is_flag=True, help="Make every call of each target and compare Dynamo's recompiles (and silently wrong or never compiled code) with the TL7xx findings.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar.")
@click.pass_obj
def verify_command(
    caller: dict | None,
    targets: tuple[str, ...],
    device: str,
    backend: str,
    mode: str | None,
    timeout: float,
    jobs: int,
    output_format: str,
    output_file: Path | None,
    config_path: Path | None,
    fix: bool,
    unsafe_fixes: bool,
    recompiles: bool,
    quiet: bool,
) -> None:
    """Run targets through TorchDynamo and compare its graph breaks with torchlint's findings.

    PATHS_OR_TARGETS are files or folders with a torchlint_targets() function, or
    `file.py::name` for one target. Exit 0 when annotations, static findings and Dynamo
    agree, 1 when they do not, 2 on errors. With --fix: exit 1 when a fix changed an
    output or made a target fail, 2 when a target failed before any fix. With --recompiles:
    the same exit codes, for recompiles against the TL7xx findings.
    """
    from torchlint.verify.run import VerifyError, VerifyOptions, verify, verify_recompiles

    if unsafe_fixes and not fix:
        raise click.UsageError("--unsafe-fixes needs --fix")
    if recompiles and fix:
        raise click.UsageError("--recompiles and --fix cannot be combined")
    options = VerifyOptions(device, backend, mode, timeout, jobs)
    progress = None if quiet else _verify_progress(sys.stderr.isatty())
    try:
        # A program that runs verify many times (the test suite) may hand in warm workers
        # as click's context object.
        pool = (caller or {}).get("verify_pool")
        resolver = ConfigResolver(explicit=config_path)
        if output_file is not None:
            from torchlint.verify.targets import parse_target_argument

            named = [str(parse_target_argument(target)[0]) for target in targets]
            _refuse_an_input(output_file, named, resolver, force_exclude=False)
        if fix:
            from torchlint.verify.fix_run import verify_fix

            fixed = verify_fix(targets, resolver, options, unsafe_fixes, progress, pool)
        elif recompiles:
            recompile_comparison, settings = verify_recompiles(targets, resolver, options, progress, pool)
        else:
            comparison, settings = verify(targets, resolver, options, progress, pool)
    except (VerifyError, ConfigError) as error:
        _fail(str(error))
        return
    if fix:
        from torchlint.verify import fix_report

        report = _as_json(fix_report.as_json(fixed)) if output_format == "json" else fix_report.as_text(fixed, Path.cwd())
        _verify_report(report, output_file)
        sys.exit(fixed.exit_code)
    if recompiles:
        from torchlint.verify import recompile_report

        if output_format == "json":
            report = _as_json(recompile_report.as_json(recompile_comparison, settings))
        else:
            report = recompile_report.as_text(recompile_comparison, settings, Path.cwd())
        _verify_report(report, output_file)
        if recompile_comparison.errors:
            sys.exit(EXIT_ERROR)
        sys.exit(EXIT_CLEAN if recompile_comparison.agrees else EXIT_FINDINGS)
    from torchlint.verify.report import as_json, as_text

    if output_format == "json":
        report = _as_json(as_json(comparison, settings))
    else:
        report = as_text(comparison, settings, Path.cwd())
    _verify_report(report, output_file)
    if comparison.errors:
        sys.exit(EXIT_ERROR)
    sys.exit(EXIT_CLEAN if comparison.agrees else EXIT_FINDINGS)
