"""Which files get checked: walks, excludes, .gitignore, named paths and their errors."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from torchlint.settings.config import ConfigResolver, Settings
from torchlint.files.discovery import DEFAULT_EXCLUDES, Discovered, discover, is_excluded
from torchlint.files.source import SourceError, read_source


def touch(root: Path, *names: str) -> None:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n", encoding="utf-8")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def git_init(directory: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    subprocess.run(["git", "init", "-q", str(directory)], check=True)


def run(root: Path, *paths: str | Path, force_exclude: bool = False) -> Discovered:
    targets = paths or (root,)
    named = [root / p if isinstance(p, str) else p for p in targets]
    return discover(named, ConfigResolver(cwd=root), force_exclude=force_exclude)


def relative(found: Discovered, root: Path) -> list[str]:
    return [path.relative_to(root).as_posix() for path in found.files]


# --- walking and default excludes --------------------------------------------------------


def test_walk_finds_py_and_pyi_recursively(tmp_path: Path) -> None:
    touch(tmp_path, "a.py", "pkg/b.pyi", "pkg/deep/c.py", "notes.txt", "pkg/setup.cfg", "pkg/d.pyc")
    assert relative(run(tmp_path), tmp_path) == ["a.py", "pkg/b.pyi", "pkg/deep/c.py"]


def test_default_excludes_apply_at_any_depth(tmp_path: Path) -> None:
    touch(tmp_path, "keep.py", "src/keep.py")
    for name in DEFAULT_EXCLUDES:
        touch(tmp_path, f"{name}/x.py", f"src/nested/{name}/y.py")
    assert relative(run(tmp_path), tmp_path) == ["keep.py", "src/keep.py"]


def test_default_excludes_match_whole_components_only(tmp_path: Path) -> None:
    touch(tmp_path, "builder/a.py", "my_build/b.py", "distance.py", "build.py", "src/dist/c.py")
    assert relative(run(tmp_path), tmp_path) == ["build.py", "builder/a.py", "distance.py", "my_build/b.py"]


def test_folders_above_the_project_root_do_not_count(tmp_path: Path) -> None:
    project = tmp_path / "build" / "project"
    write(project / "torchlint.toml", "")
    touch(project, "src/a.py")
    assert relative(run(project), project) == ["src/a.py"]
    assert not is_excluded(project / "src" / "a.py", Settings(root=project))


def test_output_is_sorted_absolute_and_unique(tmp_path: Path) -> None:
    touch(tmp_path, "z.py", "a/b.py", "a-b/c.py", "m.py")
    found = run(tmp_path, ".", "z.py", "a", "a/b.py", "./a/../m.py")
    assert all(path.is_absolute() for path in found.files)
    assert relative(found, tmp_path) == ["a/b.py", "a-b/c.py", "m.py", "z.py"]
    assert found.errors == []


def test_relative_paths_are_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    touch(tmp_path, "pkg/a.py")
    monkeypatch.chdir(tmp_path)
    found = discover(["pkg"], ConfigResolver(cwd=tmp_path), force_exclude=False)
    assert found.files == [tmp_path / "pkg" / "a.py"]


# --- configured excludes ----------------------------------------------------------------------


def test_extend_exclude_adds_to_the_defaults(tmp_path: Path) -> None:
    write(tmp_path / "torchlint.toml", 'extend-exclude = ["generated", "*_pb2.py", "tests/data"]\n')
    touch(tmp_path, "a.py", "generated/g.py", "src/generated/h.py", "api_pb2.py", "tests/data/d.py", "tests/t.py")
    touch(tmp_path, "build/b.py")
    assert relative(run(tmp_path), tmp_path) == ["a.py", "tests/t.py"]


def test_exclude_replaces_the_defaults(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", '[tool.torchlint]\nexclude = ["legacy/"]\n')
    touch(tmp_path, "a.py", "build/b.py", "legacy/l.py", "src/legacy/m.py")
    assert relative(run(tmp_path), tmp_path) == ["a.py", "build/b.py"]


def test_slash_patterns_are_anchored_to_the_config_folder(tmp_path: Path) -> None:
    write(tmp_path / "torchlint.toml", 'extend-exclude = ["/scripts", "docs/*.py"]\n')
    touch(tmp_path, "scripts/s.py", "pkg/scripts/t.py", "docs/conf.py", "docs/api/ref.py", "pkg/docs/x.py")
    assert relative(run(tmp_path), tmp_path) == ["docs/api/ref.py", "pkg/docs/x.py", "pkg/scripts/t.py"]


def test_nested_config_uses_its_own_root_and_patterns(tmp_path: Path) -> None:
    write(tmp_path / "torchlint.toml", 'extend-exclude = ["gen"]\n')
    write(tmp_path / "sub" / "torchlint.toml", 'extend-exclude = ["/fixtures"]\n')
    touch(tmp_path, "gen/a.py", "fixtures/b.py", "sub/fixtures/c.py", "sub/gen/d.py", "sub/ok.py")
    # the nested file replaces the outer one for its folder, so "gen" no longer applies there
    assert relative(run(tmp_path), tmp_path) == ["fixtures/b.py", "sub/gen/d.py", "sub/ok.py"]


def test_is_excluded_checks_the_path_and_its_folders(tmp_path: Path) -> None:
    settings = Settings(root=tmp_path, extend_exclude=("tests/data", "*_pb2.py"))
    assert is_excluded(tmp_path / "build" / "lib" / "x.py", settings)
    assert is_excluded(tmp_path / "src" / ".venv" / "x.py", settings)
    assert is_excluded(tmp_path / "tests" / "data" / "deep" / "x.py", settings)
    assert is_excluded(tmp_path / "api_pb2.py", settings)
    assert not is_excluded(tmp_path / "src" / "tests" / "data" / "x.py", settings)
    assert not is_excluded(tmp_path / "src" / "model.py", settings)
    assert not is_excluded(tmp_path / "src" / "model.py", Settings(root=tmp_path, exclude=()))


def test_negated_exclude_pattern_re_includes(tmp_path: Path) -> None:
    write(tmp_path / "torchlint.toml", 'exclude = ["*_test.py", "!keep_test.py"]\n')
    touch(tmp_path, "a_test.py", "keep_test.py", "b.py")
    assert relative(run(tmp_path), tmp_path) == ["b.py", "keep_test.py"]


# --- .gitignore ---------------------------------------------------------------------------------


def test_gitignore_in_the_walked_folder(tmp_path: Path) -> None:
    write(tmp_path / ".gitignore", "secret.py\nout/\n*.gen.py\n")
    touch(tmp_path, "a.py", "secret.py", "out/o.py", "pkg/secret.py", "pkg/m.gen.py", "pkg/ok.py")
    assert relative(run(tmp_path), tmp_path) == ["a.py", "pkg/ok.py"]


def test_gitignore_patterns_are_relative_to_their_folder(tmp_path: Path) -> None:
    write(tmp_path / "pkg" / ".gitignore", "/local.py\nsub/*.py\n")
    touch(tmp_path, "local.py", "pkg/local.py", "pkg/deeper/local.py", "pkg/sub/s.py", "sub/t.py")
    assert relative(run(tmp_path), tmp_path) == ["local.py", "pkg/deeper/local.py", "sub/t.py"]


def test_gitignore_of_a_parent_applies_inside_a_repository(tmp_path: Path) -> None:
    git_init(tmp_path)
    write(tmp_path / ".gitignore", "*_generated.py\n/src/vendored/\n")
    touch(tmp_path, "src/a.py", "src/b_generated.py", "src/vendored/v.py")
    assert relative(run(tmp_path, "src"), tmp_path) == ["src/a.py"]


def test_gitignore_of_a_parent_is_ignored_outside_a_repository(tmp_path: Path) -> None:
    write(tmp_path / ".gitignore", "*_generated.py\n")
    write(tmp_path / "src" / ".gitignore", "skip.py\n")
    touch(tmp_path, "src/a.py", "src/b_generated.py", "src/skip.py")
    assert relative(run(tmp_path, "src"), tmp_path) == ["src/a.py", "src/b_generated.py"]


def test_gitignore_above_the_repository_does_not_apply(tmp_path: Path) -> None:
    write(tmp_path / ".gitignore", "*.py\n")
    repo = tmp_path / "repo"
    git_init(repo)
    touch(repo, "a.py")
    assert relative(run(repo), repo) == ["a.py"]


def test_gitignore_negation(tmp_path: Path) -> None:
    git_init(tmp_path)
    write(tmp_path / ".gitignore", "*.py\n!keep*.py\nlogs/\n!logs/important.py\n")
    write(tmp_path / "sub" / ".gitignore", "!sub_only.py\n")
    touch(tmp_path, "a.py", "keep_me.py", "logs/important.py", "sub/sub_only.py", "sub/other.py")
    # a file inside an ignored folder cannot be re-included, as in git
    assert relative(run(tmp_path), tmp_path) == ["keep_me.py", "sub/sub_only.py"]


def test_gitignore_contents_pattern_allows_re_including_a_file(tmp_path: Path) -> None:
    git_init(tmp_path)
    write(tmp_path / ".gitignore", "gen/**\n!gen/keep.py\n")
    touch(tmp_path, "gen/drop.py", "gen/keep.py", "gen/deep/drop.py")
    assert relative(run(tmp_path), tmp_path) == ["gen/keep.py"]


def test_deeper_gitignore_overrides_a_shallower_one(tmp_path: Path) -> None:
    git_init(tmp_path)
    write(tmp_path / ".gitignore", "*.py\n!*/\n")
    write(tmp_path / "pkg" / ".gitignore", "!*.py\n")
    touch(tmp_path, "top.py", "pkg/a.py", "other/b.py")
    assert relative(run(tmp_path), tmp_path) == ["pkg/a.py"]


def test_git_info_exclude_is_honoured(tmp_path: Path) -> None:
    git_init(tmp_path)
    write(tmp_path / ".git" / "info" / "exclude", "scratch/\n")
    touch(tmp_path, "a.py", "scratch/s.py", "pkg/scratch/t.py")
    assert relative(run(tmp_path), tmp_path) == ["a.py"]
    assert relative(run(tmp_path, "pkg"), tmp_path) == []


def test_nested_repository_does_not_inherit_the_outer_gitignore(tmp_path: Path) -> None:
    git_init(tmp_path)
    write(tmp_path / ".gitignore", "vendor_*.py\n")
    git_init(tmp_path / "third_party" / "lib")
    touch(tmp_path, "vendor_a.py", "third_party/lib/vendor_b.py")
    assert relative(run(tmp_path), tmp_path) == ["third_party/lib/vendor_b.py"]


def test_respect_gitignore_false(tmp_path: Path) -> None:
    git_init(tmp_path)
    write(tmp_path / "torchlint.toml", "respect-gitignore = false\n")
    write(tmp_path / ".gitignore", "ignored.py\nout/\n")
    touch(tmp_path, "ignored.py", "out/o.py", "build/b.py")
    # the default excludes still apply
    assert relative(run(tmp_path), tmp_path) == ["ignored.py", "out/o.py"]


def test_gitignore_matches_what_git_reports(tmp_path: Path) -> None:
    git_init(tmp_path)
    patterns = ["build/**", "!build/sub/", "!build/sub/keep.py", "*_pb2.py", "!/top_pb2.py", "/docs/_gen/"]
    patterns += ["lib/**/er", "out/*", "!out/keep/", "b/**/"]
    write(tmp_path / ".gitignore", "\n".join(patterns) + "\n")
    write(tmp_path / "a" / ".gitignore", "c/\n!c/z.py\n")
    names = [
        "a/x.py", "a/c/z.py", "build/m.py", "build/sub/keep.py", "build/sub/other.py", "top_pb2.py", "a/b_pb2.py",
        "docs/_gen/g.py", "docs/d.py", "lib/deep/er/e.py", "lib/l.py", "out/o.py", "out/keep/ok.py", "b/b.py",
        "b/c/d.py",
    ]  # fmt: skip
    touch(tmp_path, *names)
    write(tmp_path / "torchlint.toml", 'exclude = [".git"]\n')  # only .gitignore decides here
    listing = ["git", "ls-files", "--others", "--exclude-standard"]
    git = subprocess.run(listing, cwd=tmp_path, capture_output=True, text=True, check=True)
    walked = sorted(line for line in git.stdout.splitlines() if line.endswith(".py"))
    assert "build/sub/keep.py" in walked and "build/sub/other.py" not in walked and "b/b.py" in walked
    assert sorted(relative(run(tmp_path), tmp_path)) == walked
    # files named one by one (as pre-commit does) agree with `git check-ignore`
    checking = ["git", "check-ignore", "--no-index", "--stdin"]
    git = subprocess.run(checking, cwd=tmp_path, input="\n".join(names), capture_output=True, text=True)
    kept = sorted(set(names) - set(git.stdout.splitlines()))
    assert sorted(relative(run(tmp_path, *names, force_exclude=True), tmp_path)) == kept


# --- named paths ---------------------------------------------------------------------------------


def test_named_file_is_checked_even_when_excluded(tmp_path: Path) -> None:
    write(tmp_path / ".gitignore", "ignored.py\n")
    touch(tmp_path, "build/gen.py", "ignored.py")
    assert relative(run(tmp_path, "build/gen.py", "ignored.py"), tmp_path) == ["build/gen.py", "ignored.py"]


def test_force_exclude_drops_excluded_named_files(tmp_path: Path) -> None:
    git_init(tmp_path)
    write(tmp_path / "torchlint.toml", 'extend-exclude = ["migrations"]\n')
    write(tmp_path / ".gitignore", "ignored.py\n/out/\n")
    touch(tmp_path, "build/gen.py", "app/migrations/0001.py", "ignored.py", "out/deep/o.py", "app/ok.py")
    named = ("build/gen.py", "app/migrations/0001.py", "ignored.py", "out/deep/o.py", "app/ok.py")
    assert relative(run(tmp_path, *named, force_exclude=True), tmp_path) == ["app/ok.py"]


def test_force_exclude_with_gitignore_off_keeps_ignored_files(tmp_path: Path) -> None:
    git_init(tmp_path)
    write(tmp_path / "torchlint.toml", "respect-gitignore = false\n")
    write(tmp_path / ".gitignore", "ignored.py\n")
    touch(tmp_path, "ignored.py", "build/b.py")
    assert relative(run(tmp_path, "ignored.py", "build/b.py", force_exclude=True), tmp_path) == ["ignored.py"]


def test_named_excluded_folder_is_walked_unless_forced(tmp_path: Path) -> None:
    touch(tmp_path, "build/lib/a.py", "build/lib/build/b.py")
    # inside a named folder, entries are judged on their own (the inner build/ is still excluded)
    assert relative(run(tmp_path, "build"), tmp_path) == ["build/lib/a.py"]
    assert run(tmp_path, "build", force_exclude=True).files == []
    assert run(tmp_path, "build/lib", force_exclude=True).files == []


def test_named_folder_ignored_by_git_or_anchored_exclude_is_walked_unless_forced(tmp_path: Path) -> None:
    git_init(tmp_path)
    write(tmp_path / "torchlint.toml", 'extend-exclude = ["tests/data"]\n')
    write(tmp_path / ".gitignore", "vendor/\n")
    touch(tmp_path, "vendor/v.py", "tests/data/d.py")
    assert relative(run(tmp_path, "vendor/", "tests/data"), tmp_path) == ["tests/data/d.py", "vendor/v.py"]
    assert run(tmp_path, "vendor/", "tests/data", force_exclude=True).files == []


def test_is_excluded_outside_the_root_matches_components(tmp_path: Path) -> None:
    settings = Settings(root=tmp_path / "project")
    assert is_excluded(tmp_path / "elsewhere" / "build" / "x.py", settings)
    assert not is_excluded(tmp_path / "elsewhere" / "x.py", settings)


def test_named_file_without_python_suffix_is_checked(tmp_path: Path) -> None:
    touch(tmp_path, "bin/tool", "bin/other")
    assert relative(run(tmp_path, "bin/tool"), tmp_path) == ["bin/tool"]
    assert run(tmp_path, "bin").files == []


def test_missing_path_is_an_error(tmp_path: Path) -> None:
    touch(tmp_path, "a.py")
    found = run(tmp_path, "a.py", "missing.py", "nope/dir")
    assert relative(found, tmp_path) == ["a.py"]
    assert [(e.path, e.message) for e in found.errors] == [
        (str(tmp_path / "missing.py"), "no such file or directory"),
        (str(tmp_path / "nope" / "dir"), "no such file or directory"),
    ]


def test_named_folder_with_python_suffix_is_an_error(tmp_path: Path) -> None:
    touch(tmp_path, "weird.py/inner.py")
    found = run(tmp_path, "weird.py")
    assert found.files == []
    assert [(e.path, e.message) for e in found.errors] == [(str(tmp_path / "weird.py"), "is a directory, not a Python file")]
    # found while walking, such a folder is just a folder
    assert relative(run(tmp_path), tmp_path) == ["weird.py/inner.py"]


# --- symbolic links and unreadable folders -------------------------------------------------------------


def test_folder_symlinks_are_not_followed(tmp_path: Path) -> None:
    touch(tmp_path, "pkg/a.py", "elsewhere/b.py")
    (tmp_path / "pkg" / "loop").symlink_to(tmp_path / "pkg", target_is_directory=True)
    (tmp_path / "pkg" / "other").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    assert relative(run(tmp_path, "pkg"), tmp_path) == ["pkg/a.py"]


def test_named_folder_symlink_is_walked(tmp_path: Path) -> None:
    touch(tmp_path, "real/a.py")
    (tmp_path / "alias").symlink_to(tmp_path / "real", target_is_directory=True)
    assert relative(run(tmp_path, "alias"), tmp_path) == ["alias/a.py"]


def test_file_symlinks_are_listed(tmp_path: Path) -> None:
    touch(tmp_path, "real.py")
    (tmp_path / "alias.py").symlink_to(tmp_path / "real.py")
    (tmp_path / "alias_without_suffix").symlink_to(tmp_path / "real.py")
    assert relative(run(tmp_path), tmp_path) == ["alias.py", "real.py"]


def test_broken_symlink_is_listed_and_reading_it_says_why(tmp_path: Path) -> None:
    touch(tmp_path, "ok.py")
    (tmp_path / "dangling.py").symlink_to(tmp_path / "gone.py")
    found = run(tmp_path)
    assert relative(found, tmp_path) == ["dangling.py", "ok.py"]
    with pytest.raises(SourceError, match="^broken symbolic link$"):
        read_source(found.files[0])
    named = run(tmp_path, "dangling.py")
    assert named.files == [tmp_path / "dangling.py"] and named.errors == []


def test_sockets_and_pipes_are_never_listed(tmp_path: Path) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no named pipes here")
    touch(tmp_path, "a.py")
    os.mkfifo(tmp_path / "pipe.py")
    assert relative(run(tmp_path), tmp_path) == ["a.py"]


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root can list any folder")
def test_unlistable_folder_is_an_error_and_the_walk_goes_on(tmp_path: Path) -> None:
    touch(tmp_path, "a.py", "locked/secret.py", "z/b.py")
    locked = tmp_path / "locked"
    locked.chmod(0)
    try:
        found = run(tmp_path)
    finally:
        locked.chmod(0o755)
    assert relative(found, tmp_path) == ["a.py", "z/b.py"]
    assert [(e.path, e.message) for e in found.errors] == [(str(locked), "cannot list directory: permission denied")]
