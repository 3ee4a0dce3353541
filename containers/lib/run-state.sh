# Per-run state for scripts that start machine-wide daemons (sourced by containers/ci-build.sh).
# One machine may hold two runs (two checkouts, a CI runner beside a user): each run gets its own state
# directory, and a resource that cannot be shared (Docker's cached data root) is held with a lock whose
# owner is written beside it, so a second run says whose it is and waits instead of breaking the first.

# owner_line: who this run is, in one line (written into owner files, printed to whoever waits).
owner_line() {
    echo "pid $$ user $(id -un 2>/dev/null || id -u) checkout $(pwd) since $(date -u +%Y-%m-%dT%H:%M:%SZ)"
}

# new_state_dir BASE: a fresh directory BASE.XXXXXX owned by this run (prints its path).
new_state_dir() {
    local dir
    dir=$(mktemp -d "$1.XXXXXX") || return 1
    chmod 0755 "$dir"
    owner_line > "$dir/owner"
    echo "$dir"
}

# hold_lock PATH TIMEOUT_S WHAT: take an exclusive lock on PATH.lock for the rest of this shell (fd 9);
# when another run holds it, print its owner and wait up to TIMEOUT_S seconds. PATH.owner names us.
hold_lock() {
    local path=$1 timeout=$2 what=$3
    exec 9> "$path.lock"
    if ! flock -n 9; then
        echo "ci-build: $what is in use by another run ($(cat "$path.owner" 2>/dev/null || echo 'owner unknown'));" \
             "waiting up to ${timeout} s" >&2
        flock -w "$timeout" 9 || { echo "ci-build: error: $what still in use after ${timeout} s" >&2; return 1; }
    fi
    owner_line > "$path.owner"
}
