"""`verify --fix`'s report: a table of breaks before and after the fixes per target, or JSON."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from torchlint.wording import counted
from torchlint.report.paths import display_path
from torchlint.verify.compare import break_key
from torchlint.verify.fix_run import CHANGED, FixReport, TargetFix
from torchlint.verify.report import settings_line, target_label


def _codes(counts: Counter) -> str:
    return ", ".join(f"{code}" + (f" x{n}" if n > 1 else "") for code, n in sorted(counts.items())) or "-"


def _removed(before: int, after: int) -> str:
    return f"{before - after} removed ({(before - after) / before:.0%})" if before else "0 removed"


def totals(report: FixReport) -> dict:
    # Distinct breaks, as plain verify's overall line counts them: a site several targets
    # meet is one break (the rows count each target's own).
    compared = [t for t in report.targets if t.ok_before]
    before = len({break_key(b) for t in compared for b in t.before.get("breaks", [])})
    after = len({break_key(b) for t in compared for b in t.breaks_counted_after})
    return {
        "targets": len(report.targets),
        "breaks_before": before,
        "breaks_after": after,
        "removed": before - after,
        "fixes": len(report.fixes),
        "files_fixed": len({fix["file"] for fix in report.fixes}),
        "output_changes": len(report.output_changes),
        "fail_after": len(report.fails_after),
        "failed_before": len(report.failed_before),
        "fixes_left_break": len(report.left),
        "unsafe_fixes_not_applied": report.hidden,
    }


def as_text(report: FixReport, cwd: Path) -> str:
    which = "safe and unsafe fixes" if report.unsafe else "safe fixes only"
    lines = [
        f"{settings_line(report.settings)} · {which}",
        "",
        f"{'target':<52} {'before':>6} {'after':>5}  {'output':<12} fixes",
    ]
    for target in report.targets:
        name = target_label(target.key, cwd)
        if not target.ok_before:
            lines.append(f"{name:<52} error: {target.before.get('error')}")
            continue
        after = "error" if target.fails_after else str(len(target.breaks_after))
        lines.append(f"{name:<52} {len(target.before.get('breaks', [])):>6} {after:>5}  {target.output:<12} {_codes(target.fixes)}")
    figures = totals(report)
    lines += [
        "",
        f"total: {counted(figures['targets'], 'target')}, {counted(figures['breaks_before'], 'break')} before the fixes, "
        f"{figures['breaks_after']} after: {_removed(figures['breaks_before'], figures['breaks_after'])}; "
        f"{counted(figures['fixes'], 'fix', 'fixes')} in {counted(figures['files_fixed'], 'file')}; "
        f"{counted(figures['output_changes'], 'output')} changed",
    ]
    if report.hidden:
        lines.append(f"{counted(report.hidden, 'unsafe fix', 'unsafe fixes')} not applied; `--unsafe-fixes` applies them")
    if report.left:
        lines += ["", "fixes that left their break (the line still breaks in a target that broke there before):"]
        lines += [f"  {display_path(item['file'], cwd)}:{item['line']}: {item['code']} still breaks: "
                  f"{', '.join(item['gb_types'])}" for item in report.left]
    changed = report.output_changes
    if changed:
        lines += ["", "error: outputs changed beyond tolerance (rtol=atol=1e-3) after the fixes:"]
        lines += [f"  {target_label(t.key, cwd)}: {_what_changed(t)}; fixes on lines it ran: {_codes(t.fixes)}" for t in changed]
    for target in report.fails_after:
        lines += ["", f"error: {target_label(target.key, cwd)} fails after the fixes: {target.after.get('error')}"]
        if target.after.get("traceback"):
            lines.append(target.after["traceback"].rstrip())
    not_compared = [t for t in report.targets if t.ok_before and not t.fails_after and t.why_not_compared]
    if not_compared:
        lines += ["", "outputs not compared:"]
        lines += [f"  {target_label(t.key, cwd)}: {t.why_not_compared}" for t in not_compared]
    for error in report.fix_errors:
        lines += ["", f"error: {display_path(error.path, cwd)}: {error.message}"]
    for message in report.errors:
        lines += ["", f"error: {message}"]
    for target in report.failed_before:
        lines += ["", f"error in {target_label(target.key, cwd)}: {target.before.get('error')}"]
        if target.before.get("traceback"):
            lines.append(target.before["traceback"].rstrip())
    return "\n".join(lines) + "\n"


def _what_changed(target: TargetFix) -> str:
    against = target.after["original_output"]
    which = [name for name in ("eager", "compiled") if not against[name]]
    outputs = "outputs differ" if len(which) > 1 else "output differs"
    return f"the {' and '.join(which)} {outputs} from the eager output before the fixes"


def as_json(report: FixReport) -> dict:
    return {
        **report.settings,
        "unsafe_fixes": report.unsafe,
        "summary": totals(report),
        "targets": [
            {
                "id": t.key,
                "status_before": t.before.get("status"),
                "status_after": None if t.after is None else t.after.get("status"),
                "error": t.before.get("error") if not t.ok_before else (t.after or {}).get("error"),
                "breaks_before": t.before.get("breaks", []),
                "breaks_after": t.breaks_after,
                "fixes": dict(sorted(t.fixes.items())),
                "output": t.output,
                "output_error": t.output == CHANGED,
                "why_not_compared": t.why_not_compared,
            }
            for t in report.targets
        ],
        "fixes": report.fixes,
        "fixes_left_break": report.left,
        "fix_errors": [{"file": e.path, "message": e.message} for e in report.fix_errors],
        "errors": report.errors,
    }
