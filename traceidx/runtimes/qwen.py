"""Qwen Code: chats under ``~/.qwen/projects`` (docs/runtimes/qwen.md)."""

from traceidx.runtimes.declare import Runtime, TraceHome, kinds

# Qwen Code writes chats under QWEN_RUNTIME_DIR, else QWEN_HOME, else ~/.qwen: both homes
RUNTIME = Runtime(
    name="qwen",
    title="Qwen Code",
    module="traceidx.adapters.qwen.adapter",
    adapter="QwenAdapter",
    version=1,
    homes=(
        TraceHome("QWEN_RUNTIME_DIR", ".qwen", ("projects",)),
        TraceHome("QWEN_HOME", ".qwen", ("projects",)),
    ),
    tools=kinds(
        shell="run_shell_command",
        read="read_file read_many_files list_directory",
        write="write_file",
        edit="edit",
        search="glob grep_search search_file_content web_search",
        fetch="web_fetch",
        delegate="task",
        plan="todo_write",
        ask_user="exit_plan_mode",
    ),
    fixtures=("qwen",),
)
