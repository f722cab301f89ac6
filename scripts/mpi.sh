# shellcheck shell=bash
# scripts/mpi.sh: how the scripts start MPI jobs; sourced by scripts/demo.sh, bench/*.sh,
# bench/gpu/resident.sh and tests/cli/lib.sh. dsmm runs under Open MPI or MPICH (DESIGN.md), and
# their launchers take different flags: Open MPI's mpirun needs --oversubscribe to start more
# ranks than cores, --allow-run-as-root as root, and -x to pass a variable to remote ranks;
# MPICH's hydra refuses all three and needs none (it starts any number of ranks as any user and
# passes the whole environment).

# mpi_launcher [NAME[=VALUE]...]: sets the array mpi to the launch command, to which the caller
# adds -n P and the program. The launcher is $MPIRUN, default mpirun. Under Open MPI each
# argument becomes -x NAME[=VALUE]; under another MPI a NAME=VALUE argument is set through env
# (a bare NAME is already in the environment the launcher passes on).
mpi_launcher() {
    local run=${MPIRUN:-mpirun} v
    mpi=()
    if "$run" --version 2>&1 | grep -Eq "Open MPI|OpenRTE|PRRTE|prterun"; then
        mpi=("$run" --oversubscribe)
        [ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)
        for v in "$@"; do mpi+=(-x "$v"); done
    else
        for v in "$@"; do
            case $v in *=*) mpi+=("$v") ;; esac
        done
        if [ ${#mpi[@]} -gt 0 ]; then mpi=(env "${mpi[@]}"); fi
        mpi+=("$run")
    fi
    return 0
}

# mpi_found: the launcher ($MPIRUN, default mpirun) is on PATH.
mpi_found() {
    command -v "${MPIRUN:-mpirun}" >/dev/null 2>&1
}

# mpi_why STATUS STDERR_FILE PATTERN [TIMEOUT_S]: one line on why an MPI job failed: the first
# distinct lines of STDERR_FILE that match PATTERN (an extended regex for the programs' own
# messages), else its last lines that are not the launcher's own boilerplate. STATUS 124 is a
# timeout (of TIMEOUT_S seconds).
mpi_why() {
    if [ "$1" -eq 124 ]; then
        echo "timed out after ${4:-?} s"
        return
    fi
    local msg
    msg=$(grep -E "$3" "$2" | awk '!seen[$0]++' | head -n 3 | tr '\n' ' ')
    [ -n "$msg" ] || msg=$(grep -vE '^\s*$|^-+$|^(Primary job|Per user-direction|mpirun|mpiexec|prterun|Process name|Exit code|  )' "$2" | tail -n 3 | tr '\n' ' ')
    echo "exit $1: $(cut -c1-300 <<<"$msg")"
}
