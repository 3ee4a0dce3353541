"""Every difference between MPI launchers, in one place.

The checks say what they want (a placement Layout, ranks packed onto cores, a pair of ranks, no
binding at all, a prefix for an extra run inside the job) and this module turns it into options for
the launcher ReFrame gives the job (`test.job.launcher`, built from the partition's `launcher`):

  * Open MPI's `mpirun` / `mpiexec`: --map-by/--bind-to, rankfiles, -x for the environment,
    --oversubscribe only when a node has fewer cores than ranks x threads;
  * Slurm's `srun`: --cpu-bind/--distribution/--ntasks-per-node;
  * any other launcher (e.g. `local`): no options, the program places itself.

No other file of the check library tests a launcher name (a unit test greps for them).
"""
import shlex

from yeebench.placement import packed_openmpi_options

#: ReFrame launcher names that start Open MPI's mpirun (both accept the same options).
MPIRUN_NAMES = ('mpirun', 'mpiexec')
SRUN_NAMES = ('srun',)
#: ReFrame launchers that start the program once, whatever the task count (`local` is ReFrame's
#: default for a local partition): a case of several ranks skips there, naming the launcher.
ONE_PROCESS_NAMES = ('local', 'ssh')
#: What prints the Open MPI version (host or image), for the hybrid-container ABI check.
OPENMPI_VERSION_COMMAND = ('mpirun', '--version')


def registered_name(launcher):
    '''The name a ReFrame launcher (instance or class) was registered under.'''
    return getattr(launcher, 'registered_name', '') or ''


def partition_launcher(test):
    '''Name of the launcher the test's partition declares (what its jobs are launched with).'''
    return registered_name(test.current_partition.launcher_type)


def job_launcher(test):
    '''Name of the launcher of the test's job (a check may have replaced the partition's one).'''
    job = getattr(test, 'job', None)
    launcher = getattr(job, 'launcher', None) if job is not None else None
    return registered_name(launcher) if launcher is not None else partition_launcher(test)


def family(name):
    '''`mpirun` (Open MPI's mpirun/mpiexec), `srun`, or '' for a launcher that takes no options.'''
    if name in MPIRUN_NAMES:
        return 'mpirun'
    if name in SRUN_NAMES:
        return 'srun'
    return ''


def is_mpirun(test):
    return family(job_launcher(test)) == 'mpirun'


def is_srun(test):
    return family(job_launcher(test)) == 'srun'


def set_options(test, options):
    test.job.launcher.options = list(options)


def add_options(test, options):
    test.job.launcher.options = list(test.job.launcher.options) + list(options)


# -- capabilities -------------------------------------------------------------------------------
def one_process_reason(test, num_tasks, name=None):
    '''Why `num_tasks` ranks cannot start with the partition's launcher (or `name`), or None.'''
    name = name or partition_launcher(test)
    if (num_tasks or 0) > 1 and name in ONE_PROCESS_NAMES:
        return (f'{num_tasks} ranks need an MPI launcher; partition {test.current_partition.fullname} '
                f'launches with {name!r}, which starts one process: set its launcher to mpirun, mpiexec or srun')
    return None


def rankfile_unsupported(test, for_prefix=False):
    '''Why this partition's launcher cannot take an Open MPI rankfile, or None (`for_prefix`: for an
    extra run inside the job, launched with the partition's launcher, see `prefix`).'''
    name = partition_launcher(test) if for_prefix else job_launcher(test)
    if family(name) == 'mpirun':
        return None
    return (f'rankfiles are an Open MPI mpirun feature; this partition launches with {name} '
            f'(launcher mpirun or mpiexec runs this case)')


# -- options ---------------------------------------------------------------------------------------
def oversubscribe_options(cores_needed_per_node, num_cores, env_names=()):
    '''Open MPI: --oversubscribe only when a node has fewer cores than needed; -x per env var.'''
    opts = ['--oversubscribe'] if num_cores and cores_needed_per_node > num_cores else []
    for name in env_names:
        opts += ['-x', name]
    return opts


def apply_layout(test, layout, num_cores, rankfile=None):
    '''Launcher options of a placement Layout; an Open MPI rankfile is written by a pre-run command.'''
    fam = family(job_launcher(test))
    if fam == 'mpirun':
        if rankfile:
            test.prerun_cmds.append(f"printf '%s' {shlex.quote(layout.rankfile())} > {rankfile}")
            opts = ['--rankfile', rankfile, '--mca', 'rmaps_rank_file_physical', '1']
        else:
            opts = layout.openmpi_options()
        set_options(test, opts + oversubscribe_options(layout.ranks_per_node * layout.threads, num_cores,
                                                       list(layout.omp_env())))
    elif fam == 'srun':
        set_options(test, layout.srun_options())


def apply_packed(test, ranks_per_node, threads, num_cores, env_names):
    '''`ranks_per_node` x `threads` on consecutive cores; more than the cores run unbound.'''
    over = ranks_per_node * threads > num_cores
    fam = family(job_launcher(test))
    if fam == 'mpirun':
        if over:
            opts = ['--bind-to', 'none']
        else:
            pe = f':PE={threads}' if threads > 1 else ''
            opts = ['--map-by', f'ppr:{ranks_per_node}:node{pe}', '--bind-to', 'core']
        omp = [n for n in env_names if n.startswith('OMP_')]
        set_options(test, opts + oversubscribe_options(ranks_per_node * threads, num_cores, omp))
    elif fam == 'srun':
        set_options(test, ['--overcommit', '--cpu-bind=none'] if over else ['--cpu-bind=cores'])


def layout_options(test, layout, num_cores, env_names=()):
    '''Launcher options realising a placement Layout, for an extra run (`prefix`); nothing is set on the job.'''
    fam = family(partition_launcher(test))
    if fam == 'mpirun':
        return layout.openmpi_options() + oversubscribe_options(layout.ranks_per_node * layout.threads, num_cores,
                                                                list(env_names))
    if fam == 'srun':   # a step spreads over every node of the job unless told its own node count
        return [f'--nodes={layout.num_nodes}', f'--ntasks-per-node={layout.ranks_per_node}'] + layout.srun_options()
    return []


def rankfile_options(test, rankfile, layout, num_cores, env_names=()):
    '''Options launching an extra run (`prefix`) from the Open MPI rankfile `rankfile` (written by the
    caller from `layout.rankfile()`); None where the partition's launcher takes none (rankfile_unsupported).'''
    if family(partition_launcher(test)) != 'mpirun':
        return None
    return ['--rankfile', rankfile, '--mca', 'rmaps_rank_file_physical', '1'] + oversubscribe_options(
        layout.ranks_per_node * layout.threads, num_cores, list(env_names))


def spread_unbound_options(test, ranks_per_node, cpus_per_task, env_names=()):
    '''`ranks_per_node` ranks on each node, none bound: the scheduler places threads and pages freely.'''
    fam = family(partition_launcher(test))
    if fam == 'mpirun':
        opts = ['--map-by', f'ppr:{ranks_per_node}:node', '--bind-to', 'none']
        for name in env_names:
            opts += ['-x', name]
        return opts
    if fam == 'srun':
        return [f'--ntasks-per-node={ranks_per_node}', f'--cpus-per-task={cpus_per_task}', '--cpu-bind=none']
    return []


def packed_options(test, ranks_per_node, num_cores, env_names=()):
    '''Single-threaded ranks, `ranks_per_node` on consecutive cores of each node (packing comparisons);
    more than the cores run unbound.'''
    fam = family(partition_launcher(test))
    over = ranks_per_node > num_cores
    if fam == 'mpirun':
        opts = ['--map-by', f'ppr:{ranks_per_node}:node', '--bind-to', 'none' if over else 'core']
        return opts + oversubscribe_options(ranks_per_node, num_cores, list(env_names))
    if fam == 'srun':
        return [f'--ntasks-per-node={ranks_per_node}'] + (['--overcommit', '--cpu-bind=none'] if over
                                                         else ['--cpu-bind=cores'])
    return []


def apply_unbound(test, env_names=()):
    '''No launcher binding (a wrapper such as numactl sets the CPUs); env vars forwarded.'''
    fam = family(job_launcher(test))
    if fam == 'mpirun':
        opts = ['--bind-to', 'none']
        for name in env_names:
            opts += ['-x', name]
        set_options(test, opts)
    elif fam == 'srun':
        set_options(test, ['--cpu-bind=none'])


def pair_options(launcher, inter_node):
    '''Options placing 2 ranks on one node (adjacent cores) or on two nodes, for launcher `launcher`.'''
    fam = family(launcher)
    if fam == 'srun':   # told its node count: inside a job of several nodes a step spreads over all of them
        return (['--nodes=2', '--ntasks-per-node=1'] if inter_node else ['--nodes=1', '--ntasks-per-node=2']) + \
            ['--cpu-bind=cores']
    if fam == 'mpirun':
        return ['--map-by', 'ppr:1:node' if inter_node else 'core', '--bind-to', 'core']
    return []


def apply_pair(test, inter_node):
    set_options(test, pair_options(job_launcher(test), inter_node))


def apply_one_per_node(test):
    '''One rank per node where the launcher would otherwise fill the first node (mpirun).'''
    if family(job_launcher(test)) == 'mpirun':
        set_options(test, ['--map-by', 'ppr:1:node'])


#: srun's option that ends a step when one of its ranks dies (Slurm keeps the others waiting otherwise;
#: mpirun ends the job itself).
SRUN_FAIL_FAST = '--kill-on-bad-exit=1'


def fail_fast_options(test):
    '''Options that end the whole job when one rank dies.'''
    return [SRUN_FAIL_FAST] if family(job_launcher(test)) == 'srun' else []


def allow_oversubscription(test, ranks_per_node, num_cores):
    '''Let `ranks_per_node` ranks start on a node with `num_cores` cores (mpirun refuses otherwise).'''
    if family(job_launcher(test)) == 'mpirun':
        add_options(test, oversubscribe_options(ranks_per_node, num_cores))


# -- prefixes for extra runs inside the job script ---------------------------------------------------
def prefix(test, num_tasks, options=(), num_cores=None):
    '''Command prefix launching `num_tasks` ranks with the partition's launcher ('' when it has none);
    where that launcher starts one process only, more ranks skip the test with the reason.'''
    name = partition_launcher(test)
    why = one_process_reason(test, num_tasks, name)
    if why:
        test.skip(why)
    opts = ' '.join(shlex.quote(o) for o in options)
    fam = family(name)
    if fam == 'mpirun':
        extra = ' '.join(oversubscribe_options(num_tasks, num_cores))
        return ' '.join(p for p in (name, '-np', str(num_tasks), extra, opts) if p)
    if fam == 'srun':
        # a rank that dies ends the step: a hang until the job's time limit would hide the failure's reason
        return ' '.join(p for p in (name, '-n', str(num_tasks), SRUN_FAIL_FAST, opts) if p)
    return ''


def single_core_prefix(test, num_cores=None):
    '''Prefix of a one-rank run pinned to one core (the 1-core baseline of the scaling checks).'''
    pin = ['--bind-to', 'core'] if family(partition_launcher(test)) == 'mpirun' else []
    return prefix(test, 1, pin, num_cores)


def packed_node_prefix(test, ranks, threads, num_cores):
    '''Prefix of `ranks` x `threads` packed onto one node's cores (unbound beyond them).'''
    fam = family(partition_launcher(test))
    if fam == 'mpirun':
        return prefix(test, ranks, packed_openmpi_options(ranks, threads, num_cores), num_cores)
    if fam == 'srun':
        return prefix(test, ranks, ['-N', '1', f'--cpus-per-task={threads}', '--cpu-bind=cores'])
    return prefix(test, ranks)


def container_mpirun(ranks, num_cores=None):
    '''The Open MPI launch line run inside a self-contained (Docker) image and natively alike: one rank per
    core, unbound where the node has fewer cores than ranks (mpirun refuses to bind two ranks to one core).'''
    bind = 'none' if num_cores and ranks > num_cores else 'core'
    return f'mpirun -np {ranks} --oversubscribe --bind-to {bind}'
