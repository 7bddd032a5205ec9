-- tool_kinds: the runtime-neutral kind of each tool name the runtimes use (matched on the name in
-- lower case): shell (runs a command, or talks to one it started), read, write, edit, search
-- (files or the web), fetch (a URL), delegate (hands work to a subagent, or waits for one),
-- plan (the agent's own plan or task list), ask_user (waits for the person: a question, plan
-- approval), mcp (a tool of an MCP server); tool_calls.kind falls back to shell for a declared
-- shell tool, mcp for a name with an MCP server prefix (server__tool), else other.
CREATE OR REPLACE VIEW tool_kinds AS
SELECT * FROM (VALUES
    -- shell
    ('bash', 'shell'), ('shell', 'shell'), ('exec_command', 'shell'),
    ('run_shell_command', 'shell'), ('write_stdin', 'shell'), ('bashoutput', 'shell'),
    ('killbash', 'shell'), ('killshell', 'shell'), ('pwsh', 'shell'), ('run_code', 'shell'),
    ('job_output', 'shell'), ('job_kill', 'shell'), ('terminal_open', 'shell'),
    ('terminal_send', 'shell'), ('terminal_read', 'shell'), ('terminal_list', 'shell'),
    ('terminal_close', 'shell'), ('terminal_signal', 'shell'), ('monitor', 'shell'),
    ('read_bash', 'shell'), ('write_bash', 'shell'), ('stop_bash', 'shell'), ('js', 'shell'),
    -- read
    ('read', 'read'), ('read_file', 'read'), ('read_many_files', 'read'), ('view', 'read'),
    ('read_image', 'read'), ('list_directory', 'read'), ('ls', 'read'), ('notebookread', 'read'),
    ('lsp', 'read'), ('list', 'read'),
    -- write
    ('write', 'write'), ('write_file', 'write'), ('create', 'write'), ('write_remote', 'write'),
    -- edit
    ('edit', 'edit'), ('multiedit', 'edit'), ('apply_patch', 'edit'), ('replace', 'edit'),
    ('str_replace_editor', 'edit'), ('notebookedit', 'edit'), ('patch', 'edit'),
    -- search
    ('grep', 'search'), ('glob', 'search'), ('search_file_content', 'search'),
    ('websearch', 'search'), ('web_search', 'search'), ('google_web_search', 'search'),
    ('tool_search', 'search'), ('codesearch', 'search'),
    -- fetch
    ('webfetch', 'fetch'), ('web_fetch', 'fetch'), ('fetch', 'fetch'),
    -- delegate
    ('task', 'delegate'), ('agent', 'delegate'), ('taskoutput', 'delegate'),
    ('subagent', 'delegate'), ('subagent_codex', 'delegate'), ('subagent_fork', 'delegate'),
    ('spawn_agent', 'delegate'), ('wait_agent', 'delegate'), ('close_agent', 'delegate'),
    ('send_message', 'delegate'), ('list_agents', 'delegate'), ('invoke_agent', 'delegate'),
    ('read_agent', 'delegate'),
    -- plan
    ('todowrite', 'plan'), ('todoread', 'plan'), ('todo_write', 'plan'),
    ('update_plan', 'plan'), ('enterplanmode', 'plan'), ('write_todos', 'plan'),
    ('create_goal', 'plan'), ('get_goal', 'plan'), ('update_goal', 'plan'),
    ('complete_task', 'plan'), ('update_todo', 'plan'),
    -- ask_user: the time is the person's, not the tool's
    ('askuserquestion', 'ask_user'), ('ask_user_question', 'ask_user'),
    ('exitplanmode', 'ask_user'), ('exit_plan_mode', 'ask_user'), ('ask_user', 'ask_user'),
    ('question', 'ask_user'),
    -- mcp: the runtimes' own MCP resource tools
    ('list_mcp_resources', 'mcp'), ('list_mcp_resource_templates', 'mcp'),
    ('read_mcp_resource', 'mcp')
) AS t(tool_name, kind);
