#!/usr/bin/env bash
# Builds the scenario loader's libFuzzer target (tests/fuzz) with clang, ASan and UBSan in
# build-fuzz/, then runs RUNS inputs (default 10000, about a minute), starting from every shipped
# scenario and the bad-input corpus, with a fixed seed (runs are alike, not byte-identical across
# machines: CI's first run met an input that this machine's run from the same seed did not).
# Exits non-zero on a finding (a crash, a sanitizer report, a hang, an error not located in the
# file); the input that caused it is left in build-fuzz/.
# usage: tools/fuzz.sh [RUNS] [libFuzzer options...]   e.g. tools/fuzz.sh 10000000 -seed=0 (a random seed)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-10000}
shift || true
bash tools/setup.sh
if ! command -v clang++ >/dev/null 2>&1; then
  # libFuzzer ships with Debian's clang (libclang-common-*-dev).
  sudo_cmd=""
  if [ "$(id -u)" -ne 0 ]; then sudo_cmd="sudo"; fi
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends clang
fi
cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" \
      -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DDLSIM_FUZZ=ON >/dev/null
cmake --build build-fuzz --target fuzz_scenario_loader -j "$(nproc 2>/dev/null || echo 2)"
corpus=build-fuzz/corpus
mkdir -p "$corpus"
i=0
# tests/fuzz/regressions: the inputs of past findings, run again first.
for f in tests/fuzz/regressions/*.yaml scenarios/*.yaml scenarios/published/*.yaml tests/data/bad_inputs/*.yaml; do
  [ -f "$f" ] || continue
  cp -n "$f" "$corpus/seed-$(printf '%03d' $i)-$(basename "$f")"
  i=$((i + 1))
done
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
build-fuzz/tests/fuzz/fuzz_scenario_loader -runs="$runs" -seed=1 -timeout=20 -rss_limit_mb=4096 -max_len=8192 \
  -print_final_stats=1 -artifact_prefix=build-fuzz/ "$@" "$corpus"
