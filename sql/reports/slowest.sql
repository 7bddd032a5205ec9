-- slowest: the slowest tool calls, by the duration the runtime reported or, where it reported
-- none, the time between the call's and its output's records (duration_source says which),
-- with the command text, outcome and session. Calls that wait for the person (kind ask_user:
-- a question, plan approval) are left out: their time is the person's (the tools report shows
-- them as their own kind).
-- detail (hidden first in a narrow table): duration_source, exit_code, started
SELECT
    coalesce(c.duration_ms, c.elapsed_ms) AS duration_ms,
    CASE WHEN c.duration_ms IS NOT NULL THEN 'reported' ELSE 'timestamps' END
        AS duration_source,
    c.tool_name,
    c.kind,
    left(coalesce(c.command, c.arguments::VARCHAR), 200) AS command,
    c.exit_code,
    c.failed,
    c.runtime,
    s.native_id AS session,
    strftime(c.local_start, '%Y-%m-%d %H:%M:%S') AS started
FROM report_calls AS c
JOIN sessions AS s USING (session_id)
WHERE coalesce(c.duration_ms, c.elapsed_ms) IS NOT NULL AND c.kind <> 'ask_user'
ORDER BY duration_ms DESC, c.item_id
LIMIT coalesce(getvariable('row_limit'), 20)
