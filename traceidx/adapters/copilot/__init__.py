"""GitHub Copilot CLI adapter: a session's ``events.jsonl`` (its subagents inline) to draft facts.

The format, the versions checked against and the evidence rules: ``docs/runtimes/copilot.md``.
Modules: `wire` (record shapes, the members decoded), `usage` (usage records to the contract's
counts), `state` (session, the Loops of each agent lane, final answers, draining), `tools`
(calls, results, delegations), and `adapter` (the registered adapter, which dispatches each
record).
"""

from traceidx.adapters.copilot.adapter import CopilotAdapter

__all__ = ["CopilotAdapter"]
