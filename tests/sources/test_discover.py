"""Discovery: candidate suffixes, default roots, and superseded copies reported, not read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from traceidx.sources.discover import default_roots, discover


def _touch(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"{}\n")
    return path


def test_suffixes_and_foreign_files(tmp_path: Path) -> None:
    keep = [
        _touch(tmp_path / "a" / "x.jsonl"),
        _touch(tmp_path / "b" / "rollout.jsonl.zst"),
        _touch(tmp_path / "c" / "s" / "session.v2.jsonl.zstd"),
    ]
    _touch(tmp_path / "a" / "notes.txt")
    _touch(tmp_path / "a" / "x.jsonl.tmp")
    found = discover([tmp_path])
    candidates, superseded, problems = found.candidates, found.superseded, found.problems
    assert [c.locator for c in candidates] == sorted(str(p.resolve()) for p in keep)
    assert superseded == [] and problems == []


def test_dsh_generations_highest_wins(tmp_path: Path) -> None:
    d = tmp_path / "sessions" / "--home-dev-p--" / "session-1"
    old = [_touch(d / "session.jsonl.zstd"), _touch(d / "session.v1.jsonl.zstd")]
    new = _touch(d / "session.v3.jsonl.zstd")
    found = discover([tmp_path])
    candidates, superseded, _ = found.candidates, found.superseded, found.problems
    assert [c.locator for c in candidates] == [str(new.resolve())]
    assert sorted(s.locator for s in superseded) == sorted(str(p) for p in old)
    assert {s.by for s in superseded} == {str(new)}


def test_codex_plain_rollout_beats_its_zst_copy(tmp_path: Path) -> None:
    plain = _touch(tmp_path / "2026" / "rollout-1.jsonl")
    packed = _touch(tmp_path / "2026" / "rollout-1.jsonl.zst")
    found = discover([tmp_path])
    candidates, superseded, _ = found.candidates, found.superseded, found.problems
    assert [c.locator for c in candidates] == [str(plain.resolve())]
    assert [(s.locator, s.by) for s in superseded] == [(str(packed), str(plain))]


def test_explicit_file_is_a_candidate_even_if_superseded(tmp_path: Path) -> None:
    d = tmp_path / "s"
    old = _touch(d / "session.jsonl")
    _touch(d / "session.v4.jsonl")
    found = discover([old])
    candidates, superseded, _ = found.candidates, found.superseded, found.problems
    assert [c.locator for c in candidates] == [str(old.resolve())] and superseded == []


def test_missing_path_is_a_problem(tmp_path: Path) -> None:
    found = discover([tmp_path / "nope"])
    problems = found.problems
    assert problems == [f"{tmp_path / 'nope'}: no such file or directory"]


def test_default_roots_follow_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for var, sub in [
        ("CLAUDE_CONFIG_DIR", "claude"),
        ("CODEX_HOME", "codex"),
        ("PI_CODING_AGENT_DIR", "pi"),
        ("DSH_HOME", "dsh"),
        ("GEMINI_CLI_HOME", "home"),
        ("COPILOT_HOME", "copilot"),
        ("QWEN_RUNTIME_DIR", "qwen-runtime"),
        ("QWEN_HOME", "qwen"),
        ("XDG_DATA_HOME", "data"),
        ("OPENCODE_DB", "elsewhere/opencode.db"),
    ]:
        monkeypatch.setenv(var, str(tmp_path / sub))
    expected = {
        "claude_code": [tmp_path / "claude" / "projects"],
        "codex": [tmp_path / "codex" / "sessions", tmp_path / "codex" / "archived_sessions"],
        "pi": [tmp_path / "pi" / "sessions"],
        "dsh": [tmp_path / "dsh" / "sessions"],
        "gemini": [tmp_path / "home" / ".gemini" / "tmp"],
        "copilot": [tmp_path / "copilot" / "session-state"],
        "qwen": [tmp_path / "qwen-runtime" / "projects", tmp_path / "qwen" / "projects"],
        "opencode": [tmp_path / "data" / "opencode", tmp_path / "elsewhere" / "opencode.db"],
    }
    assert {k: v for k, v in default_roots().items() if k in expected} == expected


def test_symlinks_and_unreadable_directories(tmp_path: Path) -> None:
    """A symlinked file is read at its target; a symlinked directory is not entered (its
    files are found where they are, or not at all); a directory that cannot be listed is
    passed over."""
    elsewhere = _touch(tmp_path / "elsewhere" / "target.jsonl")
    outside = _touch(tmp_path / "outside" / "inner.jsonl")
    root = tmp_path / "root"
    kept = _touch(root / "p" / "a.jsonl")
    (root / "p" / "link.jsonl").symlink_to(elsewhere)
    (root / "dirlink").symlink_to(outside.parent, target_is_directory=True)
    (root / "dir.jsonl").symlink_to(outside.parent, target_is_directory=True)
    locked = root / "locked"
    _touch(locked / "hidden.jsonl")
    locked.chmod(0)
    try:
        found = discover([root])
        candidates, superseded, problems = found.candidates, found.superseded, found.problems
        listable = os.access(locked, os.R_OK)  # (root can list it anyway)
    finally:
        locked.chmod(0o755)
    expected = {str(kept.resolve()), str(elsewhere.resolve())}
    if listable:
        expected.add(str((locked / "hidden.jsonl").resolve()))
    assert {c.locator for c in candidates} == expected
    assert superseded == [] and problems == []
