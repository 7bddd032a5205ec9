"""OpenClaw: Pi-format transcripts as JSON lines (up to 2026.7) and in its agent database
``openclaw-agent.sqlite`` (2026.8 on), under ``~/.openclaw/agents`` (docs/runtimes/openclaw.md)."""

from traceidx.runtimes.declare import Database, Packed, RowTable, Runtime, TraceHome, kinds

# OpenClaw's state folder is OPENCLAW_STATE_DIR, else .openclaw in OPENCLAW_HOME (which stands
# for the user's home folder), else ~/.openclaw; each agent keeps agents/<agent>/sessions/
# <id>.jsonl (up to 2026.7) and agents/<agent>/agent/openclaw-agent.sqlite (from 2026.8): one
# transcript entry per row, an entry of 1 KiB or more zstd-compressed in event_zstd
RUNTIME = Runtime(
    name="openclaw",
    title="OpenClaw",
    module="traceidx.adapters.openclaw.adapter",
    adapter="OpenClawAdapter",
    version=1,
    homes=(
        TraceHome("OPENCLAW_STATE_DIR", ".openclaw", ("agents",)),
        TraceHome("OPENCLAW_HOME", "", (".openclaw/agents",), note="the home folder"),
    ),
    tools=kinds(
        shell="exec bash process",
        read="read memory_get",
        write="write",
        edit="edit apply_patch",
        search="web_search memory_search",
        fetch="web_fetch",
        delegate="sessions_spawn sessions_send",
    ),
    fixtures=("openclaw", "openclaw-sqlite"),
    database=Database(
        ("openclaw-agent.sqlite",),
        (
            RowTable(
                "session_windows",
                session="session_id",
                key="session_id",
                order=("session_id",),
                changed="updated_at",
            ),
            RowTable(
                "transcript_events",
                "session_id",
                "session_id",
                key="seq",
                order=("seq",),
                changed="created_at",
                packed=(Packed("event_json", "event_zstd", "zstd"),),
            ),
        ),
    ),
)
