"""Mistral Vibe adapter: session folders (3.x unified store; 1.x/2.x meta.json + messages.jsonl).

The format, the versions checked against and the evidence rules: ``docs/runtimes/vibe.md``.
Modules: `wire` (member names, record shapes, text blocks), `usage` (a completion's usage and
the session totals in the contract's units), `state` (what the folder's members state, turns
and Loops, model calls, the session), `tools` (tool effects, their outputs and exit codes,
subagents), and `adapter` (the registered adapter: detection, and the dispatch of each
member's records).
"""

from traceidx.adapters.vibe.adapter import VibeAdapter

__all__ = ["VibeAdapter"]
