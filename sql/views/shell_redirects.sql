-- shell_redirects: one row per redirection written in a shell tool call (e.g. "how often
-- does the agent send stderr to /dev/null"); statement_position indexes its fragment.
CREATE OR REPLACE VIEW shell_redirects AS
WITH redirects AS (
    SELECT item_id, session_id, loop_id, fragment_position, statement_position,
           unnest(statement.redirects) AS r
    FROM shell_statements
)
SELECT item_id, session_id, loop_id, fragment_position, statement_position,
       r.source_fd AS source_fd, r.operator AS operator, r.target AS target
FROM redirects;
