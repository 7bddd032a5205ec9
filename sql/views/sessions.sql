-- sessions: one row per (runtime, native id); several sources may support one session. Their
-- single-valued columns come from the session's first source that states them: the first
-- created (the smallest source id among those created at once, or with no creation time).
-- forked_from / delegated_from are published only when the target session is in the dataset.
-- project: the repository the session worked in (see the sessions table's column doc);
-- branch: the git branch the trace states (Claude Code gitBranch, Codex git info).
-- session_usage: the runtime's own total for the session (Mistral Vibe), which includes the
-- calls model_calls holds of it (see the sessions table's column doc).
-- _session_sources: the stored rows, one per (session, source), with the key that orders a
-- session's sources first to last (reports read it too).
CREATE OR REPLACE VIEW _session_sources AS
SELECT *, [coalesce(epoch_ms(created_at), 9223372036854775807), source_ids[1]] AS first_key
FROM _sessions;

CREATE OR REPLACE VIEW sessions AS
WITH merged AS (
    SELECT
        session_id,
        arg_min(runtime, first_key) AS runtime,
        arg_min(native_id, first_key) AS native_id,
        arg_min(identity_record_id, first_key) AS identity_record_id,
        list_sort(flatten(list(source_ids))) AS source_ids,
        min(created_at) AS created_at,
        arg_min(name, first_key) FILTER (WHERE name IS NOT NULL) AS name,
        arg_min(working_directory, first_key)
            FILTER (WHERE working_directory IS NOT NULL) AS working_directory,
        arg_min(project, first_key) FILTER (WHERE project IS NOT NULL) AS project,
        arg_min(branch, first_key) FILTER (WHERE branch IS NOT NULL) AS branch,
        arg_min(forked_from, first_key) FILTER (WHERE forked_from IS NOT NULL)
            AS forked_from,
        arg_min(delegated_from, first_key) FILTER (WHERE delegated_from IS NOT NULL)
            AS delegated_from,
        arg_min(task, first_key) FILTER (WHERE task IS NOT NULL) AS task,
        arg_min(session_usage, first_key) FILTER (WHERE session_usage IS NOT NULL)
            AS session_usage,
        arg_min(session_usage_model, first_key) FILTER (WHERE session_usage IS NOT NULL)
            AS session_usage_model
    FROM _session_sources
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
    m.task, m.session_usage, m.session_usage_model
FROM merged AS m;
