#!/usr/bin/env bash
# Regenerates the shipped device profiles (calibration/profiles/a100-80gb.yaml, h100-sxm.yaml,
# a40.yaml, v100-16gb.yaml, p100-pcie.yaml) with `dlsim calibrate --import` from the measured
# kernel tables in ../shared/reference/kernels (vidur: A100, H100, A40; DeepBench: V100, P100),
# and h200.yaml from the tables dlsim measured on an H200 (calibration/measured/h200/, committed:
# `dlsim calibrate --backend cuda` and calibration/pytorch_kernels.py's misaligned GEMMs), then
# rebuilds dlsim so that it embeds them. The reference tables stay outside the repository; only
# the fitted profiles are committed. Needs a built dlsim (tools/build.sh). About a minute.
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
# vidur timed forward (NT) GEMMs only: where dlsim measured a device's three layouts itself
# (tools/gpu-calibrate.sh, calibration/measured/), that table sets its NN and TN factors relative to NT.
layouts() { local t="calibration/measured/$1/$1-gemm.csv"; if [ -f "$t" ]; then echo "--layout-reference $t"; fi; }
# shellcheck disable=SC2046  # layouts prints nothing or two words
build/dlsim calibrate "${vidur[@]}" --gpu A100 $(layouts a100-80gb) --out "$out/a100-80gb.yaml"
# shellcheck disable=SC2046
build/dlsim calibrate "${vidur[@]}" --gpu H100 $(layouts h100-sxm) --out "$out/h100-sxm.yaml"
build/dlsim calibrate "${vidur[@]}" --gpu A40 --out "$out/a40.yaml"
build/dlsim calibrate "${deepbench[@]}" --gpu V100 --out "$out/v100-16gb.yaml"
build/dlsim calibrate "${deepbench[@]}" --gpu P100 --out "$out/p100-pcie.yaml"
h200=calibration/measured/h200
build/dlsim calibrate --import "$h200/h200-gemm.csv" --import "$h200/h200-elementwise.csv" \
    --import "$h200/h200-alignment-gemm.csv" --gpu H200 --device H200 --out "$out/h200.yaml"
cmake --build build -j "$(nproc 2>/dev/null || echo 2)" --target dlsim >/dev/null
echo "fit-profiles: wrote $out/{a100-80gb,h100-sxm,a40,v100-16gb,p100-pcie,h200}.yaml and rebuilt dlsim"
