-- shell_invocations: one row per program invocation written in a shell tool call, with the
-- call's outcome (exit_code, failed, duration_ms from its last output), e.g. "which programs
-- does the agent run most, and which fail". Positions are 0-based.
CREATE OR REPLACE VIEW shell_invocations AS
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
), invocations AS (
    SELECT item_id, session_id, loop_id, fragment_position, statement_position,
           all_statements[statement_position + 1] AS st,
           unnest(all_statements[statement_position + 1].invocations) AS inv
    FROM statements
)
SELECT v.item_id, v.session_id, v.loop_id, v.fragment_position, v.statement_position,
       v.inv.program AS program, v.inv.argv AS argv, v.st.connector AS connector,
       v.st.pipeline.id AS pipeline_id, v.st.pipeline.position AS pipeline_position,
       t.exit_code, t.failed, t.duration_ms
FROM invocations AS v
LEFT JOIN tool_calls AS t USING (item_id);
