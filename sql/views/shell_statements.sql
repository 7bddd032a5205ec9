-- shell_statements: one row per statement of every shell fragment of a shell tool call (the
-- base of shell_invocations and shell_redirects); positions are 0-based.
CREATE OR REPLACE VIEW shell_statements AS
WITH fragments AS (
    SELECT i.item_id, i.session_id, i.loop_id,
           unnest(generate_series(0, len(i.semantic.tool_call.shell_fragments) - 1))
               AS fragment_position,
           i.semantic.tool_call.shell_fragments AS all_fragments
    FROM items AS i
    WHERE i.semantic.role = 'agent.tool_call.shell'
), numbered AS (
    SELECT item_id, session_id, loop_id, fragment_position,
           unnest(generate_series(0, len(all_fragments[fragment_position + 1].statements) - 1))
               AS statement_position,
           all_fragments[fragment_position + 1].statements AS all_statements
    FROM fragments
)
SELECT item_id, session_id, loop_id, fragment_position, statement_position,
       all_statements[statement_position + 1] AS statement
FROM numbered;
