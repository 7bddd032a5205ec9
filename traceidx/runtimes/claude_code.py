"""Claude Code: JSON-lines transcripts under ``~/.claude/projects``."""

from traceidx.runtimes.declare import Runtime, TraceHome, kinds

RUNTIME = Runtime(
    name="claude_code",
    title="Claude Code",
    module="traceidx.adapters.claude_code.adapter",
    adapter="ClaudeCodeAdapter",
    version=2,
    homes=(TraceHome("CLAUDE_CONFIG_DIR", ".claude", ("projects",)),),
    tools=kinds(
        shell="bash bashoutput killbash killshell monitor",
        read="read ls notebookread",
        write="write",
        edit="edit multiedit notebookedit",
        search="grep glob websearch tool_search",
        fetch="webfetch",
        delegate="task agent taskoutput subagent",
        plan="todowrite todoread enterplanmode",
        ask_user="askuserquestion exitplanmode",
    ),
    fixtures=("claude",),
)
