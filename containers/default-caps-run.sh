#!/usr/bin/env bash
# The README's `make run`, from this checkout, inside a default-capability container: `docker run` with no
# --cap-add and Docker's default seccomp profile (process_vm_readv, i.e. single-copy CMA, and
# set_mempolicy refused), as root, the way a user runs a plain Debian container. The image is the
# Dockerfile's `build` stage (Debian bookworm with compilers and Open MPI); `make run` installs the Debian
# packages it lacks, makes the venv from PyPI, builds and runs the smoke set, with the single-copy settings
# unset so that every MPI case decides single-copy itself (yeebench.single_copy).
# The checkout is mounted read-only and `make run` works on a copy of its files (tracked and untracked,
# not ignored) inside the container: nothing is written to the checkout.
# Requires exit 0 and every case passed or skipped with its reason; prints each single-copy decision with
# its reason. Needs DOCKER_HOST (containers/ci-build.sh starts dockerd).
#   usage: containers/default-caps-run.sh IMAGE OUT_DIR     (log: OUT_DIR/default-caps.log)
# Environment: YEEBENCH_LAB (the lab, mounted read-only when present, as `make run` finds it beside a
# checkout: OSU's release tarball).
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 IMAGE OUT_DIR" >&2; exit 2; }
image=$1
out=$2
cd "$(dirname "$0")/.."
repo=$(pwd)
py=${PY:-.venv/bin/python}
runs=$out/default-caps
log=$out/default-caps.log
rm -rf --one-file-system "$runs"
mkdir -p "$runs"
git ls-files -z -co --exclude-standard > "$runs/files" \
    || { echo "default-caps: error: $repo is not a git checkout (git ls-files failed)" >&2; exit 2; }
mounts=(-v "$repo:/checkout:ro" -v "$(cd "$runs" && pwd):/out")
# pip trusts what this host trusts (a site that reaches PyPI through a TLS proxy adds its CA there);
# pip's own bundle would refuse such a proxy.
host_ca=/etc/ssl/certs/ca-certificates.crt
[ -f "$host_ca" ] && mounts+=(-v "$host_ca:/etc/yeebench-host-ca.crt:ro" -e PIP_CERT=/etc/yeebench-host-ca.crt)
lab=${YEEBENCH_LAB:-$repo/../shared/lab}
[ -d "$lab/mirror" ] && mounts+=(-v "$(cd "$lab" && pwd):/lab:ro" -e YEEBENCH_LAB=/lab)
# Inside: copy the checkout, `make run` exactly as the README says, then hand out its ReFrame report.
inside='set -u
mkdir /yeebench && tar -C /checkout --null -T /out/files --ignore-failed-read -c | tar -C /yeebench -x || exit 1
cd /yeebench && echo "default-caps: make run in $PWD (a copy of the read-only checkout), as $(id -un)"
rc=0; make run || rc=$?
cp build/reframe/reports/run-*.json /out/report.json; cp build/reframe/reframe.log /out/ 2> /dev/null
exit $rc'
echo "default-caps: docker run --rm --network host --shm-size=512m $image make run, no --cap-add," \
     "single-copy settings unset"
t0=$(date +%s)
rc=0
timeout 900 docker run --rm --network host --shm-size=512m "${mounts[@]}" --entrypoint /usr/bin/env "$image" \
    -u OMPI_MCA_btl_vader_single_copy_mechanism -u UCX_TLS bash -c "$inside" > "$log" 2>&1 || rc=$?
t1=$(date +%s)
sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -E '^deps:|^build:|single-copy|^\[ +(PASSED|FAILED) +\]|^run:' || true
echo "default-caps: make run exit $rc in $((t1 - t0)) s (log: $log)" | tee -a "$log"
[ "$rc" -eq 0 ] || { echo "default-caps: error: make run failed in a default container" >&2;
                     grep -E 'FAIL|rror' "$log" | tail -15 >&2; exit 1; }
"$py" containers/default_caps_verdict.py "$runs/report.json" 2>&1 | tee -a "$log"
