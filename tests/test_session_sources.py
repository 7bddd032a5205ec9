"""A session that several sources support takes its single-valued columns (working directory,
project, name, task ...) from its first-created source, wherever the files are: source ids
are hashes of paths, so a rule by id would change with the folder the traces were copied to."""

from __future__ import annotations

import json
from pathlib import Path

from traceidx.build import build
from traceidx.query import connect

SESSION = "0b7e6f10-5c2d-4e8a-9f31-7a2c4d6e8f90"


def _pi_session(path: Path, created: str, cwd: str, text: str) -> None:
    """A Pi session file: its header and one user message."""
    path.parent.mkdir(parents=True, exist_ok=True)
    header = {"type": "session", "version": 3, "id": SESSION, "timestamp": created, "cwd": cwd}
    message = {
        "type": "message",
        "id": "c0000001",
        "parentId": None,
        "timestamp": created,
        "message": {"role": "user", "content": [{"type": "text", "text": text}]},
    }
    path.write_text("\n".join(json.dumps(line) for line in (header, message)) + "\n")


def test_the_first_created_source_states_a_session_whatever_its_path(tmp_path: Path) -> None:
    earlier_id_first = set()
    for name in ("a", "b", "c", "d", "e", "f", "g", "h"):
        root = tmp_path / "traces" / name
        early, late = root / f"{name}-one.jsonl", root / f"two-{name}.jsonl"
        _pi_session(early, "2026-03-02T10:00:00.000Z", "/home/dev/alpha", "start the work")
        _pi_session(late, "2026-03-05T10:00:00.000Z", "/home/dev/beta", "go on with it")
        dataset = tmp_path / "datasets" / name
        assert build([root], dataset, jobs=1).exit_code == 0
        con = connect(dataset)
        rows = con.execute(
            "SELECT working_directory, project, len(source_ids) FROM sessions"
        ).fetchall()
        assert rows == [("/home/dev/alpha", "alpha", 2)], name
        ids = dict(con.execute("SELECT locator, source_id FROM sources").fetchall())
        earlier_id_first.add(ids[str(early)] < ids[str(late)])
    # the files' paths put either source first by id: the rule is not the ids' order
    assert earlier_id_first == {True, False}
