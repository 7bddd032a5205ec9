"""Pi adapter: session files (format v1, v2 and v3) to draft facts.

The format, the versions checked against and the evidence rules: ``docs/runtimes/pi.md``.
Modules: `wire` (record shapes, native types, text and reasoning blocks, file names), `usage`
(an assistant message's ``usage`` to the contract's units), `state` (session, the chain and its
branches, Loops and their run phase, draining), `tools` (tool calls, results, a user's shell
commands), and `adapter` (the registered adapter, which dispatches each entry).
"""

from traceidx.adapters.pi.adapter import PiAdapter

__all__ = ["PiAdapter"]
