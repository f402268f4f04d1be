"""dlsim: a discrete-event simulator of cloud deep-learning clusters, from Python.

    import dlsim
    from dlsim import plots
    results = dlsim.run("scenarios/quickstart.yaml", set={"workload.precision": "bf16"})
    results.table                      # pandas DataFrame: one row per configuration
    plots.scaling(results)             # a matplotlib Figure

Scenarios come from YAML files or dicts (``dlsim.Scenario``), validated as by the ``dlsim``
command; ``dlsim.sweep`` runs a grid of values; ``dlsim.read_results`` opens an HDF5 file;
``dlsim.devices()``, ``dlsim.instances()``, ``dlsim.models()`` list the catalog and model zoo;
``dlsim.calibrate`` measures this machine; ``dlsim.kernel_time`` times one GEMM with a
device's kernel model and ``dlsim.predict_kernels`` a whole measured kernel table;
``dlsim.validate`` compares the published-result scenarios with their published figures.
``dlsim.plots`` (imported on demand, it loads matplotlib) draws the figures.
"""
try:
    from . import _core
except ImportError as e:  # pragma: no cover - a build problem, said plainly
    raise ImportError(
        "dlsim's C++ extension (_core) is missing or was built for another Python: build with "
        "tools/build.sh and use /usr/bin/python3 with PYTHONPATH=<repo>/build/python") from e

from .api import (Scenario, calibrate, devices, instances, kernel_time, load, memory_kernel_time, model, models,
                  plan, predict_kernels, run, serve, sweep, validate, validate_profile)
from .errors import CalibrationError, ConfigError
from .results import Results, read_results

__version__ = _core.__version__

__all__ = ["Scenario", "Results", "ConfigError", "CalibrationError", "load", "run", "sweep", "plan", "serve", "read_results",
           "devices", "instances", "models", "model", "calibrate", "validate", "validate_profile", "kernel_time",
           "memory_kernel_time", "predict_kernels"]
