#!/usr/bin/env bash
# Installs what dlsim needs to build and test, from Debian's archive, non-interactively.
# Idempotent: packages already present are skipped, so a second run costs a few seconds.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  libboost-graph-dev libboost-program-options-dev
  libeigen3-dev libyaml-cpp-dev libhdf5-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  # The Python module and its tests, for Debian's /usr/bin/python3 (PyPI is not used).
  python3-dev pybind11-dev python3-numpy python3-pandas python3-matplotlib python3-h5py
  python3-pytest python3-nbclient python3-nbformat python3-ipykernel
  python3-yaml  # dlsim.plots reads the resolved scenario for titles; the bad-input corpus generator
  # dlsim sweep across machines (mpirun)
  libopenmpi-dev openmpi-bin
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all packages present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
sudo_cmd=""
if [ "$(id -u)" -ne 0 ]; then sudo_cmd="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo_cmd apt-get update -qq
$sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
