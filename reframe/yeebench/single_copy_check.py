"""The checks' side of yeebench.single_copy: probe in the job, record the decision, fail on MPI errors.

Mixed into checks whose ranks share a node (point-to-point intra-node, collectives): the check
says which program sends the probe's message (`single_copy_probe_argv`) and which transport it
selected (`single_copy_transport`); the mixin puts the probe first in the job and the measured-run
marker last before the program (the parsers read the program's output after it), reads the decision
back into the loggable `single_copy` (a row parameter of every figure) and logs it with its reason.
"""

import reframe as rfm
import reframe.utility.sanity as sn
import reframe.utility.typecheck as typ
from reframe.core.builtins import run_before, variable
from reframe.core.logging import getlogger

from yeebench import launch, single_copy, stage_files
from yeebench.solver import keep_output_files


class SingleCopyDecided(rfm.RegressionTestPlugin):
    #: Single-copy (CMA) the job ran with, decided inside it (yeebench.single_copy): 'cma' or 'none';
    #: None where the check's ranks share no node's memory or its transport has no single-copy path.
    single_copy = variable(str, type(None), value=None, loggable=True)

    #: Why: the probe's verdict, or its MPI error line.
    single_copy_reason = variable(str, type(None), value=None, loggable=True)

    #: Whether this case probes (set by the check's setup; False e.g. for inter-node pairs).
    single_copy_probed = variable(typ.Bool, value=False)

    def single_copy_probe_argv(self):
        '''Override: the check's program and arguments sending one single_copy.PROBE_BYTES message.'''
        raise NotImplementedError

    def single_copy_transport(self):
        '''Override: the transport (yeebench.mpi.TRANSPORTS key), or None for Open MPI's own choice.'''
        return None

    @run_before('run', always_last=True)
    def _probe_single_copy_first(self):
        transport = self.single_copy_transport()
        self.single_copy_probed = self.single_copy_probed and transport in single_copy.USES_SINGLE_COPY
        if not self.single_copy_probed:
            return
        prefix = self.launch_prefix(2, launch.pair_options(launch.partition_launcher(self), False))
        self.prerun_cmds = (single_copy.probe_commands(prefix, self.single_copy_probe_argv(), transport)
                            + list(self.prerun_cmds) + [single_copy.measured_run_marker()])
        keep_output_files(self, single_copy.DECISION_FILE, single_copy.PROBE_OUTPUT)

    @run_before('sanity')
    def _read_single_copy_decision(self):
        if not self.single_copy_probed or self.is_dry_run():
            return
        self.single_copy, self.single_copy_reason = single_copy.decision(self.stagedir)
        self.observations['single_copy'] = {'mechanism': self.single_copy, 'reason': self.single_copy_reason}
        getlogger().info(f'{self.display_name}: single-copy {self.single_copy or "undecided"} '
                         f'({self.single_copy_reason})')

    def assert_no_mpi_errors(self, *files):
        '''Sanity: the job's stderr (and `files`) hold no MPI error line, and a probed job decided.'''
        texts = []
        for name in (str(self.stderr),) + files:
            text = stage_files.read_stage_file(self, name, None)
            if text is not None:
                texts.append(text)
        line = single_copy.first_error_line('\n'.join(texts))
        decided = not self.single_copy_probed or self.single_copy is not None
        return sn.all([sn.assert_true(decided, f'single-copy undecided: {self.single_copy_reason}'),
                       sn.assert_false(line, f'MPI error on stderr: {line}')])
