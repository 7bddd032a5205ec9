"""OpenAI Codex adapter: rollout files (CLI, TUI, exec and Desktop) to draft facts.

The format, the versions checked against and the evidence rules: ``docs/runtimes/codex.md``.
Modules: `wire` (line shapes), `state` (session, Loops, draining), `messages`, `tools`,
`usage`, and `adapter` (the registered adapter, which dispatches each line).
"""

from traceidx.adapters.codex.adapter import CodexAdapter
from traceidx.adapters.codex.tools import _shell_script

__all__ = ["CodexAdapter", "_shell_script"]
