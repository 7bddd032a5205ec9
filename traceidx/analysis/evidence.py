"""Evidence: re-read the bytes of one published record and check its fingerprint.

A line is re-read by its byte range in its source (a session folder's record by its byte
range in the member its JSON path names: `traceidx.sources.folder`); a database row by its
table and key (`traceidx.sources.rowsource`). The verdict says whether the bytes are still
those the dataset published (``verified``), changed, gone or unreadable.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from traceidx.sources.folder import is_folder, read_member
from traceidx.sources.frame import algorithm_of
from traceidx.sources.rowsource import gone, read_row
from traceidx.sources.sourceio import read_range

if TYPE_CHECKING:
    import duckdb


def inspect_record(con: duckdb.DuckDBPyConnection, record_id: int) -> dict[str, Any] | None:
    """Where a record is, its fingerprint, the verdict of reading it again and its content
    (when verified); None when the dataset has no such record."""
    found = con.execute(
        "SELECT r.record_id, s.locator, s.runtime, r.source_position, r.content_range.start, "
        "r.content_range.end, r.fingerprint, r.parse_status, r.native_type, r.json_path, "
        "r.row.table, r.row.key FROM records r JOIN sources s USING (source_id) "
        "WHERE r.record_id = ?",
        [record_id],
    ).fetchall()
    if not found:
        return None
    rid, locator, runtime, position, start, end, expected, status, native, path, *key = found[0]
    table, row = key  # of a database row (traceidx.sources.rowsource)
    verdict, raw = "verified", b""
    try:  # a database row is re-read by its table and key, a line by its byte range
        if table is not None:
            raw = read_row(locator, table, row)
        elif is_folder(locator):
            raw = read_member(locator, path, start, end)
        else:
            raw = read_range(locator, start, end)
        if algorithm_of(raw, expected) is None:
            verdict = "changed"
    except FileNotFoundError as exc:
        verdict = "source missing (the file is gone; its facts stay until `traceidx prune`)"
        if table is not None and not gone(locator):  # its session is there, the row is not
            verdict = f"changed ({exc.strerror}; the next build reads its session again)"
        elif table is not None:
            verdict = "source missing (its session is gone; its facts stay until `traceidx prune`)"
    except OSError as exc:
        verdict = f"unreadable ({exc.strerror or exc})"
    info: dict[str, Any] = {
        "record_id": rid,
        "source": locator,
        "runtime": runtime,
        "source_position": position,
        "content_range": {"start": start, "end": end},
    }
    if table is not None:  # a row of a database source: where it is
        info["row"] = {"table": table, "key": row}
    info |= {
        "fingerprint": expected,
        "parse_status": status,
        "native_type": native,
        "json_path": path,
        "verification": verdict,
        "content": raw.decode("utf-8", "replace") if verdict == "verified" else None,
    }
    return info


def holds(info: dict[str, Any]) -> bool:
    """Whether a record's evidence stands (`inspect_record`'s verdict): its bytes read again
    are those published, or its source is gone (its facts stay until `traceidx prune`)."""
    verdict = str(info["verification"])
    return verdict == "verified" or verdict.startswith("source missing")
