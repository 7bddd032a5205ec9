"""Qwen Code adapter: chat files (``projects/<project>/chats/<session>.jsonl``) to draft facts.

The format, the versions checked against and the evidence rules: ``docs/runtimes/qwen.md``.
Modules: `wire` (record shapes, the members decoded, message parts), `usage` (``usageMetadata``
in the contract's units), `state` (session, Loops and their run phase, draining), `tools`
(function calls, tool results, durations), and `adapter` (the registered adapter, which
dispatches each record).
"""

from traceidx.adapters.qwen.adapter import QwenAdapter

__all__ = ["QwenAdapter"]
