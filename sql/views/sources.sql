-- sources: one row per trace file indexed into the dataset (Source contract), with the origin
-- it came from; a copy of another source's records names it in duplicate_of.
CREATE OR REPLACE VIEW sources AS
SELECT source_id, locator, runtime, compression, origin, duplicate_of
FROM _sources;
