#!/usr/bin/env bash
# Debian's /usr/bin/python3 with the dlsim package the build assembled (build/python) importable.
# usage: tools/python.sh [python arguments]   e.g. tools/python.sh my_study.py
here="$(cd "$(dirname "$0")/.." && pwd)"
if [ ! -f "$here/build/python/dlsim/__init__.py" ]; then
  echo "tools/python.sh: build/python/dlsim is missing: run tools/build.sh first" >&2
  exit 1
fi
export PYTHONPATH="$here/build/python${PYTHONPATH:+:$PYTHONPATH}"
exec /usr/bin/python3 "$@"
