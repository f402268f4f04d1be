#!/usr/bin/env bash
# Sweep throughput: the 1,000 variants of scenarios/sweep-quickstart.yaml with `dlsim sweep` on 1
# and 2 threads and on 2 MPI ranks (one thread each), each run REPEATS times (default 3); prints
# the median wall time, variants per second and the parallel efficiency against one thread, and
# checks that every run wrote the same store, byte for byte.
# usage: bench/sweep_throughput.sh [REPEATS]   (from the repository root, after tools/build.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
repeats=${1:-3}
variants=1000
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
measure() {  # name, command...
  local name=$1; shift
  local times=()
  for i in $(seq "$repeats"); do
    rm -f "$out/$name.h5" "$out/$name.h5.journal"
    local start end
    start=$(date +%s.%N)
    "$@" --output "$out/$name.h5" --quiet
    end=$(date +%s.%N)
    times+=("$(echo "$end - $start" | bc -l)")
  done
  printf '%s\n' "${times[@]}" | median
}

one=$(measure j1 build/dlsim sweep scenarios/sweep-quickstart.yaml -j 1)
two=$(measure j2 build/dlsim sweep scenarios/sweep-quickstart.yaml -j 2)
# --bind-to none: Open MPI binds each rank to one core by default, and rank 0 also coordinates
# and loads (validates) every variant on all cores first.
mpi=$(measure mpi2 mpirun --bind-to none -n 2 build/dlsim sweep scenarios/sweep-quickstart.yaml)
cmp "$out/j1.h5" "$out/j2.h5" && cmp "$out/j1.h5" "$out/mpi2.h5" && echo "stores: identical"
printf '%-22s %10s %14s %12s\n' run "wall (s)" "variants/s" efficiency
for row in "1 thread:$one:1" "2 threads:$two:2" "2 MPI ranks:$mpi:2"; do
  IFS=: read -r name t n <<<"$row"
  printf '%-22s %10.2f %14.1f %11.0f%%\n' "$name" "$t" "$(echo "$variants / $t" | bc -l)" "$(echo "100 * $one / ($t * $n)" | bc -l)"
done
