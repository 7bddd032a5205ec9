"""GitHub Copilot CLI: ``events.jsonl`` under ``~/.copilot/session-state``."""

from traceidx.runtimes.declare import Runtime, TraceHome, kinds

RUNTIME = Runtime(
    name="copilot",
    title="Copilot CLI",
    module="traceidx.adapters.copilot.adapter",
    adapter="CopilotAdapter",
    version=1,
    homes=(TraceHome("COPILOT_HOME", ".copilot", ("session-state",)),),
    tools=kinds(
        shell="bash read_bash write_bash stop_bash",
        read="view",
        write="create",
        edit="edit",
        search="grep glob web_search",
        fetch="fetch web_fetch",
        delegate="task read_agent invoke_agent list_agents",
        plan="update_todo",
        ask_user="ask_user exit_plan_mode",
    ),
    fixtures=("copilot",),
)
