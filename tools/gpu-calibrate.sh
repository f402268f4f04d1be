#!/usr/bin/env bash
# The GPU calibration of calibration/README.md in one run, for a machine with an NVIDIA GPU and
# PyTorch but without dlsim's build dependencies: dlsim, its CUDA plugin and test_calibration are
# built elsewhere (tools/build.sh on a machine with nvcc), and the shared libraries they need that a
# CUDA image lacks travel beside them (tools/gpu-calibrate.sh --pack copies them into .devlibs/).
#
# usage: tools/gpu-calibrate.sh --pack          # here: copy the libraries build/dlsim needs into .devlibs/
#        tools/gpu-calibrate.sh OUT_DIR [STEP...] # on the GPU machine: writes OUT_DIR/log.txt, OUT_DIR/results.tgz
#                                                 (STEP: tests calibrate steps kernels align sustained fp8 llama power cudnn; default all)
# Steps (each under its own time limit, so one that hangs leaves the others' results):
#   1. the CUDA device tests (test_calibration --gtest_filter='Cuda*')
#   2. dlsim calibrate --backend cuda --device <catalog name of the GPU>  (profile + measured tables)
#   3. dlsim calibrate --validate on that profile (held-out sizes)
#   4. calibration/pytorch_steps.py --kernels (ResNet-50, BERT-base, GPT-2 small training steps, bf16,
#      with each step's device time per kernel class)
#   5. calibration/pytorch_kernels.py (training GEMMs, FlashAttention, ResNet-50 convolutions, bf16)
#   6-11. misaligned GEMMs, continuous load (BF16), FP8 GEMMs beside BF16, a Llama-shaped training step,
#         GEMMs and memory-bound kernels mixed at set shares (the clock against the duty), cuDNN attention
set -uo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" = "--pack" ]; then
  rm -rf .devlibs && mkdir -p .devlibs
  # Everything build/dlsim and the plugins link, except the C library itself and the CUDA libraries
  # (the GPU machine has its own, matching its driver).
  for bin in build/dlsim build/dlsim-cuda.so build/tests/test_calibration; do
    ldd "$bin" | awk '/=> \//{print $3}'
  done | sort -u | grep -vE '/(libc|libm|libdl|libpthread|librt|ld-linux[^/]*)\.so|/libcu(blas|blasLt|da)\.so' |
    while read -r lib; do cp -L "$lib" .devlibs/; done
  cp -L /usr/local/cuda/lib64/libcudart.so.1[0-9] .devlibs/ 2>/dev/null || true
  du -sh .devlibs
  exit 0
fi

out=${1:?usage: tools/gpu-calibrate.sh OUT_DIR [STEP...] | --pack}
shift
steps=${*:-tests calibrate steps kernels align sustained fp8 llama power cudnn}
want() { [[ " $steps " == *" $1 "* ]]; }
# WORK_DIR: where the results are made before results.tgz packs them (default a temporary folder;
# a folder under OUT_DIR keeps them even when the run is cut short, for runs of a few files).
work=${WORK_DIR:-$(mktemp -d)}
mkdir -p "$work"
log="$out/log.txt"
say() { echo "== $(date +%T) $*" | tee -a "$log"; }
pack() { tar czf "$out/results.tgz" -C "$work" . 2>/dev/null; }

nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,memory.total,power.limit --format=csv | tee -a "$log"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case "$gpu" in
  *H200*) device=H200; stem=h200 ;;
  *H100*) device=H100-SXM; stem=h100-sxm-measured ;;
  *A100*80GB*) device=A100-80GB; stem=a100-80gb-measured ;;
  *A100*) device=A100-40GB; stem=a100-40gb-measured ;;
  *) echo "no catalog device for '$gpu'" | tee -a "$log"; exit 2 ;;
esac
# CUDA libraries: the image's toolkit and PyTorch's wheels (cuBLAS, cuBLASLt); ours for the rest.
cuda_dirs=$(find /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib /opt/torch/.venv/lib/python3*/site-packages/nvidia \
              -maxdepth 3 -name 'libcublasLt.so*' -printf '%h\n' 2>/dev/null | sort -u | paste -sd:)
export DLSIM_LIBS="$PWD/.devlibs:$cuda_dirs"
run_dlsim() { LD_LIBRARY_PATH="$DLSIM_LIBS" "$@"; }
say "gpu '$gpu' -> device $device; libraries: $DLSIM_LIBS"
py=python3

if want tests; then
  say "1. CUDA device tests"
  run_dlsim timeout 90 build/tests/test_calibration --gtest_filter='Cuda*' >"$work/tests.txt" 2>&1
  echo "exit status $?" >>"$work/tests.txt"
  tail -30 "$work/tests.txt" | tee -a "$log"
fi

if want calibrate; then
  say "2. dlsim calibrate --backend cuda --device $device"
  run_dlsim timeout "${CALIBRATE_TIMEOUT:-240}" build/dlsim calibrate --backend cuda --device "$device" --out "$work/$stem.yaml" >"$work/calibrate.txt" 2>&1
  echo "exit status $?" >>"$work/calibrate.txt"
  tr '\r' '\n' <"$work/calibrate.txt" | grep -v '^\[' | tail -70 | tee -a "$log"
  pack
  say "3. dlsim calibrate --validate"
  run_dlsim timeout 45 build/dlsim calibrate --validate "$work/$stem.yaml" 2>&1 | tail -40 | tee -a "$log"
fi

if want steps; then
  say "4. PyTorch training steps"
  PYTHONUNBUFFERED=1 timeout 150 $py calibration/pytorch_steps.py --kernels --out "$work/$stem-steps.json" 2>&1 | tail -20 | tee -a "$log"
  pack
fi

if want kernels; then
  say "5. PyTorch kernels"
  PYTHONUNBUFFERED=1 timeout 100 $py calibration/pytorch_kernels.py --only gemm --only attention --only conv \
    --out-prefix "$work/$stem" --gpu "$device" 2>&1 | tail -10 | tee -a "$log"
  pack
fi

if want align; then
  say "6. PyTorch GEMMs of misaligned widths"
  PYTHONUNBUFFERED=1 timeout 60 $py calibration/pytorch_kernels.py --only align --out-prefix "$work/$stem" --gpu "$device" 2>&1 | tail -10 | tee -a "$log"
  PYTHONUNBUFFERED=1 timeout 60 $py calibration/pytorch_steps.py --kernels --only gpt2 --only gpt2-vocab50304 \
    --out "$work/$stem-steps-vocab.json" 2>&1 | tail -10 | tee -a "$log"
  pack
fi
if want sustained; then
  say "7. Continuous load: the clock and rate of GEMMs run back to back, and the training GEMMs under load"
  PYTHONUNBUFFERED=1 timeout 150 $py calibration/pytorch_kernels.py --only sustained --only gemm-hot \
    --out-prefix "$work/$stem" --gpu "$device" 2>&1 | tail -10 | tee -a "$log"
  nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv | tee -a "$log"
  pack
fi

if want fp8; then
  say "8. FP8 GEMMs (torch._scaled_mm) beside BF16, and FP8 under continuous load"
  PYTHONUNBUFFERED=1 timeout 120 $py calibration/pytorch_kernels.py --only fp8 --only fp8-sustained \
    --out-prefix "$work/$stem" --gpu "$device" 2>&1 | tail -10 | tee -a "$log"
  pack
fi
if want llama; then
  say "9. PyTorch training step of a Llama 3.2 1B-shaped decoder"
  PYTHONUNBUFFERED=1 timeout 120 $py calibration/pytorch_steps.py --kernels --only llama3.2-1b \
    --out "$work/$stem-steps-llama.json" 2>&1 | tail -10 | tee -a "$log"
  pack
fi
if want power; then
  say "10. The clock against the tensor-core share: GEMMs and memory-bound kernels mixed"
  PYTHONUNBUFFERED=1 timeout 90 $py calibration/pytorch_kernels.py --only duty --out-prefix "$work/$stem" --gpu "$device" 2>&1 | tail -12 | tee -a "$log"
  pack
fi
if want cudnn; then
  say "11. cuDNN's fused attention (PyTorch's default SDPA backend on Hopper)"
  PYTHONUNBUFFERED=1 timeout 60 $py calibration/pytorch_kernels.py --only attention-cudnn --out-prefix "$work/$stem" --gpu "$device" 2>&1 | tail -5 | tee -a "$log"
  pack
fi

ls -la "$work" | tee -a "$log"
say "done"
