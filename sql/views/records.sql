-- records: one row per complete line of a source (or element of a document source, named by
-- its json_path; or row of a database source, located by its table and key), with its byte
-- range and fingerprint.
CREATE OR REPLACE VIEW records AS
SELECT record_id, source_id, source_position, content_range, fingerprint, occurred_at,
       parse_status, native_type, json_path, row
FROM _records;
