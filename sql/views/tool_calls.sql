-- tool_calls: each tool call (agent.tool_call and agent.tool_call.shell) with its output;
-- kind: the runtime-neutral kind of its tool (see tool_kinds).
-- duration_ms is what the runtime reported; elapsed_ms is derived from timestamps
-- (output record time minus call record time) and is null when either is unknown.
CREATE OR REPLACE VIEW tool_calls AS
WITH outputs AS (
    SELECT
        semantic.tool_output.call_item_id AS call_item_id,
        count(*) AS output_count,
        arg_max(item_id, coalesce(loop_position, 0)) AS output_item_id,
        arg_max(semantic.tool_output.exit_code, coalesce(loop_position, 0)) AS exit_code,
        arg_max(semantic.tool_output.failed, coalesce(loop_position, 0)) AS failed,
        arg_max(semantic.tool_output.duration_ms, coalesce(loop_position, 0)) AS duration_ms,
        arg_max(occurred_at, coalesce(loop_position, 0)) AS output_at
    FROM items
    WHERE semantic.role = 'tool.output' AND semantic.tool_output.call_item_id IS NOT NULL
    GROUP BY 1
)
SELECT
    c.item_id, c.session_id, c.loop_id,
    c.semantic.role AS role,
    c.semantic.tool_call.tool_name AS tool_name,
    coalesce(k.kind, CASE
        WHEN c.semantic.role = 'agent.tool_call.shell' THEN 'shell'
        WHEN regexp_matches(c.semantic.tool_call.tool_name, '^[A-Za-z0-9_.-]+__.') THEN 'mcp'
        ELSE 'other' END) AS kind,
    c.semantic.tool_call.shell_fragments[1].text.value AS command,
    c.semantic.tool_call.arguments::JSON AS arguments,
    o.output_item_id, coalesce(o.output_count, 0) AS output_count,
    o.exit_code, o.failed, o.duration_ms,
    CASE WHEN o.output_at >= c.occurred_at
         THEN (epoch_ms(o.output_at) - epoch_ms(c.occurred_at)) END AS elapsed_ms,
    c.occurred_at AS started_at
FROM items AS c
LEFT JOIN outputs AS o ON o.call_item_id = c.item_id
LEFT JOIN tool_kinds AS k ON k.tool_name = lower(c.semantic.tool_call.tool_name)
WHERE c.semantic.role IN ('agent.tool_call', 'agent.tool_call.shell');
