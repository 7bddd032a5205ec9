"""Cline CLI: session documents under ``~/.cline/data/sessions`` (docs/runtimes/cline.md)."""

from traceidx.runtimes.declare import FileRule, Runtime, TraceHome, kinds

# Cline CLI keeps sessions in CLINE_SESSION_DATA_DIR, else CLINE_DATA_DIR/sessions, else
# CLINE_DIR/data/sessions (each defaulting to ~/.cline/...): all three homes
RUNTIME = Runtime(
    name="cline",
    title="Cline",
    module="traceidx.adapters.cline.adapter",
    adapter="ClineAdapter",
    version=1,
    homes=(
        TraceHome("CLINE_DIR", ".cline", ("data/sessions",)),
        TraceHome("CLINE_DATA_DIR", ".cline/data", ("sessions",)),
        TraceHome("CLINE_SESSION_DATA_DIR", ".cline/data/sessions", (".",)),
    ),
    tools=kinds(
        shell="run_commands",
        read="read_files",
        edit="editor apply_patch",
        search="search_codebase",
        fetch="fetch_web_content",
        delegate="spawn_agent team_spawn_teammate team_run_task",
    ),
    fixtures=("cline",),
    # a session's conversation (<id>.messages.json, a sub-agent's agent_<id>.messages.json):
    # a JSON document the CLI rewrites whole
    files=(FileRule("*.messages.json", framing="document"),),
)
