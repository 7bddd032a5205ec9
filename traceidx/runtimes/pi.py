"""Pi: JSON-lines sessions under ``~/.pi/agent/sessions`` (docs/runtimes/pi.md)."""

from traceidx.runtimes.declare import Runtime, TraceHome, kinds

RUNTIME = Runtime(
    name="pi",
    title="Pi",
    module="traceidx.adapters.pi.adapter",
    adapter="PiAdapter",
    version=2,
    homes=(TraceHome("PI_CODING_AGENT_DIR", ".pi/agent", ("sessions",)),),
    tools=kinds(
        shell="bash",
        read="read ls",
        write="write",
        edit="edit",
        search="grep find",
    ),
    fixtures=("pi",),
)
