"""OpenAI Codex: rollouts under ``~/.codex/sessions`` (docs/runtimes/codex.md)."""

from traceidx.runtimes.declare import Runtime, TraceHome, kinds

RUNTIME = Runtime(
    name="codex",
    title="Codex",
    module="traceidx.adapters.codex.adapter",
    adapter="CodexAdapter",
    version=2,
    homes=(TraceHome("CODEX_HOME", ".codex", ("sessions", "archived_sessions")),),
    tools=kinds(
        shell="shell exec_command write_stdin js bash",
        edit="apply_patch",
        search="web_search",
        delegate="spawn_agent wait_agent close_agent",
        plan="update_plan",
        mcp="list_mcp_resources list_mcp_resource_templates read_mcp_resource",
    ),
    fixtures=("codex",),
)
