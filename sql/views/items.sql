-- items: one row per program fact; semantic = {role, evidence_strength, <one value shape>}.
-- Session references inside semantic are published only when the target session exists.
CREATE OR REPLACE VIEW items AS
WITH known AS (SELECT DISTINCT session_id AS sid FROM _sessions)
SELECT
    i.item_id, i.session_id, i.source_id, i.loop_id, i.loop_position, i.occurred_at,
    i.record_ids,
    struct_update(
        i.semantic,
        delegation := CASE WHEN i.semantic.delegation IS NOT NULL THEN struct_update(
            i.semantic.delegation,
            child_session_id := (SELECT sid FROM known
                                 WHERE sid = i.semantic.delegation.child_session_id)) END,
        subagent_activity := CASE WHEN i.semantic.subagent_activity IS NOT NULL THEN struct_update(
            i.semantic.subagent_activity,
            subagent_session_id := (SELECT sid FROM known
                                    WHERE sid = i.semantic.subagent_activity.subagent_session_id)) END,
        subagent_report := CASE WHEN i.semantic.subagent_report IS NOT NULL THEN struct_update(
            i.semantic.subagent_report,
            source_session_id := (SELECT sid FROM known
                                  WHERE sid = i.semantic.subagent_report.source_session_id)) END
    ) AS semantic
FROM _items AS i;
