-- shell_redirects: one row per redirection written in a shell tool call (e.g. "how often
-- does the agent send stderr to /dev/null"); statement_position indexes its fragment.
CREATE OR REPLACE VIEW shell_redirects AS
WITH fragments AS (
    SELECT i.item_id, i.session_id, i.loop_id,
           unnest(generate_series(0, len(i.semantic.tool_call.shell_fragments) - 1))
               AS fragment_position,
           i.semantic.tool_call.shell_fragments AS all_fragments
    FROM items AS i
    WHERE i.semantic.role = 'agent.tool_call.shell'
), statements AS (
    SELECT item_id, session_id, loop_id, fragment_position,
           unnest(generate_series(0, len(all_fragments[fragment_position + 1].statements) - 1))
               AS statement_position,
           all_fragments[fragment_position + 1].statements AS all_statements
    FROM fragments
), redirects AS (
    SELECT item_id, session_id, loop_id, fragment_position, statement_position,
           unnest(all_statements[statement_position + 1].redirects) AS r
    FROM statements
)
SELECT item_id, session_id, loop_id, fragment_position, statement_position,
       r.source_fd AS source_fd, r.operator AS operator, r.target AS target
FROM redirects;
