-- tool_kinds: the runtime-neutral kind of each tool name the runtimes use (matched on the name in
-- lower case), as each runtime's registry entry declares it (traceidx.runtimes): shell (runs a
-- command, or talks to one it started), read, write, edit, search (files or the web), fetch (a
-- URL), delegate (hands work to a subagent, or waits for one), plan (the agent's own plan or
-- task list), ask_user (waits for the person: a question, plan approval), mcp (a tool of an
-- MCP server); tool_calls.kind falls back to shell for a declared shell tool, mcp for a name
-- with an MCP server prefix (server__tool), else other.
CREATE OR REPLACE VIEW tool_kinds AS
SELECT tool_name, kind FROM _tool_kinds;
