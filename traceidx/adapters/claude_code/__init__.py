"""Claude Code adapter: session transcripts (main and subagent files) to draft facts.

The format, the versions checked against and the evidence rules:
``docs/runtimes/claude_code.md``. Modules: `wire` (line shapes, the members decoded),
`messages` (runtime-written text), `usage` (``message.usage`` to the contract's units), `state`
(session, Loops, responses and their usage, draining), `tools` (calls, results, delegations,
task notifications), and `adapter` (the registered adapter, which dispatches each line).
"""

from traceidx.adapters.claude_code.adapter import ClaudeCodeAdapter

__all__ = ["ClaudeCodeAdapter"]
