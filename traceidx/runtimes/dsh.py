"""dsh (the DeepSeek harness): ``session.jsonl[.zstd]`` under ``~/.dsh/sessions``."""

from traceidx.runtimes.declare import Runtime, TraceHome, kinds

RUNTIME = Runtime(
    name="dsh",
    title="dsh",
    module="traceidx.adapters.dsh.adapter",
    adapter="DshAdapter",
    version=2,
    homes=(TraceHome("DSH_HOME", ".dsh", ("sessions",)),),
    tools=kinds(
        shell="bash pwsh run_code job_output job_kill terminal_open terminal_send terminal_read"
        " terminal_list terminal_close terminal_signal",
        read="read read_image lsp",
        write="write write_remote",
        edit="edit str_replace_editor",
        search="glob web_search",
        fetch="web_fetch",
        delegate="subagent subagent_codex subagent_fork send_message list_agents",
        plan="todo_write create_goal get_goal update_goal",
        ask_user="ask_user_question exit_plan_mode",
    ),
    fixtures=("dsh",),
)
