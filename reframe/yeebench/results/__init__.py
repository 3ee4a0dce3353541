"""Results tooling: ingest ReFrame run reports into rows with provenance, compare
runs with a noise-aware regression gate, plot, and write a self-contained report."""
