"""OpenCode adapter: the sessions of OpenCode's SQLite database to draft facts.

OpenCode (1.2 and later) keeps every session in one database, ``opencode.db``; traceidx frames
it as one source per session, a record per row of its ``session``, ``message`` and ``part``
tables (traceidx.sources.rowsource), so this adapter reads framed rows, never the database. The
format, the versions checked against and the evidence rules: ``docs/runtimes/opencode.md``.
Modules: `wire` (the members read of a row and its JSON ``data``, native types, fixed texts),
`usage` (an assistant message's tokens in the contract's units), `state` (the session, turns,
model requests, draining), `tools` (tool parts: calls, outputs, delegations to subagents) and
`adapter` (the adapter, which dispatches each row).
"""

from traceidx.adapters.opencode.adapter import OpenCodeAdapter

__all__ = ["OpenCodeAdapter"]
