"""Claude Code's generated set against what only its ground truth states.

The rest of ``generated/claude``'s ground truth is compared in ``tests/corpus/test_expect.py``,
the same for every runtime; subagents are followed in ``test_claude_subagents.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.expect import build_folder, manifest, query
from tests.support.files import generated


def _sessions() -> list[dict[str, Any]]:
    found = manifest("claude")
    assert found is not None, "the generated Claude Code folder has no manifest.json"
    return list(found["sessions"])


def _text(session: dict[str, Any]) -> str:
    return (generated("claude") / session["file"]).read_text("utf-8")


def test_the_manifest_sums_are_its_requests() -> None:
    """Each session's usage in the manifest is the sum of its requests' (the manifest agrees
    with itself, as the expect.json derived from it does: tests/corpus/test_expect.py)."""
    for session in _sessions():
        for key in ("input", "cache_read", "cache_write", "output"):
            per_request = sum(r["usage"][key] for t in session["turns"] for r in t["requests"])
            assert session["usage"][key] == per_request, (session["file"], key)


def test_no_loop_reports_the_synthetic_model(tmp_path: Path) -> None:
    """Claude Code writes the messages it makes up itself (an API error, an interruption) with
    the model ``<synthetic>``; no Loop reports it as its model."""
    dataset = tmp_path / "ds"
    build_folder("claude", dataset)
    models = {r["model"] for r in query(dataset, "SELECT DISTINCT model.id AS model FROM loops")}
    assert models and "<synthetic>" not in models
    written = [s for s in _sessions() if '"model":"<synthetic>"' in _text(s)]
    assert written  # the set has such messages: the test is not vacuous
