"""Scenarios, runs, sweeps, the catalog and calibration: dlsim's Python API.

Everything goes through the same C++ code as the ``dlsim`` command: a scenario given as a dict
passes the same validation and gets the same error messages as a YAML file, raised as
``dlsim.ConfigError`` with the key path. Runs release the GIL and stop on Ctrl-C
(KeyboardInterrupt).
"""
from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

import pandas as pd

from . import _core
from .errors import CalibrationError, ConfigError
from .results import Results

__all__ = ["Scenario", "load", "run", "sweep", "devices", "instances", "models", "model", "calibrate", "validate",
           "validate_profile", "kernel_time", "memory_kernel_time", "predict_kernels"]

PathLike = Union[str, "os.PathLike[str]"]
Overrides = Union[None, Mapping[str, Any], Sequence[str]]
ScenarioLike = Union["Scenario", Mapping[str, Any], PathLike]


def _yaml_value(value: Any) -> str:
    """A Python value as the YAML text an override takes: strings as given (like --set), the rest as JSON."""
    if isinstance(value, str):
        return value
    if hasattr(value, "item"):  # numpy scalars
        value = value.item()
    return json.dumps(value)


def _set_arguments(overrides: Overrides) -> List[str]:
    """{"cluster.nodes": 8} or ["cluster.nodes=8"] -> ["cluster.nodes=8"]."""
    if overrides is None:
        return []
    if isinstance(overrides, Mapping):
        return [f"{key}={_yaml_value(value)}" for key, value in overrides.items()]
    if isinstance(overrides, str):
        raise TypeError("overrides are a dict {key.path: value} or a list of 'key.path=value' strings, not one string")
    return [str(o) for o in overrides]


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    raise TypeError(f"a scenario dict holds dicts, lists, strings, numbers and booleans, not {type(value).__name__}")


class Scenario:
    """A validated scenario, from a YAML file, a dict, or YAML text.

    ``Scenario("scenarios/quickstart.yaml")``, ``Scenario({"cluster": {...}, "workload": {...}})``
    or ``Scenario.from_yaml(text)``; ``set`` overrides values before validation, as the CLI's
    ``--set`` does: ``{"cluster.nodes": 8, "workload.precision": "bf16"}``. Relative paths in a
    dict or text (trace files, profiles, catalog files) are taken from ``base_dir`` (default: the
    current folder). Bad input raises ``dlsim.ConfigError`` naming where and why.
    """

    def __init__(self, source: Union[Mapping[str, Any], PathLike], set: Overrides = None,
                 base_dir: Optional[PathLike] = None):
        self._sets = _set_arguments(set)
        if isinstance(source, Mapping):
            self._path, self._name = "", "<dict>"
            self._text = json.dumps(source, default=_json_default)  # JSON is YAML: one parser, one validation
            self._base_dir = os.fspath(base_dir) if base_dir is not None else os.getcwd()
        elif isinstance(source, (str, os.PathLike)):
            self._path, self._name, self._text = os.fspath(source), os.fspath(source), ""
            self._base_dir = ""
            if base_dir is not None:
                raise TypeError("base_dir is for dicts and text; a file's relative paths are taken from its folder")
        else:
            raise TypeError(f"a scenario is a dict or a path to a YAML file, not {type(source).__name__}")
        self._native = self._load()

    @classmethod
    def from_yaml(cls, text: str, name: str = "<yaml>", set: Overrides = None,
                  base_dir: Optional[PathLike] = None) -> "Scenario":
        """A scenario from YAML text; ``name`` stands for the file in error messages."""
        self = cls.__new__(cls)
        self._sets = _set_arguments(set)
        self._path, self._name, self._text = "", name, text
        self._base_dir = os.fspath(base_dir) if base_dir is not None else os.getcwd()
        self._native = self._load()
        return self

    def _load(self):
        try:
            if self._path:
                return _core.load_file(self._path, self._sets)
            return _core.load_text(self._text, self._name, self._sets, self._base_dir)
        except ConfigError as e:
            if e.file != "<dict>":
                raise
            # Positions would point into the JSON text made from the dict: leave them out.
            where = f"<dict>: {e.key_path}: " if e.key_path else "<dict>: "
            raise ConfigError(where + e.message, "<dict>", None, None, e.key_path, e.message) from None

    def with_values(self, values: Overrides) -> "Scenario":
        """A new scenario: this one with more overrides (``{"cluster.nodes": 16}``), validated again."""
        other = Scenario.__new__(Scenario)
        other.__dict__.update(self.__dict__)
        other._sets = self._sets + _set_arguments(values)
        other._native = other._load()
        return other

    @property
    def kind(self) -> str:
        """``"training"`` (one job at several sizes), ``"collective"`` or ``"cluster"`` (many jobs)."""
        return self._native.kind

    @property
    def seed(self) -> int:
        return self._native.seed

    @property
    def source(self) -> str:
        """The file the scenario came from ("<dict>" for a dict)."""
        return self._native.source

    @property
    def yaml(self) -> str:
        """The scenario as given, after overrides."""
        return self._native.yaml

    @property
    def resolved_yaml(self) -> str:
        """The scenario with every default, catalog figure and unit resolved (SI units)."""
        return self._native.resolved_yaml

    def summary(self) -> Dict[str, Any]:
        """What the scenario describes: kind, instance, model, node counts, or pools, jobs and variants."""
        return self._native.summary()

    def run(self) -> Results:
        """Runs it (see ``dlsim.run``)."""
        return _results_of(_core.run(self._native))

    def sweep(self, grid: Optional[Mapping[str, Sequence[Any]]] = None, threads: int = 0) -> pd.DataFrame:
        """Runs it over a grid of values, or its own sweep section (see ``dlsim.sweep``)."""
        grid = grid or {}
        axes = [(key, [_yaml_value(v) for v in values]) for key, values in grid.items()]
        for key, values in axes:
            if isinstance(grid[key], str):
                raise TypeError(f"sweep values of {key} are a list, not one string")
        r = _core.sweep(self._path, self._text, self._name, self._base_dir, self._sets, axes, int(threads))
        return _sweep_frame(r)

    def plan(self, threads: int = 0) -> pd.DataFrame:
        """Searches its ``plan:`` section (see ``dlsim.plan``)."""
        r = _core.plan(self._path, self._text, self._name, self._base_dir, self._sets, int(threads))
        frame, units, descriptions = _frame(r["table"])
        frame.attrs.update(counts=dict(r["counts"]), best=r["best"], front=list(r["front"]), objective=r["objective"],
                           units=units, descriptions=descriptions)
        return frame

    def serve(self) -> pd.DataFrame:
        """Runs its ``serving:`` section (see ``dlsim.serve``)."""
        r = _core.serve(self._path, self._text, self._name, self._base_dir, self._sets)
        frame = pd.DataFrame(dict(r["requests"]))
        frame.attrs.update(summary=dict(r["summary"]), replicas_over_time=list(r["replicas_over_time"]))
        return frame

    def __repr__(self) -> str:
        if "_native" not in self.__dict__:
            return "<dlsim.Scenario (not loaded)>"
        return f"<dlsim.Scenario {self.kind} from {self.source}{' with ' + ', '.join(self._sets) if self._sets else ''}>"


def _frame(columns) -> tuple:
    names = [c[0] for c in columns]
    frame = pd.DataFrame({c[0]: c[3] for c in columns}, columns=names)
    return frame, {c[0]: c[1] for c in columns}, {c[0]: c[2] for c in columns}


def _results_of(native) -> Results:
    tables, units, descriptions = {}, {}, {}
    for name, columns in native.tables():
        tables[name], units[name], descriptions[name] = _frame(columns)
    return Results(kind=native.kind, tables=tables, units=units, descriptions=descriptions,
                   dlsim_version=native.dlsim_version, seed=native.seed, scenario_source=native.scenario_source,
                   scenario_yaml=native.scenario_yaml, resolved_yaml=native.resolved_yaml, _native=native)


def _sweep_frame(r) -> pd.DataFrame:
    frame, units, descriptions = _frame(r["table"])
    frame.attrs.update(kind=r["kind"], variants=r["variants"], units=units, descriptions=descriptions)
    return frame


def _scenario(scenario: ScenarioLike, set: Overrides) -> Scenario:
    if isinstance(scenario, Scenario):
        return scenario.with_values(set) if set else scenario
    return Scenario(scenario, set=set)


def load(scenario: Union[Mapping[str, Any], PathLike], set: Overrides = None) -> Scenario:
    """Loads and validates a scenario from a YAML file or a dict; raises ConfigError when it is bad."""
    return Scenario(scenario, set=set)


def run(scenario: ScenarioLike, set: Overrides = None) -> Results:
    """Runs a scenario (a Scenario, a dict or a YAML file) and returns its Results.

    The run releases the GIL; Ctrl-C (or a notebook's interrupt) stops it with KeyboardInterrupt.
    Results hold the tables of the HDF5 file as pandas DataFrames (``results.table``). Unlike
    ``dlsim run``, it writes no files (the scenario's ``output`` section is ignored): call
    ``results.write_hdf5(path)`` or ``results.write_csv(path)``.
    """
    return _scenario(scenario, set).run()


def sweep(scenario: ScenarioLike, grid: Optional[Mapping[str, Sequence[Any]]] = None, threads: int = 0,
          set: Overrides = None) -> pd.DataFrame:
    """Runs a scenario at every point of a grid: the cartesian product of the values of each key.
    Without a grid: the variants of the scenario's own ``sweep.grid``, ``sweep.zip`` and
    ``sweep.random`` (as ``dlsim sweep`` runs them, in memory; use the command for stores that
    survive a kill, or for MPI).

    ``dlsim.sweep("scenarios/quickstart.yaml", {"workload.precision": ["fp16", "fp32"],
    "cluster.instance": ["aws/p3.16xlarge", "aws/p4d.24xlarge"]})``. Every variant is validated
    before any runs; variants run on ``threads`` threads (0: one per core) with the same results
    whatever the count. Returns one DataFrame: every row of every variant's results table, after a
    ``sweep_variant`` column and one column per key holding the variant's value (as given, as text).
    ``frame.attrs`` holds ``kind``, ``variants`` (each variant's overrides) and ``units``.
    """
    return _scenario(scenario, set).sweep(grid, threads)


def plan(scenario: ScenarioLike, threads: int = 0, set: Overrides = None) -> pd.DataFrame:
    """Searches instance types, node counts and parallel plans for the cheapest or fastest way to
    train the scenario's workload, as ``dlsim plan`` does (its ``plan:`` section: objective,
    deadline, budget, instances, nodes, capacity, spot; scenarios/README.md, "Plan search").

    Returns one DataFrame with a row per candidate (the columns of ``dlsim plan --csv``: instance,
    nodes, plan, status, reason, the bounds and, where simulated, time_to_train and
    cost_to_train). ``frame.attrs`` holds ``best`` (the best candidate's row index), ``front``
    (the Pareto front's row indices, fastest first), ``counts`` (enumerated, no_fit, pruned,
    simulated, deadline, budget, feasible, memoized, unfinished, spot_runs), ``objective`` and
    ``units``. With ``plan.capacity: [on-demand, spot]`` each plan is a row per capacity and spot
    rows carry the spread of their cluster-model runs (time_to_train_p10/p90, cost_to_train_p10/p90,
    reclaims, checkpoint_interval); ``dlsim.plots.plan_front`` draws the front. Raises ConfigError when
    no candidate fits and meets the constraints. Runs on ``threads`` threads (0: one per core)
    with the same answer whatever the count.
    """
    return _scenario(scenario, set).plan(threads)


def serve(scenario: ScenarioLike, set: Overrides = None) -> pd.DataFrame:
    """Runs a serving scenario (its ``serving:`` section; scenarios/README.md, "Serving scenarios")
    as ``dlsim run`` does.

    Returns one DataFrame with a row per request: arrival_s, prompt_tokens, output_tokens,
    replica, decode_replica (disaggregated; -1 otherwise), dropped, first_token_s, finish_s (NaN
    for a dropped request), kv_transfer_s, preemptions. ``frame.attrs["summary"]`` holds what
    the run prints: latency percentiles (``ttft_s``, ``tpot_s``, ``itl_s``, ``e2e_s``, each a dict
    of p50, p90, p99, mean, in seconds), throughput, goodput, the share within the targets, KV
    use, busy share, preemptions, cold starts, replica-hours and the costs;
    ``frame.attrs["replicas_over_time"]`` the (time, replicas on) steps.
    """
    return _scenario(scenario, set).serve()


def validate(folder: PathLike = "scenarios/published", fast: bool = False, only: Optional[Sequence[str]] = None,
             threads: int = 0) -> pd.DataFrame:
    """Runs the published-result scenarios of ``folder`` and compares each prediction with its
    published figure, as ``dlsim validate`` does (docs/validation.md).

    ``fast``: only the scenarios marked ``validation.fast``; ``only``: file-name prefixes.
    Returns one row per published figure (scenario, source, reference, id, quantity, published,
    unit, published_low, published_high, predicted, error, explanation; values in ``unit``).
    ``frame.attrs`` holds ``mape_measured`` and ``mape_claims`` (fractions; NaN without points),
    ``measured_points``, ``claim_points``, ``skipped`` (scenarios whose data is absent),
    ``unexplained`` (figures beyond 15% without an explanation) and ``markdown`` (the table
    ``dlsim validate --format markdown`` prints).
    """
    r = _core.validate(os.fspath(folder), bool(fast), list(only or []), int(threads))
    frame, units, _ = _frame(r["table"])
    for key in ("mape_measured", "mape_claims", "measured_points", "claim_points", "skipped", "unexplained", "markdown"):
        frame.attrs[key] = r[key]
    frame.attrs["units"] = units
    return frame


def devices() -> pd.DataFrame:
    """The built-in devices (index: name): peak dense FLOP/s per precision, memory in bytes,
    bandwidths in bytes/s, the generation (which kernel model it runs: ampere, hopper, tpu,
    trainium, ...) and its parallel units (SMs, MXUs, NeuronCores), and the source of the figures."""
    return pd.DataFrame(_core.devices()).set_index("name")


def instances() -> pd.DataFrame:
    """The built-in cloud instance types (index: name): accelerators per node, device, network
    bandwidth (bytes/s), NICs and what they are (nic_tech, transport), host vCPUs (0: not
    known), on-demand and spot prices (USD per node-hour; spot 0 where no public figure) with
    the date, and sources."""
    return pd.DataFrame(_core.instances()).set_index("name")


def models() -> pd.DataFrame:
    """The model zoo (index: name): parameters, forward and training FLOPs per sample at the
    model's usual sequence length, and the sample unit."""
    return pd.DataFrame([_core.model(name) for name in _core.model_names()]).set_index("name")


def model(name: str, sequence_length: int = 0) -> Dict[str, Any]:
    """One zoo model's figures; ``sequence_length`` 0 means its usual length. KeyError for an unknown name."""
    if name not in _core.model_names():
        raise KeyError(f"unknown model '{name}'; the zoo has: {', '.join(_core.model_names())}")
    return _core.model(name, sequence_length)


def calibrate(out: PathLike, backend: str = "cpu", quick: bool = False, repeats: int = 0,
              max_spread: float = 0.5, device: str = "") -> str:
    """Measures micro-kernels on this machine (``backend`` "cpu" or "cuda"), fits a device
    profile and writes it to ``out`` (as ``dlsim calibrate``). Returns the report text.

    Raises CalibrationError when measurements stay too noisy, ConfigError for bad options.
    Ctrl-C stops it before the next kernel; nothing is written then.
    """
    code, report = _core.calibrate(backend, os.fspath(out), quick, repeats, max_spread, device)
    if code != 0:
        raise CalibrationError(report)
    return report


def validate_profile(profile: PathLike, backend: str = "", repeats: int = 0, max_spread: float = 0.5) -> str:
    """Predicts held-out kernels from a profile, measures them here, and returns the comparison
    (as ``dlsim calibrate --validate``). Raises CalibrationError when the profile fails."""
    code, report = _core.validate_profile(os.fspath(profile), backend, repeats, max_spread)
    if code != 0:
        raise CalibrationError(report)
    return report


def kernel_time(device: str, m: float, n: float, k: float, precision: str = "fp16", layout: str = "nt",
                batch: float = 1) -> Dict[str, Any]:
    """One GEMM C[m, n] = A[m, k] B[k, n] (``batch`` of them) timed by the kernel model of
    ``device``, as ``dlsim kernel --gemm MxNxK`` prints it.

    ``device``: a catalog device ("A100-80GB") or a measured table's GPU label ("A100");
    ``layout``: "nt" (a linear layer's forward), "nn" (its input gradient), "tn" (its weight
    gradient). Returns a dict: ``seconds`` (device time), ``tflops`` (achieved), ``tile_m``,
    ``tile_n``, ``split_k``, ``tiles``, ``waves``, ``memory_bound`` (what the model decided),
    ``mechanism_seconds`` (before the fitted corrections), ``band_p10_seconds`` and
    ``band_p90_seconds`` (the prediction times the p10 and p90 of measured / predicted over the
    profile's held-out GEMMs), ``band_cases``, ``alignment_bytes`` (of the operands' rows, 16 when
    aligned) and ``alignment_factor`` (the measured slowdown applied for misaligned rows on Hopper,
    1 otherwise), and ``device`` (the catalog name). Raises
    ConfigError for an unknown device, one without a kernel profile (TPUs), a precision it lacks,
    or sizes below 1.
    """
    return _core.kernel_time(device, float(m), float(n), float(k), precision, layout, float(batch))


def memory_kernel_time(device: str, kernel: str, bytes: float) -> Dict[str, Any]:
    """One memory-bound kernel of class ``kernel`` ("stream", "rms_norm", "softmax", ...) moving
    ``bytes``, as ``dlsim kernel --memory CLASS --bytes N`` prints it. Returns a dict:
    ``seconds``, ``bytes_per_second``, ``curve`` (the measured class whose curve it ran on, None
    when none), ``band_p10_seconds``, ``band_p90_seconds``, ``band_cases``, ``device``."""
    return _core.memory_kernel_time(device, kernel, float(bytes))


def predict_kernels(table: Union[PathLike, pd.DataFrame]) -> pd.DataFrame:
    """Every row of a measured kernel table predicted, as ``dlsim kernel --input`` does: a CSV
    file or a DataFrame in the columns of vidur's GEMM or element-wise tables or DeepBench's GEMM
    table (the time column, ``median_ms`` or ``time_ms``, may be absent).

    Returns the table with ``predicted_ms`` appended. ``frame.attrs`` holds ``format``,
    ``devices`` (the catalog device of each row), ``errors`` (per op and "all": cases,
    median_abs, p90_abs of |predicted / measured - 1|; empty without measured times) and
    ``summary`` (the line the command prints). Bad rows raise ConfigError with the file and line
    (for a DataFrame the file is "<dataframe>" and line N is its row N - 2).
    """
    if isinstance(table, pd.DataFrame):
        r = _core.predict_kernel_table(table.to_csv(index=False), "<dataframe>")
        frame = table.reset_index(drop=True)
    elif isinstance(table, (str, os.PathLike)):
        path = os.fspath(table)
        r = _core.predict_kernel_table_file(path)
        frame = pd.read_csv(path)
    else:
        raise TypeError(f"a kernel table is a CSV path or a pandas DataFrame, not {type(table).__name__}")
    if len(frame) != len(r["predicted_ms"]):
        raise ValueError(f"pandas read {len(frame)} rows where dlsim predicted {len(r['predicted_ms'])}")
    frame = frame.assign(predicted_ms=r["predicted_ms"])
    frame.attrs.update(format=r["format"], devices=r["devices"], errors=r["errors"], summary=r["summary"])
    return frame
