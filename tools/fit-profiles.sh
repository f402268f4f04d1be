#!/usr/bin/env bash
# Regenerates the shipped device profiles (calibration/profiles/a100-80gb.yaml, h100-sxm.yaml,
# a40.yaml, v100-16gb.yaml, p100-pcie.yaml) with `dlsim calibrate --import` from the measured
# kernel tables in ../shared/reference/kernels (vidur: A100, H100, A40; DeepBench: V100, P100),
# then rebuilds dlsim so that it embeds them. The tables stay outside the repository; only the
# fitted profiles are committed. Needs a built dlsim (tools/build.sh). About a minute.
# usage: tools/fit-profiles.sh [kernels-folder]
set -euo pipefail
cd "$(dirname "$0")/.."
kernels="${1:-../shared/reference/kernels}"
if [ ! -f "$kernels/gemm_vidur.csv" ]; then
  echo "fit-profiles: $kernels/gemm_vidur.csv is missing: nothing to fit" >&2
  exit 1
fi
out=calibration/profiles
vidur=(--import "$kernels/gemm_vidur.csv" --import "$kernels/elementwise_vidur.csv")
deepbench=(--import "$kernels/deepbench_gemm.csv" --import "$kernels/deepbench_conv.csv")
build/dlsim calibrate "${vidur[@]}" --gpu A100 --out "$out/a100-80gb.yaml"
build/dlsim calibrate "${vidur[@]}" --gpu H100 --out "$out/h100-sxm.yaml"
build/dlsim calibrate "${vidur[@]}" --gpu A40 --out "$out/a40.yaml"
build/dlsim calibrate "${deepbench[@]}" --gpu V100 --out "$out/v100-16gb.yaml"
build/dlsim calibrate "${deepbench[@]}" --gpu P100 --out "$out/p100-pcie.yaml"
cmake --build build -j "$(nproc 2>/dev/null || echo 2)" --target dlsim >/dev/null
echo "fit-profiles: wrote $out/{a100-80gb,h100-sxm,a40,v100-16gb,p100-pcie}.yaml and rebuilt dlsim"
