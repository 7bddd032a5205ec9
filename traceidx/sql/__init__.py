"""SQL shipped with traceidx: view definitions (views/) and report queries (reports/)."""
