"""Storage bandwidth of the output directory: parse fio, dd and the solver's own I/O.

GB here is 1e9 bytes.  fio runs with --end_fsync so a write counts only once it
is on the device (or the file server); dd uses conv=fsync for the same reason.
Reads count only when they cannot come from the page cache (read_method).
"""
import json
import re

DD_UNITS = {"B": 1, "kB": 1e3, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
            "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}


def fio_bandwidth(text):
    """{'write': GB/s, 'read': GB/s} (whichever the fio JSON holds) from `--output-format=json`."""
    start = text.find("{")
    if start < 0:
        raise ValueError("fio: no JSON object in the output")
    try:
        doc = json.loads(text[start:])
    except json.JSONDecodeError as err:
        raise ValueError(f"fio: output is not JSON ({err.msg})") from None
    jobs = doc.get("jobs") or []
    if not jobs:
        raise ValueError("fio: JSON has no jobs")
    out = {}
    for job in jobs:
        if job.get("error"):
            raise ValueError(f"fio: job {job.get('jobname')} failed with error {job['error']}")
        for kind in ("write", "read"):
            bw = (job.get(kind) or {}).get("bw_bytes", 0)
            if bw:
                out[kind] = out.get(kind, 0.0) + bw / 1e9
    if not out:
        raise ValueError("fio: no job moved any data")
    return out


def dd_bandwidth(text):
    """GB/s of a `dd` summary line ('N bytes (...) copied, T s, ...'), computed from bytes/time."""
    match = re.search(r"^(\d+) bytes .*copied, ([\d.,eE+-]+) s", text, re.M)
    if not match:
        raise ValueError("dd: no 'N bytes ... copied, T s' line")
    seconds = float(match.group(2).replace(",", "."))
    if seconds <= 0:
        raise ValueError("dd: zero elapsed time")
    return int(match.group(1)) / seconds / 1e9


def solver_io_options(help_text):
    """The solver's options for binary per-rank output, or None when it has none yet.

    Feature probe: `yee --help` must mention --output with a binary format and an
    --output-strategy with a per-rank choice (named per-rank or file-per-rank).
    """
    if "--output" not in help_text or "binary" not in help_text:
        return None
    strategy = re.search(r"(file-per-rank|per-rank)", help_text)
    if "--output-strategy" not in help_text or not strategy:
        return None
    opts = ["--output", "binary", "--output-strategy", strategy.group(1)]
    if "--output-fsync" in help_text:  # count a write once it is on the device, like fio and dd
        opts.append("--output-fsync")
    return opts


def read_method(text):
    """{'measured': bool, 'why': str} from the read step's record (read_method.txt).

    'O_DIRECT': the read bypassed the page cache.  A pagecache.py line: the
    file's pages were dropped; the read counts only when none stayed resident.
    Anything else: the read step did not run as planned, so nothing is measured.
    """
    from yeebench.checks.io import pagecache
    text = text.strip()
    if text == "O_DIRECT":
        return {"measured": True, "why": "with O_DIRECT, bypassing the page cache"}
    counts = pagecache.parse(text)
    if counts is None:
        return {"measured": False, "why": "the file system refused O_DIRECT and the page cache could not "
                                          "be dropped for the file (no pagecache record)"}
    left, total = counts
    if total and left == 0:
        return {"measured": True, "why": f"after dropping the file from the page cache (0 of {total} "
                                         "pages resident; the file system refused O_DIRECT)"}
    return {"measured": False, "why": f"the file system refused O_DIRECT and {left} of {total} pages stayed "
                                      "in the page cache after dropping them: a read would measure memory"}


def main(argv=None):
    """`python -m yeebench.checks.io.storage HELP_FILE`: the solver's binary per-rank output options
    from its saved `yee --help` (run in the job, on the node), or exit 1 with the reason."""
    import sys
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m yeebench.checks.io.storage YEE_HELP_FILE", file=sys.stderr)
        return 2
    try:
        with open(argv[0], errors="replace") as f:
            opts = solver_io_options(f.read())
    except OSError as err:
        print(f"storage: cannot read {argv[0]}: {err.strerror}", file=sys.stderr)
        return 2
    if opts is None:
        print("the solver has no binary per-rank output yet (`yee --help` lists no --output binary / "
              "--output-strategy per-rank)", file=sys.stderr)
        return 1
    print(" ".join(opts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
