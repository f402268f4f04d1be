"""Results of a dlsim run as pandas tables: the same tables, columns and units as the HDF5 file.

A ``Results`` comes from ``dlsim.run`` (tables built from the C++ results, no file involved) or
from ``dlsim.read_results("run.h5")`` (an HDF5 file written by ``dlsim run`` or
``Results.write_hdf5``). Both give the same tables, keyed by their HDF5 group path:

- ``"results"``: one row per configuration (training: node count x plan; collective: group x
  size; cluster: variant) -- also ``Results.table``;
- cluster scenarios: ``"jobs"``, ``"pools"``, ``"job_timeline"`` (every job's states as time
  spans: variant, job, state, start, end), ``"job_preemptions"`` (variant, job, time, cause),
  and ``"variants/<i>/series/<name>"`` time series (busy_gpus, ready_gpus, cost_usd,
  nodes_<state>) with columns ``time`` and ``value``.

Column names are those of the HDF5 file and CSV (``samples_per_second``, ``time_to_train``,
``cost_to_train``, ``makespan``, ...); ``Results.units`` gives each column's unit.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Optional

import numpy as np
import pandas as pd

__all__ = ["Results", "read_results"]


@dataclass
class Results:
    """Every table of one run, with units and descriptions per column.

    Attributes:
        kind: ``"training"``, ``"collective"``, ``"cluster"`` or ``"plan"``.
        tables: table name (HDF5 group path) -> DataFrame, one column per dataset.
        units: table name -> column -> unit ("s", "samples/s", "USD", "1" for ratios, "" for counts).
        descriptions: table name -> column -> what the column means.
        dlsim_version, seed, scenario_source: what produced the results.
        scenario_yaml: the scenario as given; resolved_yaml: with every default and unit resolved.
    """

    kind: str
    tables: Dict[str, pd.DataFrame]
    units: Dict[str, Dict[str, str]] = field(default_factory=dict)
    descriptions: Dict[str, Dict[str, str]] = field(default_factory=dict)
    dlsim_version: str = ""
    seed: int = 0
    scenario_source: str = ""
    scenario_yaml: str = ""
    resolved_yaml: str = ""
    _native: object = field(default=None, repr=False, compare=False)

    @property
    def table(self) -> pd.DataFrame:
        """The main table (``/results`` in the HDF5 file)."""
        return self.tables["results"]

    @property
    def jobs(self) -> Optional[pd.DataFrame]:
        """Cluster scenarios: every job of every variant (``/jobs``); None otherwise."""
        return self.tables.get("jobs")

    @property
    def pools(self) -> Optional[pd.DataFrame]:
        """Cluster scenarios: every pool of every variant (``/pools``); None otherwise."""
        return self.tables.get("pools")

    @property
    def job_timeline(self) -> Optional[pd.DataFrame]:
        """Cluster scenarios: job state spans (variant, job, state, start, end in s); None otherwise."""
        return self.tables.get("job_timeline")

    @property
    def job_preemptions(self) -> Optional[pd.DataFrame]:
        """Cluster scenarios: each preemption (variant, job, time in s, cause); None otherwise."""
        return self.tables.get("job_preemptions")

    def variants(self) -> int:
        """How many variants a cluster scenario ran (rows of the main table); 0 for other kinds."""
        return len(self.table) if self.kind == "cluster" else 0

    def series(self, name: str, variant: int = 0) -> pd.DataFrame:
        """A time series of a cluster variant: columns ``time`` (s) and ``value``."""
        key = f"variants/{variant}/series/{name}"
        if key not in self.tables:
            known = sorted({k.split("/")[-1] for k in self.tables if k.startswith(f"variants/{variant}/series/")})
            raise KeyError(f"no series '{name}' for variant {variant}; known: {', '.join(known) or 'none'}")
        return self.tables[key]

    def series_names(self, variant: int = 0) -> list:
        """The names of the time series of a cluster variant."""
        prefix = f"variants/{variant}/series/"
        return sorted(k[len(prefix):] for k in self.tables if k.startswith(prefix))

    def arrays(self, table: str = "results") -> Dict[str, np.ndarray]:
        """A table as numpy arrays, one per column (text columns as object arrays)."""
        return {c: self.tables[table][c].to_numpy() for c in self.tables[table].columns}

    def printed_table(self) -> str:
        """The table ``dlsim run`` prints (for results read from a file: the main table as text)."""
        if self._native is None:
            return self.table.to_string(index=False)
        return self._native.printed_table()

    def write_hdf5(self, path: str) -> None:
        """Writes the HDF5 file ``dlsim run`` would write (atomically: no half-written file)."""
        if self._native is None:
            raise RuntimeError("these results were read from a file; copy that file instead")
        self._native.write_hdf5(str(path))

    def write_csv(self, path: str) -> None:
        """Writes the main table as CSV, as ``dlsim run --csv`` would."""
        if self._native is None:
            self.table.to_csv(path, index=False)
        else:
            self._native.write_csv(str(path))

    def __repr__(self) -> str:
        names = ", ".join(f"{k} ({len(v)} rows)" for k, v in list(self.tables.items())[:6])
        more = "" if len(self.tables) <= 6 else f", ... {len(self.tables) - 6} more"
        return f"<dlsim.Results {self.kind}: {names}{more}>"


def _kind_from_columns(columns) -> str:
    if "variant" in columns and "makespan" in columns:
        return "cluster"
    if "operation" in columns and "busbw" in columns:
        return "collective"
    return "training"


def _text(value) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def read_results(path: str) -> Results:
    """Reads an HDF5 results file written by ``dlsim run`` (format ``dlsim-results-1``)."""
    import h5py  # imported here: only reading files needs it

    tables: Dict[str, pd.DataFrame] = {}
    units: Dict[str, Dict[str, str]] = {}
    descriptions: Dict[str, Dict[str, str]] = {}
    with h5py.File(path, "r") as f:
        fmt = _text(f.attrs.get("format", ""))
        if fmt != "dlsim-results-1":
            raise ValueError(f"{path}: not a dlsim results file (format attribute '{fmt}', expected 'dlsim-results-1')")

        def visit(name, obj):
            if not isinstance(obj, h5py.Group) or "columns" not in obj.attrs:
                return
            columns = [c for c in _text(obj.attrs["columns"]).split(",") if c]
            data, u, d = {}, {}, {}
            for c in columns:
                dataset = obj[c]
                values = dataset[()]
                if dataset.dtype.kind == "S":
                    values = np.array([_text(v) for v in values], dtype=object)
                data[c] = values
                u[c] = _text(dataset.attrs.get("unit", ""))
                d[c] = _text(dataset.attrs.get("description", ""))
            tables[name] = pd.DataFrame(data, columns=columns)
            units[name] = u
            descriptions[name] = d

        f.visititems(visit)
        if "results" not in tables:
            raise ValueError(f"{path}: no /results table")
        kind = _text(f.attrs["kind"]) if "kind" in f.attrs else _kind_from_columns(tables["results"].columns)
        return Results(
            kind=kind,
            tables=tables,
            units=units,
            descriptions=descriptions,
            dlsim_version=_text(f.attrs.get("dlsim_version", "")),
            seed=int(f.attrs.get("seed", 0)),
            scenario_source=_text(f.attrs.get("scenario_source", "")),
            scenario_yaml=_text(f["scenario"][()]) if "scenario" in f else "",
            resolved_yaml=_text(f["scenario_resolved"][()]) if "scenario_resolved" in f else "",
        )
