-- model_calls: one row per model call (API response) the trace records usage for. usage has
-- the members of loops.usage (input includes cache reads and writes; absent stays absent);
-- a loop's usage is the sum of its calls'. outcome: ok (answered), error (a failed attempt),
-- aborted (cut by the user); a failed attempt that billed nothing has no usage. A call outside any loop (e.g. a compaction summary
-- requested between loops) has no loop_id and still counts in its session's usage.
CREATE OR REPLACE VIEW model_calls AS
SELECT call_id, session_id, loop_id, occurred_at, model, provider, outcome, usage, record_ids,
    source_id
FROM _model_calls;
