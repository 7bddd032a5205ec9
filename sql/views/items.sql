-- items: one row per program fact; semantic = {role, evidence_strength, <one value shape>}.
-- Session references inside semantic name only sessions in the dataset (resolved when parts
-- are written; linked_session_id keeps the reference as the trace states it).
CREATE OR REPLACE VIEW items AS
SELECT item_id, session_id, source_id, loop_id, loop_position, occurred_at, record_ids,
       semantic, linked_session_id
FROM _items;
