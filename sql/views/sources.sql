-- sources: one row per trace file indexed into the dataset (Source contract).
CREATE OR REPLACE VIEW sources AS
SELECT source_id, locator, runtime, compression
FROM _sources;
