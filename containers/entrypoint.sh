#!/bin/sh
# Entry point of the yeebench image.
#   (no argument) | smoke   run the ReFrame smoke set on the image's binaries (system `local`)
#   selftest                 a 20-second check: solver and NetPIPE with 2 MPI ranks, affinity, numa-bw
#   help                     this text
#   anything else            executed as given (e.g. `mpirun -np 2 yee --nx 64`, `bash`)
set -eu
prefix=${YEEBENCH_PREFIX:-/opt/yeebench}
ranks=${YEEBENCH_RANKS:-2}
# More ranks than cores is normal on small CI machines and laptops.
mpirun_opts="-np $ranks --oversubscribe --bind-to none"

usage() { sed -n '2,6s/^# \{0,1\}//p' "$0"; }

selftest() {
    echo "selftest: yee with $ranks ranks"
    mpirun $mpirun_opts yee --nx 32 --ny 32 --nz 32 --steps 20 --quiet > /tmp/yee.json
    python3 -c 'import json,sys; r=json.load(open("/tmp/yee.json")); sys.exit(0 if r.get("valid") else "selftest: yee report is not valid")'
    python3 -c 'import json; r=json.load(open("/tmp/yee.json")); print("selftest: yee %.1f Mcells/s, checksum %s" % (r["mcells_per_s"], r["checksum"]))'
    echo "selftest: NetPIPE (NPopenmpi) 1 B .. 64 KiB"
    # Fixed repeats (-n) and no perturbed sizes (-p 0): bounded time even on a loaded machine.
    mpirun -np 2 --oversubscribe --bind-to none NPopenmpi -u 65536 -n 100 -p 0 -o /tmp/np.out 2>&1 | grep 'bytes.*times' | tail -n 1
    echo "selftest: affinity"
    mpirun $mpirun_opts affinity --format table
    echo "selftest: numa-bw"
    numa-bw > /dev/null
    echo "selftest: ok"
}

smoke() {
    share=$prefix/share/reframe
    # The checks of the installed yeebench package; an image that copied them into $share/checks works too.
    checks=$(yeebench checks-dir 2> /dev/null) || checks=$share/checks
    if [ ! -f "$share/config/settings.py" ] || [ ! -d "$checks" ]; then
        echo "yeebench-entrypoint: this image has no ReFrame configuration/checks ($share/config/settings.py, $checks)" >&2
        exit 2
    fi
    rundir=${YEEBENCH_RUN_DIR:-$HOME/yeebench-run}
    mkdir -p "$rundir"
    # ReFrame's stage, output, perflogs and reports go to a folder this (unprivileged) user can write.
    export YEEBENCH_RFM_DIR="$rundir"
    # In a Spack-built image (SPACK_ENV set) every program comes from the environment's view.
    environ=
    [ -n "${SPACK_ENV:-}" ] && environ="-p spack"
    exec reframe -C "$share/config/settings.py" -c "$checks" -R --system local --mode smoke $environ \
        --prefix "$rundir" --report-file "$rundir/report.json" -r
}

case "${1:-smoke}" in
    smoke) smoke ;;
    selftest) selftest ;;
    help|-h|--help) usage ;;
    *) exec "$@" ;;
esac
