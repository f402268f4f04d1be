"""Shared fixtures of the Python tests.

The tests run with ``/usr/bin/python3 -m pytest tests/python`` (ctest does this, see
tests/CMakeLists.txt) with the built package on PYTHONPATH and these environment variables:
DLSIM_SOURCE_DIR (the repository) and DLSIM_BINARY_DIR (the build folder holding ``dlsim``).
"""
import os
import pathlib
import subprocess

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")  # no display in tests

SOURCE_DIR = pathlib.Path(os.environ.get("DLSIM_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
BINARY_DIR = pathlib.Path(os.environ.get("DLSIM_BINARY_DIR", SOURCE_DIR / "build"))


@pytest.fixture(scope="session")
def source_dir() -> pathlib.Path:
    return SOURCE_DIR


@pytest.fixture(scope="session")
def dlsim_exe() -> pathlib.Path:
    exe = BINARY_DIR / "dlsim"
    if not exe.exists():
        pytest.fail(f"{exe} is missing: build first (tools/build.sh)")
    return exe


@pytest.fixture(scope="session")
def run_scenario(dlsim_exe, tmp_path_factory):
    """Runs a shipped scenario with the CLI and returns the HDF5 file it wrote (cached per arguments)."""
    cache = {}

    def run(name: str, *sets: str) -> pathlib.Path:
        key = (name,) + sets
        if key not in cache:
            out = tmp_path_factory.mktemp("h5") / (pathlib.Path(name).stem + ".h5")
            command = [str(dlsim_exe), "run", str(SOURCE_DIR / "scenarios" / name), "--quiet", "--output", str(out)]
            for s in sets:
                command += ["--set", s]
            subprocess.run(command, check=True, cwd=SOURCE_DIR)
            cache[key] = out
        return cache[key]

    return run
