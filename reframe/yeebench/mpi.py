"""Open MPI component selections (set as OMPI_MCA_* environment variables, so they work
with every launcher alike); launcher options are yeebench.launch's."""

# Point-to-point transports of Open MPI 4.x.
TRANSPORTS = {
    'ob1-vader': {'OMPI_MCA_pml': 'ob1', 'OMPI_MCA_btl': 'self,vader'},
    'ob1-tcp': {'OMPI_MCA_pml': 'ob1', 'OMPI_MCA_btl': 'self,tcp'},
    # without InfiniBand UCX needs "any" transports/devices (else "PML ucx cannot be selected")
    'ucx': {'OMPI_MCA_pml': 'ucx', 'OMPI_MCA_pml_ucx_tls': 'any', 'OMPI_MCA_pml_ucx_devices': 'any'},
}
SHARED_MEMORY_ONLY = {'ob1-vader'}

# Forced algorithms of coll/tuned (ids from ompi/mca/coll/tuned, Open MPI 4.1).
TUNED_ALGORITHMS = {
    'allreduce': {'recursive-doubling': 3, 'ring': 4, 'rabenseifner': 6},
    'bcast': {'binomial': 6, 'pipeline': 3, 'scatter-allgather': 8},
    'alltoall': {'pairwise': 2, 'bruck': 3, 'linear': 1},
}
_BASE = 'self,basic,libnbc'
#: coll components an Open MPI build may lack (checked with ompi_info on the compute node).
OPTIONAL_COMPONENTS = ('ucc', 'hcoll')


def collective_env(collective, implementation):
    """OMPI_MCA_* settings selecting `implementation` for `collective`.

    implementation: 'tuned' (its own decision rules), 'tuned:<algorithm>' (forced),
    'han' (hierarchical), 'basic' (linear reference algorithms), 'ucc' and 'hcoll' (the UCC and
    HCOLL components, today's successors of paper 004's FCA, where Open MPI was built with them:
    `ompi_info --parsable | grep ^mca:coll:ucc:`).
    """
    if implementation == 'basic':
        return {'OMPI_MCA_coll': _BASE}
    if implementation == 'han':
        return {'OMPI_MCA_coll': f'{_BASE},tuned,sm,han', 'OMPI_MCA_coll_han_priority': '100'}
    if implementation == 'tuned':
        return {'OMPI_MCA_coll': f'{_BASE},tuned'}
    if implementation in OPTIONAL_COMPONENTS:
        return {'OMPI_MCA_coll': f'{_BASE},tuned,{implementation}',
                f'OMPI_MCA_coll_{implementation}_enable': '1', f'OMPI_MCA_coll_{implementation}_priority': '100'}
    if implementation.startswith('tuned:'):
        name = implementation.split(':', 1)[1]
        algorithms = TUNED_ALGORITHMS.get(collective, {})
        if name not in algorithms:
            raise ValueError(f'no forced tuned algorithm {name!r} for {collective} '
                             f'(known: {", ".join(algorithms) or "none"})')
        return {'OMPI_MCA_coll': f'{_BASE},tuned', 'OMPI_MCA_coll_tuned_use_dynamic_rules': '1',
                f'OMPI_MCA_coll_tuned_{collective}_algorithm': str(algorithms[name])}
    raise ValueError(f'unknown collective implementation {implementation!r}')


def implementations(collective):
    """Every implementation the collectives check sweeps for `collective`."""
    return (['tuned'] + [f'tuned:{a}' for a in TUNED_ALGORITHMS.get(collective, {})] + ['han', 'basic']
            + list(OPTIONAL_COMPONENTS))


def has_component_test(component):
    """Shell test, run on the compute node, that this Open MPI has coll/`component` (ompi_info)."""
    return f"ompi_info --parsable 2>/dev/null | grep -q '^mca:coll:{component}:'"

