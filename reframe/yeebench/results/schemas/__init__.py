"""JSON Schemas of rows and provenance (data files; a package so that they are installed)."""
