# Removing a tree that a root file system or a daemon may have mounted into (sourced by the container
# scripts). debootstrap mounts /proc and /sys in its target (and may bind the host's /dev), dockerd
# mounts its network namespace in its exec root, and a run stopped half-way leaves them mounted: a
# plain `rm -rf` would walk into them, into the host's /dev at worst.

# remove_tree DIR...: unmount whatever is mounted below each DIR, deepest first, then remove it without
# ever crossing into another file system (what could not be unmounted is left, not emptied).
remove_tree() {
    local dir
    for dir in "$@"; do
        [ -n "$dir" ] || continue
        awk -v top="${dir%/}/" 'index($2, top) == 1 { print $2 }' /proc/self/mounts 2> /dev/null | sort -r |
            while read -r point; do umount -l "$point" 2> /dev/null || true; done
        rm -rf --one-file-system "$dir"
    done
}
