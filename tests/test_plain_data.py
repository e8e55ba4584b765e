"""What the cache keeps, as plain data (torchlint/analysis/plain_data.py): every value a real
run keeps reads back equal, and bytes that are anything else read back as nothing, with
nothing of theirs run."""

from __future__ import annotations

import marshal
import os
import subprocess
import sys
from pathlib import Path

import pytest

from torchlint.analysis.conditions import AllOf, Compiled, Fullgraph
from torchlint.analysis.engine import analyze_text
from torchlint.analysis.plain_data import dumps, loads
from torchlint.report.diagnostic import Diagnostic, Location, Severity
from torchlint.run.cache import Cache
from torchlint.run.runner import check_files, stored_record
from torchlint.settings.config import ConfigResolver
from torchlint.settings.profile import compile_profile

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def _fixture_files() -> list[Path]:
    return sorted(FIXTURES.rglob("*.py"))


def test_every_fixtures_analysis_reads_back_equal_and_writes_the_same_bytes() -> None:
    resolver = ConfigResolver()
    files = _fixture_files()
    assert len(files) > 20
    for path in files:
        settings = resolver.for_path(path)
        analysis = analyze_text(path.read_text(), str(path), settings, compile_profile(settings), parse_always=True, rows=True)
        data = dumps(analysis)
        again = loads(data)
        assert again == analysis, path
        assert again.unpacked() == analysis.unpacked(), path
        assert dumps(again) == data, path


def test_a_runs_record_reads_back_equal(tmp_path: Path) -> None:
    resolver = ConfigResolver()
    work = [(path, resolver.for_path(path)) for path in _fixture_files()]
    cache = Cache(tmp_path / "cache", "fixtures")
    results = check_files(work, cache=cache)
    cache.save()
    record = stored_record(Cache(tmp_path / "cache", "fixtures"))
    assert record is not None and record.solved is not None and len(record.files) == len(work)
    assert loads(dumps(record)) == record
    assert any(result.diagnostics for result in results) and loads(dumps(results)) == results


def test_sets_are_written_in_one_order_whatever_the_process() -> None:
    """The bytes of a set do not follow the order the process's string hashing gives it."""
    script = (
        "import sys; from torchlint.analysis.plain_data import dumps;"
        "sys.stdout.write(dumps(({'a', 'b', 'c', 'dd', 'e'}, frozenset({('x', 1), ('y', 2), None}))).hex())"
    )
    seen = {
        subprocess.run([sys.executable, "-c", script], env={**os.environ, "PYTHONHASHSEED": seed},
                       capture_output=True, text=True, check=True).stdout
        for seed in ("1", "2", "3", "4")
    }
    assert len(seen) == 1


def test_what_is_not_plain_data_is_not_written() -> None:
    class Foreign:
        pass

    for value in (Foreign(), [object()], {"key": lambda: None}, compile("1", "<s>", "eval")):
        with pytest.raises(TypeError):
            dumps(value)


def _diagnostic() -> Diagnostic:
    return Diagnostic("m.py", "TL101", "print-in-compiled-code", "a reason", Location(1, 1), Location(1, 5))


@pytest.mark.parametrize(
    "planted",
    [
        pytest.param(marshal.dumps(compile("open('pwned', 'w')", "<s>", "exec")), id="a code object"),
        pytest.param(marshal.dumps((0, compile("1", "<s>", "eval"))), id="a code object in a tuple"),
        pytest.param(marshal.dumps((9999, "x")), id="an unknown tag"),
        pytest.param(marshal.dumps((-1,)), id="a negative tag"),
        pytest.param(marshal.dumps(("os", "system")), id="a tuple without a tag"),
        pytest.param(marshal.dumps(()), id="an empty tuple"),
        pytest.param(marshal.dumps((3, "a", "b")), id="a path of two strings"),
        pytest.param(marshal.dumps({1.5j}), id="a marshal set"),
        pytest.param(marshal.dumps(Ellipsis), id="an ellipsis"),
        pytest.param(b"\xff\x00", id="not marshal"),
        pytest.param(b"", id="nothing"),
        pytest.param(b"c" + b"\x00" * 40, id="a truncated code object"),
    ],
)
def test_bytes_that_dumps_does_not_write_read_back_as_nothing(planted: bytes, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert loads(planted) is None
    assert not (tmp_path / "pwned").exists()


def test_a_class_with_the_wrong_fields_or_member_reads_back_as_nothing() -> None:
    data = marshal.loads(dumps(_diagnostic()))
    tag = data[0]
    assert loads(marshal.dumps((tag, *data[1:-1]))) is None  # a field short
    assert loads(marshal.dumps((*data, "extra"))) is None  # one too many
    severity = marshal.loads(dumps(Severity.ERROR))
    assert loads(marshal.dumps((severity[0], "NO_SUCH_MEMBER"))) is None
    assert loads(marshal.dumps((severity[0], 1))) is None


def test_classes_are_built_field_by_field_slotted_and_frozen_alike() -> None:
    condition = AllOf(frozenset({Compiled("f"), Fullgraph("g")}))  # slotted and frozen
    assert loads(dumps(condition)) == condition and loads(dumps(_diagnostic())) == _diagnostic()
    assert loads(dumps(Severity.WARNING)) is Severity.WARNING
