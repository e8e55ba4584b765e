"""Reading source files: encodings, BOMs, binary content and unreadable paths."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from torchlint.files.source import SourceError, decode_source, read_source


def test_plain_utf8_is_kept_as_is_including_crlf() -> None:
    assert decode_source("x = 'é'\r\ny = 2\r\n".encode()) == "x = 'é'\r\ny = 2\r\n"


def test_bom_is_stripped() -> None:
    assert decode_source(b"\xef\xbb\xbfx = 1\n") == "x = 1\n"


def test_bom_with_utf8_cookie_is_accepted() -> None:
    assert decode_source(b"\xef\xbb\xbf# -*- coding: utf-8 -*-\nx = 1\n") == "# -*- coding: utf-8 -*-\nx = 1\n"


def test_latin1_cookie_decodes_latin1() -> None:
    data = b"# -*- coding: latin-1 -*-\nname = '\xe9t\xe9'\n"
    assert decode_source(data) == "# -*- coding: latin-1 -*-\nname = 'été'\n"


def test_cookie_on_second_line_counts() -> None:
    data = b"#!/usr/bin/env python\n# vim: set fileencoding=cp1252 :\ns = '\x80'\n"
    assert decode_source(data).endswith("s = '€'\n")


def test_unknown_cookie_encoding_is_named() -> None:
    with pytest.raises(SourceError, match="unknown encoding in coding cookie: klingon"):
        decode_source(b"# coding: klingon\nx = 1\n")


def test_cookie_naming_a_non_text_codec_is_refused() -> None:
    with pytest.raises(SourceError, match="cannot decode as hex"):
        decode_source(b"# coding: hex\nx = 1\n")


def test_bom_contradicting_the_cookie_is_refused() -> None:
    with pytest.raises(SourceError, match="byte order mark conflicts with the coding cookie"):
        decode_source(b"\xef\xbb\xbf# coding: latin-1\nx = 1\n")


def test_bad_utf8_names_reason_and_offset() -> None:
    data = b"x = 1\ny = 'abc'\nz = '\xff'\n"
    offset = data.index(b"\xff")
    with pytest.raises(SourceError) as caught:
        decode_source(data)
    assert str(caught.value) == f"cannot decode as utf-8: invalid start byte at offset {offset}"


def test_bad_utf8_on_the_first_line_is_a_decode_error_too() -> None:
    with pytest.raises(SourceError, match=r"^cannot decode as utf-8: invalid start byte at offset 5$"):
        decode_source(b"x = '\xff'\n")


def test_offsets_count_the_bom() -> None:
    with pytest.raises(SourceError, match=r"at offset 7$"):
        decode_source(b"\xef\xbb\xbfx = \xc3(\n")


def test_nul_byte_means_binary() -> None:
    with pytest.raises(SourceError, match=r"^binary file \(contains NUL bytes\)$"):
        decode_source(b"\x7fELF\x02\x01\x01\x00\x00\x00")


def test_read_source_reads_a_real_file(tmp_path: Path) -> None:
    path = tmp_path / "mod.py"
    path.write_bytes(b"\xef\xbb\xbf# coding: utf-8\r\nx = 1\r\n")
    assert read_source(path) == "# coding: utf-8\r\nx = 1\r\n"


def test_read_source_latin1_file(tmp_path: Path) -> None:
    path = tmp_path / "legacy.py"
    path.write_bytes("# -*- coding: latin-1 -*-\ns = 'ñ'\n".encode("latin-1"))
    assert read_source(path) == "# -*- coding: latin-1 -*-\ns = 'ñ'\n"


def test_read_source_binary_file(tmp_path: Path) -> None:
    path = tmp_path / "blob.py"
    path.write_bytes(bytes(range(256)))
    with pytest.raises(SourceError, match="binary file"):
        read_source(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match=r"^no such file or directory$"):
        read_source(tmp_path / "gone.py")


def test_directory(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match=r"^is a directory$"):
        read_source(tmp_path)


def test_broken_symlink(tmp_path: Path) -> None:
    link = tmp_path / "link.py"
    link.symlink_to(tmp_path / "missing.py")
    with pytest.raises(SourceError, match=r"^broken symbolic link$"):
        read_source(link)


def test_symlink_to_a_file_is_read_through(tmp_path: Path) -> None:
    (tmp_path / "real.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "alias.py").symlink_to(tmp_path / "real.py")
    assert read_source(tmp_path / "alias.py") == "x = 1\n"


def test_symlink_loop_reports_the_system_cause(tmp_path: Path) -> None:
    loop = tmp_path / "loop.py"
    loop.symlink_to(loop)
    with pytest.raises(SourceError, match="(?i)too many levels of symbolic links"):
        read_source(loop)


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads files regardless of mode")
def test_unreadable_file(tmp_path: Path) -> None:
    path = tmp_path / "secret.py"
    path.write_text("x = 1\n", encoding="utf-8")
    path.chmod(0)
    try:
        with pytest.raises(SourceError, match=r"^permission denied$"):
            read_source(path)
    finally:
        path.chmod(0o644)


def test_message_does_not_repeat_the_path(tmp_path: Path) -> None:
    with pytest.raises(SourceError) as caught:
        read_source(tmp_path / "gone.py")
    assert str(tmp_path) not in str(caught.value)
