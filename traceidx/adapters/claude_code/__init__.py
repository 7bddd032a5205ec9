"""Claude Code adapter: session transcripts (main and subagent files) to draft facts.

The format, the versions checked against and the evidence rules:
``docs/runtimes/claude_code.md``. Modules: `wire` (line shapes, the members decoded),
`messages` (runtime-written text), `state` (session, Loops, responses and usage, draining),
`tools`, and `adapter` (the registered adapter, which dispatches each line).
"""

from traceidx.adapters.claude_code.adapter import ClaudeCodeAdapter

__all__ = ["ClaudeCodeAdapter"]
