"""Pi adapter: session files (format v1, v2 and v3) to draft facts.

The format, the versions checked against and the evidence rules: ``docs/runtimes/pi.md``.
Modules: `wire` (record shapes, native types, text and reasoning blocks, file names) and
`adapter` (the adapter, which follows a session's runs and tool calls).
"""

from traceidx.adapters.pi.adapter import PiAdapter

__all__ = ["PiAdapter"]
