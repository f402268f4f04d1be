#!/usr/bin/env bash
# README command 1: install what is missing, build, and run the quick-start scenario.
# Prints the result table and writes results/quickstart.h5.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
bash tools/build.sh
build/dlsim run scenarios/quickstart.yaml
