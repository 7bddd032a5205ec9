"""Column descriptions: what `traceidx schema` shows for each table's and view's columns.

`COLUMN_DOCS` describes the stored top-level columns of each table of `traceidx.domain.model`
(the Arrow schema carries them as field metadata); `DERIVED_COLUMNS` the columns a public view
computes beside its table's.
"""

from __future__ import annotations

from traceidx import runtimes

#: Columns a public view computes beside its table's stored ones, with their descriptions.
DERIVED_COLUMNS: dict[str, dict[str, str]] = {
    "model_calls": {
        "cost_usd": "the call's cost in USD at its own time (genai-prices, or the --prices "
        "override); empty when unpriced or without usage",
    },
    "tool_calls": {"kind": "the tool's runtime-neutral kind (see the tool_kinds view)"},
}


def _one_of(names: list[str]) -> str:
    """Names as a sentence lists them: ``a, b or c``."""
    return " or ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)


#: Column descriptions shown by `traceidx schema` (top-level columns of each table).
COLUMN_DOCS: dict[str, dict[str, str]] = {
    "sources": {
        "source_id": "opaque id of the trace file (from its canonical locator)",
        "locator": "canonical absolute path of the trace file (a database session: "
        "the database's path, '#', and the session's native id)",
        "runtime": f"program that wrote the trace: {_one_of(runtimes.names())}",
        "compression": "none, or zstd (record ranges are offsets in the decoded stream)",
        "origin": "machine or person the file came from (build --origin; default: hostname)",
        "duplicate_of": "the source whose records this copy holds; a copy publishes no facts",
    },
    "records": {
        "record_id": "opaque id of the line (from source and position)",
        "source_id": "the Source holding the line",
        "source_position": "0-based line ordinal in the source",
        "content_range": "half-open byte range of the line in the source, newline excluded",
        "fingerprint": "XXH3-128 hex of exactly the content bytes (BLAKE2b-128 for sources "
        "that vanished before traceidx changed to XXH3)",
        "parse_status": "ok, malformed (not JSON), oversized (not parsed) or joined "
        "(several JSON objects on one line, each recovered)",
        "occurred_at": "the runtime's own timestamp on the line, if any",
        "native_type": "the runtime's record type (type or type/refinement)",
        "json_path": "where a record of a document source is in it ($: the document, "
        "$.messages[3]: an element); absent for a line",
        "row": "table and primary key of a database row (a database source's records only)",
    },
    "sessions": {
        "session_id": "opaque id from (runtime, native_id)",
        "runtime": "program that wrote the session",
        "native_id": "the runtime's own session id",
        "identity_record_id": "record that states the session identity",
        "source_ids": "sources supporting the session",
        "created_at": "earliest runtime timestamp of the session",
        "name": "explicit session name, if the runtime records one",
        "working_directory": "the session's working directory",
        "project": "the repository the session worked in: the name of the git top-level the "
        "trace states, else of the working directory",
        "branch": "the git branch the trace states the session ran on (its first)",
        "forked_from": "parent session this one was forked from (if in the dataset)",
        "delegated_from": "session that delegated work to this one (if in the dataset)",
        "task": "the task a delegated child received from its parent, as the child records it",
        "session_usage": "the session's token usage as the runtime totals it for the whole "
        "session, where it keeps such a total (Mistral Vibe); absent elsewhere. It includes "
        "the calls in model_calls: reports add only what it exceeds them by (calls whose "
        "per-call usage the runtime did not keep), never spread over calls or loops",
        "session_usage_model": "the model the runtime names for the session, that session "
        "usage is priced at (absent: unpriced)",
    },
    "loops": {
        "loop_id": "opaque id of the outer agent execution",
        "session_id": "the Session the loop belongs to",
        "source_id": "the Source whose records support the loop (operational)",
        "started_at": "runtime time of the start record (operational; absent if it has none)",
        "ended_at": "runtime time of the end record (operational; absent if none)",
        "session_position": "0-based order of the loop in its session",
        "start_record_id": "record proving the execution started",
        "native_id": "the runtime's own id for the execution, if any",
        "end": "record proving the end, and the runtime's outcome if it stated one",
        "model": "model id, effort and context window as the runtime reported them",
        "usage": "token usage summed over the loop's model calls (input includes cache)",
    },
    "items": {
        "item_id": "opaque id of the fact",
        "session_id": "the Session the fact belongs to",
        "source_id": "the Source whose records support the fact (operational)",
        "linked_session_id": "the Session the fact names (delegation child, subagent, report "
        "source), as the trace states it, whether or not it is in the dataset (operational)",
        "record_ids": "records supporting the fact",
        "semantic": "role, evidence strength and the one value shape of the fact",
        "loop_id": "the Loop the fact belongs to, when the trace supports it",
        "loop_position": "0-based observation order inside the loop",
        "occurred_at": "the runtime's time of the fact, if reported",
    },
    "model_calls": {
        "call_id": "opaque id of the model call",
        "session_id": "the Session the call belongs to",
        "source_id": "the Source whose records state the call (operational)",
        "record_ids": "records stating the call's usage",
        "usage": "the call's token usage (input includes cache; absent members stay absent); "
        "absent for a failed attempt that billed nothing",
        "loop_id": "the Loop the call ran in; absent for a call outside any Loop",
        "occurred_at": "the runtime's time of the call's first record, if reported",
        "model": "the model the call names (else its Loop's)",
        "provider": "the provider the trace states for the call, if any",
        "outcome": "ok (answered), error (a failed attempt) or aborted (cut by the user)",
    },
}
