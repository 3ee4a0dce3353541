#!/usr/bin/env bash
# Runs the yeebench image with Charliecloud (Debian `charliecloud`: ch-run, an unprivileged runtime):
# unpacks IMAGE from the Docker daemon at $DOCKER_HOST into DIR, then runs the solver and NetPIPE with
# mpirun inside it. Prints "charliecloud: ok" on success.
#   containers/charliecloud-run.sh yeebench:latest build/containers/charliecloud
# The unpacked tree never contains device nodes (a /dev/full once became a 72 GB file on import).
set -euo pipefail
image=${1:?usage: charliecloud-run.sh IMAGE DIR}
dir=${2:?usage: charliecloud-run.sh IMAGE DIR}
command -v ch-run > /dev/null || { echo "charliecloud: ch-run not found (apt-get install charliecloud)" >&2; exit 2; }
export USER=${USER:-$(id -un)}

rm -rf "$dir" && mkdir -p "$dir"
cid=$(docker create "$image")
trap 'docker rm -f "$cid" > /dev/null 2>&1 || true' EXIT
docker export "$cid" | tar -x -C "$dir" --exclude='dev/*'
mkdir -p "$dir/dev"

# The Docker image's ENV is not part of the exported tree: restate what the runs need.
run() {
    ch-run --unset-env='*' --set-env=HOME=/tmp --set-env=USER="$USER" \
        --set-env=PATH=/opt/yeebench/bin:/opt/yeebench/venv/bin:/usr/bin:/bin \
        --set-env=OMPI_MCA_btl_vader_single_copy_mechanism=none --set-env=UCX_TLS=^cma \
        --set-env=OMP_NUM_THREADS=1 --set-env=OMPI_ALLOW_RUN_AS_ROOT=1 --set-env=OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
        "$dir" -- "$@"
}
echo "charliecloud: $(ch-run --version 2>&1), image $image unpacked in $dir"
run mpirun -np 2 --oversubscribe yee --nx 32 --ny 32 --nz 32 --steps 20 --quiet > "$dir.yee.json"
python3 - "$dir.yee.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
if not r.get("valid"):
    sys.exit("charliecloud: yee report is not valid")
print("charliecloud: yee %.1f Mcells/s, checksum %s" % (r["mcells_per_s"], r["checksum"]))
EOF
run mpirun -np 2 --oversubscribe NPopenmpi -u 65536 -n 100 -p 0 -o /tmp/np.out 2>&1 | grep 'bytes.*times' | tail -n 1
echo "charliecloud: ok"
