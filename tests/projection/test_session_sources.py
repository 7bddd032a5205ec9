"""A session that several sources support takes its single-valued columns (working directory,
project, name, task ...) from its first-created source, wherever the files are: source ids
are hashes of paths, so a rule by id would change with the folder the traces were copied to."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from traceidx.analysis.query import connect
from traceidx.domain.ids import source_id
from traceidx.pipeline.job import build

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


def _files(folder: Path, earlier_id_first: bool) -> tuple[Path, Path]:
    """The paths of an earlier and a later file of the session, whose source ids put the
    earlier file first or last (ids are hashes of paths: try folders until they do)."""
    for n in itertools.count():
        early, late = folder / f"r{n}" / "one.jsonl", folder / f"r{n}" / "two.jsonl"
        if (source_id(str(early)) < source_id(str(late))) == earlier_id_first:
            return early, late
    raise AssertionError("unreachable")


@pytest.mark.parametrize("earlier_id_first", [True, False])
def test_the_first_created_source_states_a_session_whatever_its_path(
    tmp_path: Path, earlier_id_first: bool
) -> None:
    early, late = _files(tmp_path.resolve() / "traces", earlier_id_first)
    _pi_session(early, "2026-03-02T10:00:00.000Z", "/home/dev/alpha", "start the work")
    _pi_session(late, "2026-03-05T10:00:00.000Z", "/home/dev/beta", "go on with it")
    dataset = tmp_path / "dataset"
    assert build([early.parent], dataset, jobs=1).exit_code == 0
    con = connect(dataset)
    ids = dict(con.execute("SELECT locator, source_id FROM sources").fetchall())
    assert (ids[str(early)] < ids[str(late)]) == earlier_id_first  # the case is the one meant
    rows = con.execute("SELECT working_directory, project, len(source_ids) FROM sessions")
    assert rows.fetchall() == [("/home/dev/alpha", "alpha", 2)]
