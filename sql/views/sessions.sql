-- sessions: one row per (runtime, native id); several sources may support one session.
-- forked_from / delegated_from are published only when the target session is in the dataset.
-- project: the repository the session worked in (see the sessions table's column doc);
-- branch: the git branch the trace states (Claude Code gitBranch, Codex git info).
CREATE OR REPLACE VIEW sessions AS
WITH merged AS (
    SELECT
        session_id,
        arg_min(runtime, source_ids[1]) AS runtime,
        arg_min(native_id, source_ids[1]) AS native_id,
        arg_min(identity_record_id, source_ids[1]) AS identity_record_id,
        list_sort(flatten(list(source_ids))) AS source_ids,
        min(created_at) AS created_at,
        arg_min(name, source_ids[1]) FILTER (WHERE name IS NOT NULL) AS name,
        arg_min(working_directory, source_ids[1])
            FILTER (WHERE working_directory IS NOT NULL) AS working_directory,
        arg_min(project, source_ids[1]) FILTER (WHERE project IS NOT NULL) AS project,
        arg_min(branch, source_ids[1]) FILTER (WHERE branch IS NOT NULL) AS branch,
        arg_min(forked_from, source_ids[1]) FILTER (WHERE forked_from IS NOT NULL)
            AS forked_from,
        arg_min(delegated_from, source_ids[1]) FILTER (WHERE delegated_from IS NOT NULL)
            AS delegated_from,
        arg_min(task, source_ids[1]) FILTER (WHERE task IS NOT NULL) AS task
    FROM _sessions
    GROUP BY session_id
)
SELECT
    m.session_id, m.runtime, m.native_id, m.identity_record_id, m.source_ids, m.created_at,
    m.name, m.working_directory,
    m.project, m.branch,
    CASE WHEN m.forked_from.session_id IN (SELECT session_id FROM _sessions)
              AND m.forked_from.session_id <> m.session_id
         THEN m.forked_from END AS forked_from,
    CASE WHEN m.delegated_from.session_id IN (SELECT session_id FROM _sessions)
              AND m.delegated_from.session_id <> m.session_id
         THEN m.delegated_from END AS delegated_from,
    m.task
FROM merged AS m;
