"""Plots of dlsim results, with matplotlib.

Each function takes a ``dlsim.Results`` (from ``dlsim.run`` or ``dlsim.read_results``) and
returns a ``matplotlib.figure.Figure``; most also draw into an ``ax=`` (or ``fig=``) you pass.
Figures are made with ``matplotlib.figure.Figure``, not pyplot: nothing accumulates in
pyplot's state, a notebook shows the returned figure once, a script calls ``fig.savefig``.

- training results: :func:`scaling`, :func:`cost_vs_time`, :func:`breakdown`;
- cluster results: :func:`cost_vs_time` (one point per variant), :func:`utilization`,
  :func:`gantt`, :func:`jct` (the distribution of job completion times);
- collective results: :func:`collective`;
- plan searches (``dlsim plan --output``, or the DataFrame of ``dlsim.plan``): :func:`plan_front`;
- serving runs (the DataFrame of ``dlsim.serve``): :func:`serving_latency` (CDFs),
  :func:`serving_replicas` (replicas and requests in the fleet over time);
- :func:`save_all` writes every plot that applies as PNG files.

Column names are those of the HDF5 file (see scenarios/README.md, "Result columns").
"""
from __future__ import annotations

import pathlib
import re
from typing import List, Optional, Tuple

import numpy as np
import pandas as pd
import yaml
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator, NullLocator

from .results import Results

__all__ = ["scaling", "cost_vs_time", "pareto_front", "plan_front", "utilization", "gantt", "jct", "breakdown",
           "collective", "save_all", "plot_names", "check_plot_names", "STATE_COLORS"]

#: Colours of the job states in :func:`gantt`.
STATE_COLORS = {"queued": "#c7c7c7", "restarting": "#ff7f0e", "running": "#2ca02c",
                "checkpointing": "#1f77b4", "resizing": "#9467bd"}

# (label, how to get the per-iteration seconds from the results table): compute_time includes
# the recomputation, so the compute bar is compute_time - recompute_time and the bars add up to
# iteration_time.
_BREAKDOWN = [
    ("compute", lambda t: t["compute_time"] - t["recompute_time"]),
    ("optimizer", lambda t: t["optimizer_time"]),
    ("recompute", lambda t: t["recompute_time"]),
    ("exposed communication", lambda t: t["exposed_communication_time"]),
    ("tensor-parallel", lambda t: t["tensor_parallel_time"]),
    ("expert all-to-all", lambda t: t["expert_all_to_all_time"]),
    ("context-parallel ring", lambda t: t.get("context_parallel_time", 0 * t["iteration_time"])),
    ("pipeline sends", lambda t: t.get("pipeline_send_time", 0 * t["iteration_time"])),
    ("pipeline bubble", lambda t: t["pipeline_bubble_time"]),
    ("framework overhead", lambda t: t.get("framework_overhead_time", 0 * t["iteration_time"])),
    ("gradient compression", lambda t: t.get("compression_blocking_time", 0 * t["iteration_time"])),
]

_PREEMPTION_MARKERS = {"capacity lost": ("x", "red"), "suspended": ("v", "black")}


# ----------------------------------------------------------------------------- helpers

def _require(results, kinds: Tuple[str, ...], what: str) -> None:
    if not isinstance(results, Results):
        raise TypeError(f"{what}() takes a dlsim.Results, not {type(results).__name__}")
    if results.kind not in kinds:
        raise ValueError(f"{what}() plots {' or '.join(kinds)} results; these are {results.kind} results")


def _require_columns(table: pd.DataFrame, columns, what: str) -> None:
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise ValueError(f"{what}(): the table lacks the column(s) {', '.join(missing)}")


def _axes(ax, figsize):
    if ax is not None:
        return ax.figure, ax
    fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.add_subplot()


def _source(results: Results) -> str:
    """" (file.yaml)" for a scenario file; for a dict or text, what it simulates ("bert-large on
    aws/p4d.24xlarge", "cluster of 2 pools"), read from the resolved scenario; else ""."""
    source = results.scenario_source
    if source and not source.startswith("<"):
        return f" ({pathlib.Path(source).name})"
    described = _describe(results.resolved_yaml)
    return f" ({described})" if described else ""


def _describe(resolved_yaml: str) -> str:
    """What a resolved scenario simulates, in a few words; "" when it cannot tell."""
    try:
        scenario = yaml.safe_load(resolved_yaml) if resolved_yaml else None
    except yaml.YAMLError:
        return ""
    if not isinstance(scenario, dict):
        return ""
    cluster = scenario.get("cluster") if isinstance(scenario.get("cluster"), dict) else {}
    instance = cluster.get("instance")
    for section, key in (("workload", "model"), ("serving", "model"), ("collective", "operation")):
        part = scenario.get(section)
        if isinstance(part, dict) and part.get(key):
            return f"{part[key]} on {instance}" if instance else str(part[key])
    pools = scenario.get("pools")
    if isinstance(pools, list) and pools:
        return f"cluster of {len(pools)} pool{'s' if len(pools) > 1 else ''}"
    return ""


def _time_unit(max_seconds: float) -> Tuple[float, str]:
    """The divisor and unit name that show durations up to ``max_seconds`` readably."""
    for divisor, unit in ((86400.0, "days"), (3600.0, "h"), (60.0, "min")):
        if max_seconds >= 3 * divisor:
            return divisor, unit
    return 1.0, "s"


def _check_variant(results: Results, variant: int) -> str:
    """The name of a cluster variant; ValueError when there is no such variant."""
    count = results.variants()
    if not 0 <= variant < count:
        raise ValueError(f"no variant {variant}: these results have variants 0..{count - 1}")
    return str(results.table["variant"].iloc[variant])


def _plan_groups(table: pd.DataFrame) -> List[Tuple[str, pd.DataFrame]]:
    """The rows of each plan of a training table, labelled.

    Rows come node count by node count, each with one row per plan in the scenario's order, so a
    row's plan index is its position among the rows of its node count. The label is the plan
    text without its data-parallel and micro-batch terms (they change with the node count).
    """
    index = table.groupby("nodes", sort=False).cumcount()
    groups = [table[index == i] for i in range(int(index.max()) + 1)] if len(table) else []
    labels = [re.sub(r"\b(d\d+|m\d+x\d+)\b", "", str(g["plan"].iloc[0])).split() for g in groups]
    labels = [" ".join(words) or "data parallel" for words in labels]
    if len(set(labels)) < len(labels):
        labels = [str(g["plan"].iloc[0]) for g in groups]
    return list(zip(labels, groups))


def _step_values(series: pd.DataFrame, grid: np.ndarray) -> np.ndarray:
    """A step series (value holds from its time on; the last of equal times wins) on ``grid``."""
    last = series.drop_duplicates("time", keep="last")
    times, values = last["time"].to_numpy(float), last["value"].to_numpy(float)
    at = np.searchsorted(times, grid, side="right") - 1
    return np.where(at >= 0, values[np.clip(at, 0, None)], 0.0)


def _bytes(value: float, _pos=None) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{value:g} {unit}"
        value /= 1024
    return ""


# ----------------------------------------------------------------------------- training

def scaling(results: Results, fig: Optional[Figure] = None) -> Figure:
    """Throughput and scaling efficiency against the number of accelerators (training results).

    Top: ``samples_per_second`` (samples/s); bottom: ``scaling_efficiency`` (in %, against the
    smallest configuration of the same plan), both against ``accelerators`` (log-log when they
    span 4x or more, so that linear scaling is a straight line); one line per plan
    (column ``plan``) when the scenario has several, a legend then names them.
    """
    _require(results, ("training",), "scaling")
    table = results.table
    _require_columns(table, ("nodes", "accelerators", "plan", "samples_per_second", "scaling_efficiency"), "scaling")
    fig = fig if fig is not None else Figure(figsize=(7, 6.5), layout="constrained")
    top, bottom = fig.subplots(2, 1, sharex=True)
    groups = _plan_groups(table)
    for label, rows in groups:
        rows = rows.sort_values("accelerators")
        top.plot(rows["accelerators"], rows["samples_per_second"], marker="o", label=label)
        bottom.plot(rows["accelerators"], 100 * rows["scaling_efficiency"], marker="o", label=label)
    bottom.axhline(100, color="grey", linestyle=":", linewidth=1, gid="ideal")
    counts = np.unique(table["accelerators"].to_numpy())
    if len(counts) > 1 and counts.max() >= 4 * counts.min():
        bottom.set_xscale("log", base=2)  # log-log: linear scaling is a straight line
        top.set_yscale("log")
    bottom.set_xticks(counts, [str(c) for c in counts])
    bottom.xaxis.set_minor_locator(NullLocator())
    top.set_ylabel("throughput (samples/s)")
    bottom.set_ylabel("scaling efficiency (%)")
    bottom.set_xlabel("accelerators")
    bottom.set_ylim(0, max(105, 100 * table["scaling_efficiency"].max() + 5))
    top.grid(True, alpha=0.3)
    bottom.grid(True, alpha=0.3)
    if len(groups) > 1:
        top.legend(title="plan", fontsize="small")
    fig.suptitle("Throughput and scaling efficiency" + _source(results))
    return fig


def breakdown(results: Results, ax=None) -> Figure:
    """Where an iteration's time goes: one stacked bar per configuration (training results).

    Segments: compute (``compute_time`` less ``recompute_time``), optimizer (``optimizer_time``),
    recompute (``recompute_time``), exposed communication (``exposed_communication_time``),
    tensor-parallel (``tensor_parallel_time``), expert all-to-all (``expert_all_to_all_time``),
    context-parallel ring (``context_parallel_time``), blocking pipeline sends
    (``pipeline_send_time``), pipeline bubble (``pipeline_bubble_time``), framework overhead (``framework_overhead_time``),
    gradient compression on the compute stream (``compression_blocking_time``);
    a bar adds up to ``iteration_time``. Categories
    that are zero everywhere (below a millionth of the longest iteration) are left out. The y axis
    is in ms when every iteration lasts under a second, else in s.
    """
    _require(results, ("training",), "breakdown")
    table = results.table
    _require_columns(table, ["nodes", "plan", "compute_time", "optimizer_time", "recompute_time",
                             "exposed_communication_time", "tensor_parallel_time",
                             "expert_all_to_all_time", "pipeline_bubble_time"], "breakdown")
    parts = {label: get(table).fillna(0).to_numpy(float) for label, get in _BREAKDOWN}
    total = sum(parts.values())
    longest = float(total.max()) if len(total) else 0.0
    parts = {k: v for k, v in parts.items() if np.abs(v).max(initial=0) > 1e-6 * longest}
    scale, unit = (1e3, "ms") if longest < 1 else (1.0, "s")
    fig, ax = _axes(ax, (max(6, 1.1 * len(table) + 3), 5))
    x = np.arange(len(table))
    bottom = np.zeros(len(table))
    for label, values in parts.items():
        ax.bar(x, values * scale, bottom=bottom, label=label, width=0.7)
        bottom += values * scale
    names = [f"{n} nodes\n{p}" for n, p in zip(table["nodes"], table["plan"])]
    ax.set_xticks(x, names, rotation=30 if len(table) > 6 else 0, ha="right" if len(table) > 6 else "center",
                  fontsize="small")
    ax.set_ylim(0, 1.15 * longest * scale)  # room for the legend
    ax.set_ylabel(f"time per iteration ({unit})")
    ax.set_xlabel("configuration (nodes, plan)")
    ax.set_title("Where an iteration's time goes" + _source(results))
    ax.legend(fontsize="small")
    return fig


# ----------------------------------------------------------------------------- cost against time

def pareto_front(time, cost) -> np.ndarray:
    """A boolean mask of the points that no other point beats on both time and cost.

    A point is dominated when another is no slower and no dearer, and better in one of the two.
    NaN points are never on the front.
    """
    t, c = np.asarray(time, float), np.asarray(cost, float)
    ok = np.isfinite(t) & np.isfinite(c)
    front = ok.copy()
    for i in np.flatnonzero(ok):
        better = ok & (t <= t[i]) & (c <= c[i]) & ((t < t[i]) | (c < c[i]))
        front[i] = not better.any()
    return front


def _cost_time_frame(data, time, cost, label) -> Tuple[pd.DataFrame, str, str, str]:
    """(columns time, cost, label, eligible; a title; the time and cost column names)."""
    if isinstance(data, pd.DataFrame):
        time, cost = time or "time_to_train", cost or "cost_to_train"
        _require_columns(data, [time, cost] + ([label] if label else []), "cost_vs_time")
        labels = data[label].astype(str) if label else pd.Series([str(i) for i in data.index])
        eligible = np.ones(len(data), bool)
        title = f"{cost} against {time}"
    else:
        _require(data, ("training", "cluster"), "cost_vs_time")
        table = data.table
        if data.kind == "training":
            time, cost = "time_to_train", "cost_to_train"
            labels = [f"{n} nodes, {p}" for n, p in zip(table["nodes"], table["plan"])]
            eligible = np.ones(len(table), bool)
        else:
            time, cost = "makespan", "total_cost"
            labels = table["variant"].astype(str)
            unfinished = table["unfinished"] if "unfinished" in table else pd.Series(0, index=table.index)
            eligible = (unfinished.fillna(0) == 0).to_numpy()
        _require_columns(table, [time, cost], "cost_vs_time")
        data, title = table, "Cost against time" + _source(data)
    frame = pd.DataFrame({"time": data[time].to_numpy(float), "cost": data[cost].to_numpy(float),
                          "label": list(labels), "eligible": eligible})
    return frame, title, time, cost


def cost_vs_time(data, time: Optional[str] = None, cost: Optional[str] = None,
                 label: Optional[str] = None, ax=None) -> Figure:
    """Cost against time, one point per configuration, with the Pareto front highlighted.

    ``data`` is a ``dlsim.Results``: training (``time_to_train`` against ``cost_to_train``, one
    point per node count x plan) or cluster (``makespan`` against ``total_cost``, one point per
    variant; variants with unfinished jobs are drawn hollow and kept off the front); or a
    DataFrame (a sweep) whose columns ``time`` and ``cost`` (default ``time_to_train`` and
    ``cost_to_train``, time in s, cost in USD) are plotted, labelled by column ``label`` (or the
    index). The front (see :func:`pareto_front`: no other point both cheaper and faster) is drawn
    as a red line through red points. Rows with NaN time or cost are left out. Every point is
    labelled when there are at most 12, else only the front's.
    """
    frame, title, time_name, cost_name = _cost_time_frame(data, time, cost, label)
    frame = frame[np.isfinite(frame["time"]) & np.isfinite(frame["cost"])].reset_index(drop=True)
    if frame.empty:
        raise ValueError(f"cost_vs_time(): no row has both {time_name} and {cost_name}")
    divisor, unit = _time_unit(frame["time"].max())
    x, y = frame["time"] / divisor, frame["cost"]
    front = pareto_front(np.where(frame["eligible"], frame["time"], np.nan), frame["cost"])
    fig, ax = _axes(ax, (8, 5.5))
    done, hollow = frame["eligible"].to_numpy(), ~frame["eligible"].to_numpy()
    ax.scatter(x[done], y[done], color="tab:blue", zorder=2, gid="configurations", label="configuration")
    if hollow.any():
        ax.scatter(x[hollow], y[hollow], facecolors="none", edgecolors="tab:blue", zorder=2,
                   gid="unfinished", label="unfinished jobs")
    order = np.argsort(x[front].to_numpy())
    ax.plot(x[front].to_numpy()[order], y[front].to_numpy()[order], color="red", linewidth=1.5,
            drawstyle="steps-post", zorder=1, gid="pareto-line")
    ax.scatter(x[front], y[front], color="red", s=60, zorder=3, gid="pareto", label="Pareto front")
    show = frame.index if len(frame) <= 12 else frame.index[front]
    for i in show:
        ax.annotate(frame["label"][i], (x[i], y[i]), textcoords="offset points", xytext=(5, 4), fontsize="x-small")
    ax.set_xlabel(f"{time_name} ({unit})")
    ax.set_ylabel(f"{cost_name} (USD)")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    return fig


# ----------------------------------------------------------------------------- plan search

_CAPACITY_MARKERS = {"on-demand": "o", "spot": "^"}


def plan_front(data, ax=None) -> Figure:
    """Time to train against cost of a plan search's simulated candidates, with its Pareto front.

    ``data`` is the ``dlsim.Results`` of ``dlsim plan --output FILE.h5`` or the DataFrame of
    ``dlsim.plan``. Every simulated candidate is a point (circles on-demand, triangles spot):
    feasible ones blue, those that miss the deadline or budget (or whose spot runs did not finish)
    hollow grey. The front (column ``pareto``) is a red line through red points, each labelled
    with its instance type, nodes and plan; spot points on it carry bars from the p10 to the p90
    of their cluster-model runs on both axes; the best point (column ``best``) is a gold star.
    Candidates never simulated (no fit, pruned) are left out: their count is in the title.
    """
    if isinstance(data, Results):
        _require(data, ("plan",), "plan_front")
        table, source = data.table, _source(data)
    elif isinstance(data, pd.DataFrame):
        table, source = data, ""
    else:
        raise TypeError(f"plan_front() takes a dlsim.Results or the DataFrame of dlsim.plan, not {type(data).__name__}")
    _require_columns(table, ["instance", "nodes", "plan", "status", "pareto", "best", "time_to_train", "cost_to_train"],
                     "plan_front")
    time, cost = table["time_to_train"].to_numpy(float), table["cost_to_train"].to_numpy(float)
    simulated = np.isfinite(time) & np.isfinite(cost)
    if not simulated.any():
        raise ValueError("plan_front(): no candidate was simulated")
    capacity = table["capacity"].astype(str).to_numpy() if "capacity" in table else np.full(len(table), "on-demand")
    feasible = (table["status"] == "feasible").to_numpy()
    front = (table["pareto"].to_numpy(float) == 1) & simulated
    best = (table["best"].to_numpy(float) == 1) & simulated
    divisor, unit = _time_unit(np.nanmax(time[simulated]))
    x, y = time / divisor, cost
    fig, ax = _axes(ax, (8, 5.5))
    for name, marker in _CAPACITY_MARKERS.items():
        ok = simulated & (capacity == name)
        if not ok.any():
            continue
        ax.scatter(x[ok & feasible], y[ok & feasible], marker=marker, color="tab:blue", alpha=0.5, s=18, zorder=2,
                   gid=f"feasible-{name}", label=f"{name}, feasible")
        rejected = ok & ~feasible
        if rejected.any():
            ax.scatter(x[rejected], y[rejected], marker=marker, facecolors="none", edgecolors="grey", s=18, zorder=2,
                       gid=f"rejected-{name}", label=f"{name}, misses deadline or budget")
    order = np.argsort(x[front])
    ax.plot(x[front][order], y[front][order], color="red", linewidth=1.5, drawstyle="steps-post", zorder=3,
            gid="pareto-line")
    spread = front & (capacity == "spot")
    if spread.any() and "time_to_train_p10" in table:
        t10, t90 = table["time_to_train_p10"].to_numpy(float) / divisor, table["time_to_train_p90"].to_numpy(float) / divisor
        c10, c90 = table["cost_to_train_p10"].to_numpy(float), table["cost_to_train_p90"].to_numpy(float)
        bars = ax.errorbar(x[spread], y[spread], xerr=[x[spread] - t10[spread], t90[spread] - x[spread]],
                           yerr=[y[spread] - c10[spread], c90[spread] - y[spread]], fmt="none", ecolor="red", alpha=0.6,
                           zorder=3)
        for collection in bars.lines[2]:  # the x and y bars
            collection.set_gid("spot-spread")
    for name, marker in _CAPACITY_MARKERS.items():
        on = front & (capacity == name)
        if on.any():
            ax.scatter(x[on], y[on], marker=marker, color="red", s=50, zorder=4, gid=f"pareto-{name}",
                       label=f"Pareto front, {name}")
    ax.scatter(x[best], y[best], marker="*", color="gold", edgecolors="black", s=220, zorder=5, gid="best", label="best")
    # One label per front position: ties (plans equally fast and dear) share it.
    labels = {}
    for i in np.flatnonzero(front):
        text = f"{table['instance'].iloc[i]} x{int(table['nodes'].iloc[i])} {capacity[i]} {table['plan'].iloc[i]}"
        labels.setdefault((x[i], y[i]), []).append(text)
    for (px, py), texts in list(labels.items())[:12]:
        shown = texts[0] + (f" (+{len(texts) - 1} tied)" if len(texts) > 1 else "")
        ax.annotate(shown, (px, py), textcoords="offset points", xytext=(6, 4), fontsize="x-small")
    # Log axes when the candidates span a decade or more: the front sits in the corner otherwise.
    for values, set_scale in ((x[simulated], ax.set_xscale), (y[simulated], ax.set_yscale)):
        if np.nanmin(values) > 0 and np.nanmax(values) >= 10 * np.nanmin(values):
            set_scale("log")
    ax.set_xlabel(f"time to train ({unit})")
    ax.set_ylabel("cost to train (USD)")
    left_out = int((~simulated).sum())
    ax.set_title(f"Plan search{source}: {int(simulated.sum())} simulated, {left_out} not (no fit or pruned)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    return fig


# ----------------------------------------------------------------------------- cluster

def utilization(results: Results, variant: int = 0, fig: Optional[Figure] = None) -> Figure:
    """GPU utilization and nodes by state over time, for one variant of a cluster scenario.

    Top: utilization in % = series ``busy_gpus`` / ``ready_gpus`` (0 while no GPU is ready), as
    steps. Bottom: the ``nodes_<state>`` series (busy, ready, provisioning, draining, ...)
    stacked as steps. Time in hours.
    """
    _require(results, ("cluster",), "utilization")
    name = _check_variant(results, variant)
    try:
        busy, ready = results.series("busy_gpus", variant), results.series("ready_gpus", variant)
    except KeyError as e:
        raise ValueError(f"utilization(): {e.args[0]}") from None
    states = [n for n in results.series_names(variant) if n.startswith("nodes_")]
    nodes = [results.series(n, variant) for n in states]
    grid = np.unique(np.concatenate([s["time"].to_numpy(float) for s in [busy, ready] + nodes]))
    busy_v, ready_v = _step_values(busy, grid), _step_values(ready, grid)
    share = np.divide(busy_v, ready_v, out=np.zeros_like(busy_v), where=ready_v > 0)
    fig = fig if fig is not None else Figure(figsize=(9, 6.5), layout="constrained")
    top, bottom = fig.subplots(2, 1, sharex=True)
    hours = grid / 3600
    top.step(hours, 100 * share, where="post", color="tab:green")
    top.set_ylim(0, 105)
    top.set_ylabel("GPU utilization (%)\nbusy / ready GPUs")
    if states:
        bottom.stackplot(hours, *[_step_values(s, grid) for s in nodes], step="post",
                         labels=[n[len("nodes_"):] for n in states])
        bottom.legend(title="node state", fontsize="small", loc="upper right")
    bottom.yaxis.set_major_locator(MaxNLocator(integer=True))
    bottom.set_ylabel("nodes")
    bottom.set_xlabel("time (h)")
    for ax in (top, bottom):
        ax.grid(True, alpha=0.3)
    fig.suptitle(f"GPU utilization and nodes, variant {variant}: {name}")
    return fig


def _gantt_rows(results: Results, variant: int, max_jobs: int):
    """(spans of the variant, jobs shown in order of first start, how many jobs in all)."""
    timeline = results.job_timeline
    if timeline is None:
        raise ValueError("gantt() needs the table 'job_timeline' (job state spans), which these "
                         "results lack; they were written by a dlsim that did not record it")
    _require_columns(timeline, ["variant", "job", "state", "start", "end"], "gantt")
    spans = timeline[timeline["variant"] == variant]
    if spans.empty:
        raise ValueError(f"gantt(): the job timeline has no spans for variant {variant}")
    first = spans.groupby("job", sort=False)["start"].min().reset_index()
    jobs = first.sort_values(["start", "job"], kind="stable")["job"].tolist()
    return spans, jobs[:max_jobs], len(jobs)


def gantt(results: Results, variant: int = 0, max_jobs: int = 40, ax=None) -> Figure:
    """Every job's states over time, one row per job, for one variant of a cluster scenario.

    From the table ``job_timeline`` (variant, job, state, start, end in s): a bar per span,
    coloured by state (queued, restarting, running, checkpointing, resizing; see
    ``STATE_COLORS``). Preemptions from ``job_preemptions`` (variant, job, time, cause) are
    marked: a red x where capacity was lost, a black triangle where the job was suspended. Jobs
    are ordered by first start; only the first ``max_jobs`` are drawn and the title says how many
    were left out. Time in hours. ValueError when the results have no job timeline.
    """
    _require(results, ("cluster",), "gantt")
    name = _check_variant(results, variant)
    spans, jobs, total = _gantt_rows(results, variant, max_jobs)
    row = {job: i for i, job in enumerate(jobs)}
    spans = spans[spans["job"].isin(row)]
    fig, ax = _axes(ax, (10, min(40, max(3.0, 0.28 * len(jobs) + 1.8))))
    for state in list(STATE_COLORS) + sorted(set(spans["state"]) - set(STATE_COLORS)):
        part = spans[spans["state"] == state]
        if not part.empty:
            ax.barh(part["job"].map(row), (part["end"] - part["start"]) / 3600, left=part["start"] / 3600,
                    height=0.7, color=STATE_COLORS.get(state, "#8c564b"), label=state)
    preemptions = results.job_preemptions
    if preemptions is not None and not preemptions.empty:
        marks = preemptions[(preemptions["variant"] == variant) & preemptions["job"].isin(row)]
        for cause, group in marks.groupby("cause", sort=True):
            marker, color = _PREEMPTION_MARKERS.get(cause, ("x", "purple"))
            ax.scatter(group["time"] / 3600, group["job"].map(row), marker=marker, color=color, s=40,
                       zorder=3, gid="preemptions", label=f"preemption: {cause}")
    ax.set_yticks(range(len(jobs)), jobs, fontsize="small" if len(jobs) <= 20 else "x-small")
    ax.set_ylim(len(jobs) - 0.5, -0.5)
    ax.set_xlabel("time (h)")
    ax.set_ylabel("job")
    left_out = f"; first {len(jobs)} of {total} jobs, {total - len(jobs)} left out" if total > len(jobs) else ""
    ax.set_title(f"Jobs over time, variant {variant}: {name}{left_out}")
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1))
    ax.grid(True, axis="x", alpha=0.3)
    return fig


def jct(results: Results, ax=None) -> Figure:
    """The distribution of job completion times (cluster results): one CDF per variant.

    From the table ``jobs`` (variant, state, jct in s): the jobs that finished (state ``done``),
    completion time = finish - submit, queueing included. The x axis is logarithmic when the times
    span more than 10x; the legend gives each variant's finished jobs and median. ValueError when
    no job finished.
    """
    _require(results, ("cluster",), "jct")
    jobs = results.jobs
    if jobs is None:
        raise ValueError("jct() needs the table 'jobs', which these results lack")
    _require_columns(jobs, ["variant", "state", "jct"], "jct")
    done = jobs[jobs["state"] == "done"]
    if done.empty:
        raise ValueError("jct(): no job finished in these results")
    divisor, unit = _time_unit(float(done["jct"].max()))
    fig, ax = _axes(ax, (7, 4.5))
    names = results.table["variant"].astype(str).tolist()
    for v, group in done.groupby("variant", sort=True):
        times = np.sort(group["jct"].to_numpy()) / divisor
        share = np.arange(1, len(times) + 1) / len(times)
        name = names[int(v)] if 0 <= int(v) < len(names) else str(v)
        ax.step(times, 100 * share, where="post",
                label=f"{name}: {len(times)} jobs, median {np.median(times):.3g} {unit}")
    positive = done["jct"][done["jct"] > 0]
    if not positive.empty and positive.max() > 10 * positive.min():
        ax.set_xscale("log")
    ax.set_xlabel(f"job completion time ({unit})")
    ax.set_ylabel("jobs finished within (%)")
    ax.set_ylim(0, 101)
    ax.set_title("Job completion time" + _source(results))
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small", loc="lower right")
    return fig


# ----------------------------------------------------------------------------- collective

def collective(results: Results, ax=None) -> Figure:
    """Bus bandwidth against message size (collective results), as nccl-tests reports it.

    ``busbw`` (GB/s, averaged over the groups running at once) against ``size`` (bytes per rank,
    log scale), one line per node count (``nodes``) and group count (``groups``).
    """
    _require(results, ("collective",), "collective")
    table = results.table
    _require_columns(table, ["nodes", "groups", "size", "busbw", "operation"], "collective")
    fig, ax = _axes(ax, (8, 5))
    for (nodes, groups), rows in table.groupby(["nodes", "groups"], sort=True):
        mean = rows.groupby("size", sort=True)["busbw"].mean()
        label = f"{nodes} node{'s' if nodes != 1 else ''}" + (f", {groups} groups" if groups > 1 else "")
        ax.plot(mean.index, mean.to_numpy() / 1e9, marker="o", markersize=3, label=label)
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(FuncFormatter(_bytes))
    ax.set_xlabel("message size per rank")
    ax.set_ylabel("bus bandwidth (GB/s)")
    operations = ", ".join(sorted(set(map(str, table["operation"]))))
    ax.set_title(f"{operations}: bus bandwidth" + _source(results))
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize="small")
    return fig


# ----------------------------------------------------------------------------- all at once

def _require_serving(frame, what: str) -> None:
    if not isinstance(frame, pd.DataFrame) or "summary" not in frame.attrs:
        raise TypeError(f"{what}() takes the DataFrame dlsim.serve returns")


def serving_latency(frame: pd.DataFrame, ax=None) -> Figure:
    """Latency CDFs of a serving run (``dlsim.serve``): time to first token, time per output
    token and end-to-end latency of every completed request, in seconds on a log axis, with the
    targets of the scenario where it set them (``summary``'s p50 and p99 marked)."""
    _require_serving(frame, "serving_latency")
    done = frame[~frame["dropped"]]
    ttft = (done["first_token_s"] - done["arrival_s"]).to_numpy(float)
    e2e = (done["finish_s"] - done["arrival_s"]).to_numpy(float)
    many = done["output_tokens"] > 1
    tpot = ((done["finish_s"] - done["first_token_s"])[many] / (done["output_tokens"][many] - 1)).to_numpy(float)
    fig, ax = _axes(ax, (8, 5))
    for values, label in ((ttft, "time to first token"), (tpot, "time per output token"), (e2e, "end to end")):
        values = np.sort(values[np.isfinite(values) & (values > 0)])
        if values.size:
            ax.step(values, np.arange(1, values.size + 1) / values.size, where="post", label=label)
    ax.set_xscale("log")
    ax.set_xlabel("seconds")
    ax.set_ylabel("share of requests")
    ax.set_ylim(0, 1.02)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="lower right")
    s = frame.attrs["summary"]
    ax.set_title(f"{s['model']} on {s['replicas']} x {s['tensor']} {s['device']}: {s['completed']} requests")
    return fig


def serving_replicas(frame: pd.DataFrame, ax=None) -> Figure:
    """Replicas on (steps, from ``replicas_over_time``) and requests in the fleet (arrived and not
    finished) over a serving run, in minutes."""
    _require_serving(frame, "serving_replicas")
    fig, ax = _axes(ax, (9, 4.5))
    arrivals = np.sort(frame["arrival_s"].to_numpy(float))
    finishes = np.sort(frame["finish_s"].to_numpy(float)[np.isfinite(frame["finish_s"].to_numpy(float))])
    grid = np.unique(np.concatenate([arrivals, finishes]))
    in_fleet = np.searchsorted(arrivals, grid, side="right") - np.searchsorted(finishes, grid, side="right")
    ax.step(grid / 60, in_fleet, where="post", color="tab:gray", alpha=0.7, label="requests in the fleet")
    ax.set_xlabel("time (min)")
    ax.set_ylabel("requests")
    steps = frame.attrs.get("replicas_over_time") or []
    if steps:
        right = ax.twinx()
        t = np.array([p[0] for p in steps] + [grid[-1] if grid.size else steps[-1][0]], float)
        n = np.array([p[1] for p in steps] + [steps[-1][1]], float)
        right.step(t / 60, n, where="post", color="tab:blue", label="replicas on")
        right.set_ylabel("replicas on", color="tab:blue")
        right.yaxis.set_major_locator(MaxNLocator(integer=True))
        right.set_ylim(0, max(1, n.max()) * 1.15)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left")
    return fig


def _plots_for(results: Results):
    """(file stem, function making the figure) for every plot that applies to the results."""
    if results.kind == "training":
        return [("scaling", lambda: scaling(results)), ("cost_vs_time", lambda: cost_vs_time(results)),
                ("breakdown", lambda: breakdown(results))]
    if results.kind == "collective":
        return [("collective", lambda: collective(results))]
    if results.kind == "plan":
        return [("plan_front", lambda: plan_front(results))]
    plots = [("cost_vs_time", lambda: cost_vs_time(results))] if results.variants() > 1 else []
    jobs = results.jobs
    if jobs is not None and "jct" in jobs.columns and (jobs["state"] == "done").any():
        plots.append(("jct", lambda: jct(results)))
    timeline = results.job_timeline
    for v in range(results.variants()):
        if "busy_gpus" in results.series_names(v):
            plots.append((f"utilization-variant{v}", lambda v=v: utilization(results, v)))
        if timeline is not None and (timeline["variant"] == v).any():
            plots.append((f"gantt-variant{v}", lambda v=v: gantt(results, v)))
    return plots


def plot_names(results: Results) -> List[str]:
    """The names of the plots that apply to the results, as :func:`save_all` names their files."""
    if not isinstance(results, Results):
        raise TypeError(f"plot_names() takes a dlsim.Results, not {type(results).__name__}")
    return [stem for stem, _ in _plots_for(results)]


def check_plot_names(results: Results, only: List[str]) -> None:
    """ValueError naming the plots there are when an entry of ``only`` picks none of them."""
    names = plot_names(results)
    unknown = [o for o in only if not any(_selected(n, [o]) for n in names)]
    if unknown:
        raise ValueError(f"no plot named {', '.join(unknown)} for these {results.kind} results; "
                         f"there are: {', '.join(names) if names else 'none'}")


def _selected(name: str, only) -> bool:
    """Whether ``name`` is one of ``only``: equal to an entry, or an entry plus "-..." ("gantt"
    picks every gantt-variant<i>)."""
    return only is None or any(name == o or name.startswith(o + "-") for o in only)


def save_all(results: Results, out_dir, prefix: str = "", only=None) -> List[pathlib.Path]:
    """Writes every plot that applies to the results as PNG files; returns their paths.

    Training: scaling, cost_vs_time, breakdown. Plan search: plan_front. Cluster: cost_vs_time (with more than one
    variant), jct (when a job finished), then per variant ``utilization-variant<i>`` and
    ``gantt-variant<i>`` (when the job timeline exists). Collective: collective. Files are
    ``<out_dir>/<prefix><name>.png``; ``out_dir`` is created when missing. ``only``: names to
    write (a name also picks its per-variant files: "gantt" is every ``gantt-variant<i>``);
    ValueError naming the plots there are when one of them matches none.
    """
    if not isinstance(results, Results):
        raise TypeError(f"save_all() takes a dlsim.Results, not {type(results).__name__}")
    plots = _plots_for(results)
    if only is not None:
        only = [only] if isinstance(only, str) else list(only)
        check_plot_names(results, only)
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for stem, make in plots:
        if not _selected(stem, only):
            continue
        fig = make()
        path = out / f"{prefix}{stem}.png"
        fig.savefig(path, dpi=110)
        del fig  # made outside pyplot: nothing else holds it, so this is its close
        paths.append(path)
    return paths
