"""Paper 001's figures from an output sweep's rows: time per step vs N^3 and the ratio to ASCII."""
from yeebench.results import plots, sources

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _row(metric, value):
    return {"schema": "yeebench-row", "schema_version": 1, "run_id": "r", "timestamp": "2026-01-01T00:00:00Z",
            "system": "s", "partition": "p", "environ": "e", "check": "IoOutputPaper", "parameters": {},
            "metric": metric, "value": value, "unit": "s", "direction": "lower", "direction_source": "declared",
            "repeat": 0}


def test_io_sweep_rows_give_the_time_and_ratio_figures(tmp_path):
    rows = [_row(f"{fmt}_p{p}_n{n}_io_s", scale * p * n ** 3 * 1e-7)
            for fmt, scale in (("ascii", 10), ("binary", 1), ("hdf5_zlib", 3)) for p in (1, 2) for n in (20, 30)]
    rows.append(_row("ascii_fit_rms_error", 2.0))
    written = plots.write_plots([sources.RowSource("r", rows, [])], tmp_path)
    names = sorted(p.name for p in written)
    assert names == ["IoOutputPaper_ratio.png", "IoOutputPaper_time.png"]   # claimed: no generic bars
    for path in written:
        assert path.read_bytes().startswith(PNG_MAGIC)


def test_without_ascii_there_is_no_ratio_figure(tmp_path):
    rows = [_row(f"binary_p1_n{n}_io_s", n * 1e-3) for n in (20, 30)]
    paths, notes = plots.write_figures([sources.RowSource("r", rows, [])], tmp_path)
    assert [p.name for p in paths] == ["IoOutputPaper_time.png"]
    assert notes == ["IoOutputPaper: no ASCII times to compare the other formats with"]
