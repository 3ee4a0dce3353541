"""Rank/thread placement: one description, launcher options for Open MPI and Slurm, verification.

A placement is `per-node | per-socket | per-numa | per-core` (one rank per object,
or `ranks_per_object` ranks) times `threads` per rank ('fill' = all cores of the
object shared by its ranks). `bind='core'` pins each rank to exactly its threads'
cores; `bind='object'` pins it to the whole socket / NUMA node (paper 000's
"rank per socket" rankfile runs). `resolve()` turns it into a Layout for a given
node topology; the Layout renders mpirun options, a rankfile, srun options, and
checks an observed placement (from `affinity` or the solver's report).
"""
from dataclasses import dataclass

from yeebench.topology import format_cpulist, cpus_to_mask

KINDS = ('per-node', 'per-socket', 'per-numa', 'per-core')
_OBJECT = {'per-node': 'node', 'per-socket': 'socket', 'per-numa': 'numa', 'per-core': 'core'}
# Open MPI 4.x object names for --map-by ppr:N:<obj> and --bind-to <obj>
_OMPI_OBJECT = {'node': 'node', 'socket': 'socket', 'numa': 'numa', 'core': 'core'}
# srun --cpu-bind keyword binding a task to a whole object
_SRUN_OBJECT_BIND = {'node': 'none', 'socket': 'sockets', 'numa': 'ldoms', 'core': 'cores'}


class PlacementError(ValueError):
    """The placement cannot be realised on this topology (the message says why)."""


@dataclass(frozen=True)
class Placement:
    kind: str = 'per-core'
    threads: object = 1          # int >= 1 or 'fill'
    ranks_per_object: int = 1
    bind: str = 'core'           # 'core' | 'object'

    def __post_init__(self):
        if self.kind not in KINDS:
            raise PlacementError(f'unknown placement {self.kind!r} (expected one of {", ".join(KINDS)})')
        if self.bind not in ('core', 'object'):
            raise PlacementError(f"unknown binding {self.bind!r} (expected 'core' or 'object')")
        if self.threads != 'fill' and (not isinstance(self.threads, int) or self.threads < 1):
            raise PlacementError(f"threads must be a positive integer or 'fill', got {self.threads!r}")
        if not isinstance(self.ranks_per_object, int) or self.ranks_per_object < 1:
            raise PlacementError(f'ranks_per_object must be a positive integer, got {self.ranks_per_object!r}')

    @property
    def obj(self):
        return _OBJECT[self.kind]

    def resolve(self, topology, num_nodes=1):
        """The concrete Layout of this placement on `num_nodes` nodes shaped like `topology`."""
        objects = topology.objects(self.obj)
        if not objects:
            raise PlacementError(f'the topology lists no {self.obj} objects')
        cores_per_obj = min(_cores_in(topology, o) for o in objects)
        if self.threads == 'fill':
            threads = cores_per_obj // self.ranks_per_object
        else:
            threads = self.threads
        if threads < 1 or threads * self.ranks_per_object > cores_per_obj:
            raise PlacementError(
                f'{self.kind} with {self.ranks_per_object} rank(s) x {self.threads} thread(s) needs '
                f'{max(1, threads) * self.ranks_per_object} cores per {self.obj}, '
                f'the {self.obj} has {cores_per_obj}')
        return Layout(placement=self, topology=topology, num_nodes=num_nodes, threads=threads,
                      ranks_per_node=len(objects) * self.ranks_per_object)


def _cores_in(topology, cpus):
    cpus = set(cpus)
    return sum(1 for core in topology.cores if set(core) <= cpus)


@dataclass(frozen=True)
class Layout:
    placement: Placement
    topology: object
    num_nodes: int
    threads: int
    ranks_per_node: int

    @property
    def num_tasks(self):
        return self.ranks_per_node * self.num_nodes

    @property
    def cpus_per_task(self):
        return self.threads * self.topology.cpus_per_core

    @property
    def obj(self):
        return self.placement.obj

    def omp_env(self):
        """OpenMP settings: with core binding one thread a core; with object binding threads
        stay unpinned inside the rank's whole socket/NUMA node (pinning would shrink it)."""
        if self.placement.bind == 'object':
            return {'OMP_NUM_THREADS': str(self.threads), 'OMP_PROC_BIND': 'false'}
        return {'OMP_NUM_THREADS': str(self.threads), 'OMP_PLACES': 'cores', 'OMP_PROC_BIND': 'close'}

    # -- expected CPU sets -------------------------------------------------
    def rank_cpusets(self):
        """Expected CPU set of each rank on one node, in rank order (block mapping)."""
        sets = []
        for obj_cpus in self.topology.objects(self.obj):
            cores = [c for c in self.topology.cores if set(c) <= set(obj_cpus)]
            for r in range(self.placement.ranks_per_object):
                if self.placement.bind == 'object':
                    sets.append(sorted(obj_cpus))
                else:
                    chunk = cores[r * self.threads:(r + 1) * self.threads]
                    sets.append(sorted(c for core in chunk for c in core))
        return sets

    # -- Open MPI ---------------------------------------------------------------
    def openmpi_options(self):
        """mpirun options (Open MPI 4.x) realising this layout."""
        obj = _OMPI_OBJECT[self.obj]
        n = self.placement.ranks_per_object
        if self.placement.bind == 'object':
            bind = 'none' if obj == 'node' else obj
            return ['--map-by', f'ppr:{n}:{obj}', '--bind-to', bind]
        if self.threads == 1:
            return ['--map-by', f'ppr:{n}:{obj}', '--bind-to', 'core']
        return ['--map-by', f'ppr:{n}:{obj}:PE={self.threads}', '--bind-to', 'core']

    def rankfile(self, hosts=None):
        """Open MPI rankfile text with physical CPU numbers, as in paper 000.

        `hosts`: one name per node; default 'localhost' for one node and the
        relative names +n0, +n1, ... (valid inside a batch allocation) otherwise.
        Use with `mpirun --rankfile FILE --mca rmaps_rank_file_physical 1`.
        """
        if hosts is None:
            hosts = ['localhost'] if self.num_nodes == 1 else [f'+n{i}' for i in range(self.num_nodes)]
        if len(hosts) != self.num_nodes:
            raise PlacementError(f'{len(hosts)} host names given for {self.num_nodes} nodes')
        lines = []
        rank = 0
        for host in hosts:
            for cpus in self.rank_cpusets():
                lines.append(f'rank {rank}={host} slot={format_cpulist(cpus)}')
                rank += 1
        return '\n'.join(lines) + '\n'

    # -- Slurm --------------------------------------------------------------------
    def srun_job_options(self):
        """Job geometry for ReFrame's job object (becomes #SBATCH lines)."""
        opts = {'num_tasks': self.num_tasks, 'num_tasks_per_node': self.ranks_per_node,
                'num_cpus_per_task': self.cpus_per_task}
        if self.obj == 'socket':
            opts['num_tasks_per_socket'] = self.placement.ranks_per_object
        return opts

    def srun_options(self):
        """srun options (--cpu-bind, --distribution) realising this layout."""
        opts = [f'--cpus-per-task={self.cpus_per_task}']
        if self.obj == 'socket':
            opts.append(f'--ntasks-per-socket={self.placement.ranks_per_object}')
        if self.placement.bind == 'object':
            if self.obj == 'numa':
                ldoms = [str(i) for i in range(self.topology.num_numa_nodes)
                         for _ in range(self.placement.ranks_per_object)]
                return opts + [f'--cpu-bind=map_ldom:{",".join(ldoms)}']
            return opts + [f'--cpu-bind={_SRUN_OBJECT_BIND[self.obj]}', '--distribution=block:block']
        if self.obj == 'numa':  # no --ntasks-per-numa in srun: give each rank its exact mask
            masks = ','.join(cpus_to_mask(c) for c in self.rank_cpusets())
            return opts + [f'--cpu-bind=mask_cpu:{masks}']
        return opts + ['--cpu-bind=cores', '--distribution=block:block']

    # -- verification -----------------------------------------------------------
    def verify(self, observed):
        """Problems (list of strings, empty = as requested) of an observed placement.

        `observed` is a list of {'rank': r, 'host': h, 'cpus': [...]} (one per rank,
        or one per thread: CPU sets of the same rank are merged).
        """
        ranks = {}
        for rec in observed:
            key = int(rec['rank'])
            host, cpus = rec.get('host', '?'), set(rec.get('cpus') or [])
            if key in ranks:
                ranks[key]['cpus'] |= cpus
            else:
                ranks[key] = {'host': host, 'cpus': cpus}
        problems = []
        if len(ranks) != self.num_tasks:
            problems.append(f'{len(ranks)} ranks observed, {self.num_tasks} requested')
        by_host = {}
        for rank, info in sorted(ranks.items()):
            by_host.setdefault(info['host'], []).append((rank, info['cpus']))
        if len(by_host) != self.num_nodes:
            problems.append(f'ranks ran on {len(by_host)} host(s), {self.num_nodes} requested')
        objects = [set(o) for o in self.topology.objects(self.obj)]
        want = self.cpus_per_task if self.placement.bind == 'core' else None
        for host, members in sorted(by_host.items()):
            if len(members) != self.ranks_per_node:
                problems.append(f'{host}: {len(members)} ranks, {self.ranks_per_node} requested per node')
            per_object = [0] * len(objects)
            seen = set()
            for rank, cpus in members:
                label = f'{host} rank {rank} cpus {format_cpulist(cpus) or "-"}'
                homes = [i for i, o in enumerate(objects) if cpus and cpus <= o]
                if not homes:
                    problems.append(f'{label}: not inside one {self.obj}')
                    continue
                if self.placement.bind == 'object' and self.obj != 'node' and cpus not in objects:
                    problems.append(f'{label}: not bound to a whole {self.obj}')
                if want is not None and len(cpus) != want:
                    problems.append(f'{label}: {len(cpus)} CPUs, {want} requested')
                if self.placement.bind == 'core' and cpus & seen:
                    problems.append(f'{label}: shares CPUs with another rank')
                seen |= cpus
                per_object[homes[0]] += 1
            if self.obj != 'node' and any(n != self.placement.ranks_per_object for n in per_object):
                problems.append(f'{host}: ranks per {self.obj} {per_object}, '
                                f'{self.placement.ranks_per_object} requested on each')
        return problems


def packed_openmpi_options(num_ranks, threads, num_cores):
    """mpirun options for `num_ranks` x `threads` packed onto one node's cores.

    Ranks beyond the core count (paper 000's job-balancing runs) cannot be pinned,
    so they run unbound with --oversubscribe.
    """
    if num_ranks * threads > num_cores:
        return ['--oversubscribe', '--bind-to', 'none']
    if threads == 1:
        return ['--map-by', 'core', '--bind-to', 'core']
    return ['--map-by', f'slot:PE={threads}', '--bind-to', 'core']
