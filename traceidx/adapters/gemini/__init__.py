"""Gemini CLI adapter: chat files (``~/.gemini/tmp/<project>/chats/session-*.jsonl``, and a
subagent's ``chats/<parent session id>/<id>.jsonl``) to draft facts.

The format, the versions checked against and the evidence rules: ``docs/runtimes/gemini.md``.
Modules: `wire` (line shapes, the members decoded, parts, native types), `usage` (``tokens``
to the contract's units), `state` (messages upserted by id, the timeline of events), `tools`
(tool calls, results, subagent runs) and `adapter` (the registered adapter: reads the lines,
then projects the timeline into Loops and Items).
"""

from traceidx.adapters.gemini.adapter import GeminiAdapter

__all__ = ["GeminiAdapter"]
