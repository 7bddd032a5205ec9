-- shell_invocations: one row per program invocation written in a shell tool call, with the
-- call's outcome (exit_code, failed, duration_ms from its last output), e.g. "which programs
-- does the agent run most, and which fail". Positions are 0-based.
CREATE OR REPLACE VIEW shell_invocations AS
WITH invocations AS (
    SELECT item_id, session_id, loop_id, fragment_position, statement_position, statement AS st,
           unnest(statement.invocations) AS inv
    FROM shell_statements
)
SELECT v.item_id, v.session_id, v.loop_id, v.fragment_position, v.statement_position,
       v.inv.program AS program, v.inv.argv AS argv, v.st.connector AS connector,
       v.st.pipeline.id AS pipeline_id, v.st.pipeline.position AS pipeline_position,
       t.exit_code, t.failed, t.duration_ms
FROM invocations AS v
LEFT JOIN tool_calls AS t USING (item_id);
