"""Acceptance (paper 003, test 15): the job's storage, written and read back.

  AcceptanceStorage %tool   fio, dd (fsync'd) or the solver's binary per-rank output; reads with
                            O_DIRECT, or after dropping the file from the page cache (pagecache.py);
                            NOT MEASURED when the page cache served the reads. FOMs:
                            write_bandwidth, read_bandwidth (GB/s).
"""
import os
import shlex

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import fixture, parameter, run_after, sanity_function, variable

from yeebench import shell, stage_files, sweeps
from yeebench.checks.io import storage
from yeebench.acceptance_check import AcceptanceMixin, last_line, python_command
from yeebench.base import YeebenchCheck
from yeebench.fixtures import SolverBinary
from yeebench.parsers import ParseError
from yeebench.parsers.jsonreport import parse_yee

#: Written by the yee-io job when the solver offers no binary per-rank output (the reason).
UNSUPPORTED = "yee-io-unsupported.txt"


@rfm.simple_test
class AcceptanceStorage(AcceptanceMixin, YeebenchCheck):
    """Write/read bandwidth of the output directory: fio, dd, and the solver's own I/O (test 15)."""

    tool = parameter(["fio", "dd", "yee-io"])
    yee = fixture(SolverBinary, scope="environment")
    descr = "Storage: write and read bandwidth of the output directory (GB/s)"
    #: Directory to measure (default: the test's stage directory, where runs write output).
    storage_dir = variable(str, value="")
    #: Bytes written per file.  Reads bypass (O_DIRECT) or drop the page cache, so a small file is honest.
    size_mib = variable(int, value=128)
    yee_opts = variable(str, value="--nx 64 --ny 64 --nz 64 --steps 20 --quiet")
    #: Solver ranks writing one file each (capped at the cores of a node).
    io_ranks = variable(int, value=2)
    num_tasks = 1

    @run_after("setup")
    def plan(self):
        target = self.storage_dir or self.stagedir
        self._target = target
        # fio and dd: one process on the node, no MPI (run_sweep's local launcher).
        # Reads must come from the storage, not the page cache: O_DIRECT first; where the file
        # system refuses it, drop the file's pages and read only if none are left (pagecache.py).
        drop = f"{python_command('yeebench.checks.io.pagecache')} drop"
        if self.tool == "fio":
            self.require_feature("fio")
            fio = "fio"  # on the nodes' PATH (feature fio)
            common = (f"{fio} --directory={shlex.quote(target)} --bs=1M --size={self.size_mib}M "
                      "--ioengine=psync --end_fsync=1 --output-format=json --name=yeebench-io")
            data = shlex.quote(os.path.join(target, "yeebench-io.0.0"))
            sweeps.run_sweep(self, [
                f"{common} --rw=write --output=fio_write.json",
                f"if {common} --rw=read --direct=1 --output=fio_read.json 2> fio_read.err; then "
                f"echo O_DIRECT > read_method.txt; else {drop} {data} > read_method.txt && "
                f"{common} --rw=read --invalidate=0 --output=fio_read.json; fi",
                f"rm -f {shlex.quote(target)}/yeebench-io.*"])
        elif self.tool == "dd":
            path = shlex.quote(os.path.join(target, "yeebench-dd.bin"))
            sweeps.run_sweep(self, [
                f"LC_ALL=C dd if=/dev/zero of={path} bs=1M count={self.size_mib} conv=fsync 2> dd_write.txt",
                f"if LC_ALL=C dd if={path} of=/dev/null bs=1M iflag=direct 2> dd_read.txt; then "
                f"echo O_DIRECT > read_method.txt; else {drop} {path} > read_method.txt && "
                f"LC_ALL=C dd if={path} of=/dev/null bs=1M 2> dd_read.txt; fi",
                f"rm -f {path}"])
        else:
            self._plan_solver_io(target)

    def _plan_solver_io(self, target):
        yee = self.yee.paths["yee"]
        ranks = max(1, min(self.io_ranks, self.node_topology.num_cores))
        self.num_tasks = ranks
        out = os.path.join(target, "yee-io")
        # The solver's output options are read from its --help on the node, when the job runs: a
        # solver without binary per-rank output ends the job with the reason (NOT MEASURED).
        probe = f"{python_command('yeebench.checks.io.storage')} yee-help.txt"
        self.prerun_cmds = [f"{shlex.quote(yee)} --help > yee-help.txt 2>&1",
                            f"if ! YEE_IO_OPTS=$({probe} 2> {UNSUPPORTED}); then exit 0; fi",
                            f"rm -f {UNSUPPORTED}",
                            f"rm -rf {shlex.quote(out)} && mkdir -p {shlex.quote(out)}",
                            f"cd {shlex.quote(out)}"]
        self.executable = yee
        self.executable_opts = (shlex.split(self.yee_opts) + [shell.Verbatim("$YEE_IO_OPTS"), "--report",
                                                               os.path.join(self.stagedir, "yee_io.json")])
        self.postrun_cmds = [f"cd {shlex.quote(self.stagedir)}",
                             f"echo output_bytes $(du -sb {shlex.quote(out)} | cut -f1)",
                             f"rm -rf {shlex.quote(out)}"]

    def _read(self, name):
        return stage_files.read_stage_file(self, name)

    @sanity_function
    def validate(self):
        unmeasured = ""
        try:
            if self.tool in ("fio", "dd"):
                method = storage.read_method(self._read("read_method.txt") if os.path.exists(
                    os.path.join(self.stagedir, "read_method.txt")) else "")
                if self.tool == "fio":
                    self._bw = {"write": storage.fio_bandwidth(self._read("fio_write.json"))["write"]}
                    read = lambda: storage.fio_bandwidth(self._read("fio_read.json"))["read"]  # noqa: E731
                else:
                    self._bw = {"write": storage.dd_bandwidth(self._read("dd_write.txt"))}
                    read = lambda: storage.dd_bandwidth(self._read("dd_read.txt"))  # noqa: E731
                if method["measured"]:
                    self._bw["read"] = read()
                else:
                    unmeasured = f"read bandwidth NOT MEASURED: {method['why']}"
                self._read_how = method["why"]
            else:
                if os.path.exists(os.path.join(self.stagedir, UNSUPPORTED)):
                    return self.not_measured(self._read(UNSUPPORTED).strip() or "the solver has no "
                                             "binary per-rank output")
                report = parse_yee(self._read(str(self.stdout)) + self._read("yee_io.json"))
                written = int(sn.evaluate(sn.extractsingle(r"output_bytes (\d+)", self.stdout, 1)))
                io_s = float((report.get("seconds") or {}).get("io") or 0)
                if written <= 0 or io_s <= 0:
                    raise ValueError(f"solver wrote {written} bytes in {io_s} s of I/O")
                self._bw = {"write": written / io_s / 1e9}
                self._solver_note = (f" ({self.num_tasks} ranks wrote {written / 1e6:.1f} MB of binary "
                                     f"per-rank output in {io_s:.3g} s of solver I/O time"
                                     f"{', fsync' if '--output-fsync' in self._read('yee-help.txt') else ''})")
        except (OSError, ValueError, ParseError) as err:
            why = last_line(self, self.stderr)
            return self.verdict(False, f"{self.tool}: {err}" + (f" ({why})" if why else ""))
        figures = ", ".join(f"{k} {v:.3g} GB/s" for k, v in self._bw.items())
        note = (self._solver_note if self.tool == "yee-io"
                else f" ({self.size_mib} MiB file; read {self._read_how})")
        if unmeasured:
            return self.not_measured(f"{self.tool} in {self._target}: {figures}; {unmeasured}")
        return self.verdict(True, f"{self.tool} in {self._target}: {figures}{note}")

    def collect_foms(self):
        if not self.measured and not getattr(self, "_bw", None):
            return  # the solver offered no per-rank output: nothing was measured
        for kind, value in self._bw.items():
            self.add_fom(f"{kind}_bandwidth", value, "GB/s", "higher")
