"""dlsim.plots: each plot draws what its data says, writes a PNG, and refuses the wrong results."""
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

import dlsim
from dlsim import plots

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def assert_png(fig, path):
    fig.savefig(path)
    data = path.read_bytes()
    assert len(data) > 1000
    assert data[:8] == PNG_SIGNATURE


def data_lines(ax):
    return [line for line in ax.get_lines() if line.get_gid() != "ideal"]


def collection(ax, gid):
    found = [c for c in ax.collections if c.get_gid() == gid]
    return np.concatenate([c.get_offsets() for c in found]) if found else np.empty((0, 2))


@pytest.fixture(scope="module")
def quickstart(run_scenario):
    return dlsim.read_results(run_scenario("quickstart.yaml"))


@pytest.fixture(scope="module")
def plans(run_scenario):
    return dlsim.read_results(run_scenario("bert-large-dp-vs-mp.yaml"))


@pytest.fixture(scope="module")
def cluster(run_scenario):
    return dlsim.read_results(run_scenario("elastic-resize.yaml"))


@pytest.fixture(scope="module")
def allreduce(run_scenario):
    return dlsim.read_results(run_scenario("allreduce-p4d.yaml"))


def timeline_results(jobs=3, preemptions=True):
    """A cluster Results made by hand: one variant, `jobs` jobs queued then running, two preempted."""
    spans = []
    for j in range(jobs):
        name = f"job-{j:03d}"
        start = 600.0 * j
        spans += [(0, name, "queued", start, start + 300), (0, name, "running", start + 300, start + 7200)]
    spans.append((0, "job-000", "checkpointing", 7200, 7500))
    spans.append((1, "other", "running", 0, 100))  # another variant: never drawn for variant 0
    tables = {
        "results": pd.DataFrame({"variant": ["only variant", "second"], "makespan": [7500.0, 100.0],
                                 "total_cost": [10.0, 1.0], "unfinished": [0, 0]}),
        "job_timeline": pd.DataFrame(spans, columns=["variant", "job", "state", "start", "end"]),
    }
    if preemptions:
        tables["job_preemptions"] = pd.DataFrame(
            [(0, "job-000", 3600.0, "capacity lost"), (0, "job-002", 5400.0, "suspended"), (1, "other", 50.0, "capacity lost")],
            columns=["variant", "job", "time", "cause"])
    return dlsim.Results(kind="cluster", tables=tables)


def jobs_results(jct_by_variant):
    """A cluster Results made by hand: per variant, jobs finished in the given seconds (None: a job
    still running at the horizon)."""
    rows = [(v, f"job-{i}", "done" if t is not None else "running", t)
            for v, times in enumerate(jct_by_variant) for i, t in enumerate(times)]
    tables = {
        "results": pd.DataFrame({"variant": [f"policy-{v}" for v in range(len(jct_by_variant))],
                                 "makespan": [1.0] * len(jct_by_variant), "total_cost": [1.0] * len(jct_by_variant),
                                 "unfinished": [0] * len(jct_by_variant)}),
        "jobs": pd.DataFrame(rows, columns=["variant", "job", "state", "jct"]),
    }
    return dlsim.Results(kind="cluster", tables=tables)


# ----------------------------------------------------------------------------- scaling

def test_scaling_draws_throughput_and_efficiency_per_accelerator_count(quickstart, tmp_path):
    fig = plots.scaling(quickstart)
    top, bottom = fig.axes
    table = quickstart.table.sort_values("accelerators")
    assert [len(data_lines(ax)) for ax in (top, bottom)] == [1, 1]
    np.testing.assert_array_equal(data_lines(top)[0].get_xdata(), table["accelerators"])
    np.testing.assert_allclose(data_lines(top)[0].get_ydata(), table["samples_per_second"])
    np.testing.assert_allclose(data_lines(bottom)[0].get_ydata(), 100 * table["scaling_efficiency"])
    assert top.get_ylabel() == "throughput (samples/s)"
    assert bottom.get_ylabel() == "scaling efficiency (%)"
    assert bottom.get_xlabel() == "accelerators"
    assert top.get_legend() is None  # one plan: no legend
    assert_png(fig, tmp_path / "scaling.png")


def test_scaling_draws_one_line_per_plan(plans):
    fig = plots.scaling(plans)
    top = fig.axes[0]
    assert len(data_lines(top)) == len(plans.table) == 5
    labels = [t.get_text() for t in top.get_legend().get_texts()]
    assert len(set(labels)) == 5
    assert "zero2" in labels and "data parallel" in labels


def test_scaling_groups_rows_by_plan_across_node_counts():
    table = pd.DataFrame({"nodes": [1, 1, 2, 2], "accelerators": [8, 8, 16, 16],
                          "plan": ["d8 m1x8", "d4 t2 m1x8", "d16 m1x8", "d8 t2 m1x8"],
                          "samples_per_second": [100.0, 80.0, 190.0, 150.0], "scaling_efficiency": [1, 1, 0.95, 0.94]})
    top = plots.scaling(dlsim.Results(kind="training", tables={"results": table})).axes[0]
    lines = {t.get_text(): line for t, line in zip(top.get_legend().get_texts(), data_lines(top))}
    assert sorted(lines) == ["data parallel", "t2"]
    np.testing.assert_allclose(lines["t2"].get_ydata(), [80, 150])


def test_scaling_of_a_cluster_result_is_refused(cluster):
    with pytest.raises(ValueError, match="scaling\\(\\) plots training results; these are cluster results"):
        plots.scaling(cluster)


# ----------------------------------------------------------------------------- cost against time

def test_pareto_front_is_exactly_the_non_dominated_points():
    time = [1, 2, 3, 4, 5, 2, 1, np.nan]
    cost = [5, 3, 4, 1, 6, 3, 6, 0]
    # (3,4) and (5,6) dominated; (1,6): as fast as (1,5) but dearer; (2,3) twice: both kept; NaN never
    assert plots.pareto_front(time, cost).tolist() == [True, True, False, True, False, True, False, False]


def test_cost_vs_time_of_a_data_frame_highlights_the_front(tmp_path):
    sweep = pd.DataFrame({"hours": [1.0, 2, 3, 4, 5], "usd": [5.0, 3, 4, 1, 6], "name": list("abcde")})
    fig = plots.cost_vs_time(sweep, time="hours", cost="usd", label="name")
    ax = fig.axes[0]
    front = {tuple(p) for p in collection(ax, "pareto")}
    assert front == {(1, 5), (2, 3), (4, 1)}
    assert len(collection(ax, "configurations")) == 5
    assert sorted(t.get_text() for t in ax.texts) == list("abcde")
    assert ax.get_xlabel() == "hours (s)" and ax.get_ylabel() == "usd (USD)"
    assert_png(fig, tmp_path / "cost.png")


def test_cost_vs_time_draws_into_a_given_axes():
    fig, ax = plt.subplots()
    try:
        sweep = pd.DataFrame({"time_to_train": [72000.0, 36000.0], "cost_to_train": [1.0, 2.0]})
        assert plots.cost_vs_time(sweep, ax=ax) is fig
        assert len(collection(ax, "pareto")) == 2
        assert ax.get_xlabel() == "time_to_train (h)"  # 20 h: shown in hours
    finally:
        plt.close(fig)


def test_cost_vs_time_of_a_training_result_has_one_point_per_configuration(quickstart):
    ax = plots.cost_vs_time(quickstart).axes[0]
    table = quickstart.table
    assert len(collection(ax, "configurations")) == len(table)
    # More nodes: faster and dearer, so every node count is on the front.
    assert len(collection(ax, "pareto")) == len(table)
    assert ax.get_ylabel() == "cost_to_train (USD)"
    assert {t.get_text() for t in ax.texts} == {f"{n} nodes, {p}" for n, p in zip(table["nodes"], table["plan"])}


def test_cost_vs_time_of_a_cluster_result_has_one_point_per_variant(cluster):
    ax = plots.cost_vs_time(cluster).axes[0]
    assert len(collection(ax, "configurations")) + len(collection(ax, "unfinished")) == cluster.variants()
    assert {t.get_text() for t in ax.texts} == set(cluster.table["variant"])
    assert ax.get_xlabel().startswith("makespan (") and ax.get_ylabel() == "total_cost (USD)"


def test_cost_vs_time_refuses_collectives_and_missing_columns(allreduce):
    with pytest.raises(ValueError, match="training or cluster results"):
        plots.cost_vs_time(allreduce)
    with pytest.raises(ValueError, match="lacks the column\\(s\\) cost_to_train"):
        plots.cost_vs_time(pd.DataFrame({"time_to_train": [1.0]}))


# ----------------------------------------------------------------------------- breakdown

def bar_totals(ax):
    totals = {}
    for patch in ax.patches:
        x = round(patch.get_x() + patch.get_width() / 2, 6)
        totals[x] = totals.get(x, 0) + patch.get_height()
    return [totals[x] for x in sorted(totals)]


def test_breakdown_bars_add_up_to_the_iteration_time(plans, tmp_path):
    fig = plots.breakdown(plans)
    ax = fig.axes[0]
    np.testing.assert_allclose(bar_totals(ax), 1e3 * plans.table["iteration_time"], rtol=1e-6)
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["compute", "optimizer", "exposed communication", "tensor-parallel", "pipeline sends",
                      "pipeline bubble"]
    assert ax.get_ylabel() == "time per iteration (ms)"
    assert len(ax.containers) == len(legend)
    assert all(len(c) == len(plans.table) for c in ax.containers)
    assert_png(fig, tmp_path / "breakdown.png")


def test_breakdown_leaves_out_categories_that_are_zero_everywhere(quickstart):
    ax = plots.breakdown(quickstart).axes[0]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["compute", "optimizer", "exposed communication"]  # the bubble is 1e-9 s: noise


def test_breakdown_splits_recomputation_out_of_compute(run_scenario):
    gpt3 = dlsim.read_results(run_scenario("gpt3-175b-a100.yaml"))
    ax = plots.breakdown(gpt3).axes[0]
    assert ax.get_ylabel() == "time per iteration (s)"
    heights = {c.get_label(): c[0].get_height() for c in ax.containers}
    row = gpt3.table.iloc[0]
    assert heights["recompute"] == pytest.approx(row["recompute_time"])
    assert heights["compute"] == pytest.approx(row["compute_time"] - row["recompute_time"])
    assert sum(heights.values()) == pytest.approx(row["iteration_time"], rel=1e-6)


def test_breakdown_of_a_cluster_result_is_refused(cluster):
    with pytest.raises(ValueError, match="training results"):
        plots.breakdown(cluster)


# ----------------------------------------------------------------------------- utilization

def test_utilization_draws_busy_over_ready_and_stacked_node_states(cluster, tmp_path):
    fig = plots.utilization(cluster, variant=1)
    top, bottom = fig.axes
    share = top.get_lines()[0].get_ydata()
    assert share.max() == pytest.approx(100) and share.min() >= 0
    states = [n for n in cluster.series_names(1) if n.startswith("nodes_")]
    assert len(bottom.collections) == len(states)
    assert [t.get_text() for t in bottom.get_legend().get_texts()] == [s[len("nodes_"):] for s in states]
    last = max(cluster.series(n, 1)["time"].max() for n in cluster.series_names(1) if n != "cost_usd")
    assert top.get_lines()[0].get_xdata().max() == pytest.approx(last / 3600)
    assert bottom.get_xlabel() == "time (h)" and bottom.get_ylabel() == "nodes"
    assert any(cluster.table["variant"][1] in t.get_text() for t in fig.texts)  # the title
    assert_png(fig, tmp_path / "utilization.png")


def test_utilization_refuses_unknown_variants_and_other_kinds(cluster, quickstart):
    with pytest.raises(ValueError, match="no variant 3: these results have variants 0..2"):
        plots.utilization(cluster, variant=3)
    with pytest.raises(ValueError, match="cluster results"):
        plots.utilization(quickstart)


# ----------------------------------------------------------------------------- gantt

def test_gantt_draws_spans_by_state_and_marks_preemptions(tmp_path):
    fig = plots.gantt(timeline_results())
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["job-000", "job-001", "job-002"]
    bars = {c.get_label(): len(c) for c in ax.containers}
    assert bars == {"queued": 3, "running": 3, "checkpointing": 1}
    marks = {tuple(p) for p in collection(ax, "preemptions")}
    assert marks == {(1.0, 0.0), (1.5, 2.0)}  # (hours, row); variant 1's preemption is not drawn
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "preemption: capacity lost" in legend and "preemption: suspended" in legend
    assert ax.get_xlabel() == "time (h)"
    assert_png(fig, tmp_path / "gantt.png")


def test_gantt_caps_the_rows_and_says_how_many_were_left_out():
    results = timeline_results(jobs=100)
    late = pd.DataFrame([(0, "job-099", 70000.0, "capacity lost")], columns=["variant", "job", "time", "cause"])
    results.tables["job_preemptions"] = pd.concat([results.job_preemptions, late], ignore_index=True)
    ax = plots.gantt(results, max_jobs=40).axes[0]
    assert len(ax.get_yticks()) == 40
    assert "first 40 of 100 jobs, 60 left out" in ax.get_title()
    assert {tuple(p) for p in collection(ax, "preemptions")} == {(1.0, 0.0), (1.5, 2.0)}  # not job-099's


def test_gantt_without_a_timeline_is_refused_clearly():
    results = timeline_results()
    del results.tables["job_timeline"]
    with pytest.raises(ValueError, match="needs the table 'job_timeline'"):
        plots.gantt(results)
    with pytest.raises(ValueError, match="no variant 2: these results have variants 0..1"):
        plots.gantt(timeline_results(), variant=2)


def test_gantt_draws_without_preemptions_table():
    ax = plots.gantt(timeline_results(preemptions=False)).axes[0]
    assert len(collection(ax, "preemptions")) == 0
    assert len(ax.containers) == 3


# ----------------------------------------------------------------------------- collective

def test_collective_draws_bus_bandwidth_per_node_count(allreduce, tmp_path):
    fig = plots.collective(allreduce)
    ax = fig.axes[0]
    table = allreduce.table
    assert len(ax.get_lines()) == table["nodes"].nunique()
    one_node = table[table["nodes"] == table["nodes"].min()]
    np.testing.assert_allclose(ax.get_lines()[0].get_ydata(), one_node["busbw"] / 1e9)
    assert ax.get_xscale() == "log"
    assert ax.get_xlabel() == "message size per rank" and ax.get_ylabel() == "bus bandwidth (GB/s)"
    assert_png(fig, tmp_path / "collective.png")


def test_collective_averages_concurrent_groups(run_scenario):
    spine = dlsim.read_results(run_scenario("contention-spine.yaml"))
    ax = plots.collective(spine).axes[0]
    assert len(ax.get_lines()) == 1
    assert "2 groups" in ax.get_lines()[0].get_label()
    assert len(ax.get_lines()[0].get_xdata()) == spine.table["size"].nunique()


def test_collective_of_a_training_result_is_refused(quickstart):
    with pytest.raises(ValueError, match="collective results"):
        plots.collective(quickstart)


# ----------------------------------------------------------------------------- save_all

def assert_pngs(paths, names):
    assert sorted(p.name for p in paths) == sorted(names)
    for p in paths:
        assert p.read_bytes()[:8] == PNG_SIGNATURE


def test_save_all_writes_the_training_plots(quickstart, tmp_path):
    before = plt.get_fignums()
    paths = plots.save_all(quickstart, tmp_path / "new", prefix="qs-")
    assert_pngs(paths, ["qs-scaling.png", "qs-cost_vs_time.png", "qs-breakdown.png"])
    assert plt.get_fignums() == before  # no figure left open in pyplot


def test_save_all_writes_the_cluster_plots(cluster, tmp_path):
    names = ["cost_vs_time.png"] + [f"utilization-variant{v}.png" for v in range(cluster.variants())]
    if (cluster.jobs["state"] == "done").any():
        names.append("jct.png")
    if cluster.job_timeline is not None:
        names += [f"gantt-variant{v}.png" for v in range(cluster.variants())]
    assert_pngs(plots.save_all(cluster, tmp_path), names)


def test_save_all_adds_gantt_when_the_timeline_exists(tmp_path):
    assert_pngs(plots.save_all(timeline_results(), tmp_path), ["cost_vs_time.png", "gantt-variant0.png", "gantt-variant1.png"])


def test_save_all_writes_the_collective_plot(allreduce, tmp_path):
    assert_pngs(plots.save_all(allreduce, tmp_path), ["collective.png"])


def plan_frame():
    """A plan search's table made by hand: an on-demand and a spot front point, a dominated point,
    one that misses the deadline and one never simulated."""
    nan = float("nan")
    return pd.DataFrame({
        "instance": ["a", "a", "b", "b", "b"], "nodes": [1, 1, 2, 2, 4], "plan": ["d8", "d8", "d16", "d16 t2", "d32"],
        "capacity": ["on-demand", "spot", "on-demand", "spot", "on-demand"],
        "status": ["feasible", "feasible", "feasible", "deadline", "pruned"],
        "pareto": [1, 1, 0, 0, 0], "best": [0, 1, 0, 0, 0],
        "time_to_train": [3600.0, 5400.0, 7200.0, 90000.0, nan], "cost_to_train": [100.0, 50.0, 300.0, 80.0, nan],
        "time_to_train_p10": [nan, 5000.0, nan, nan, nan], "time_to_train_p90": [nan, 6000.0, nan, nan, nan],
        "cost_to_train_p10": [nan, 45.0, nan, nan, nan], "cost_to_train_p90": [nan, 60.0, nan, nan, nan]})


def test_plan_front_draws_candidates_by_capacity_the_front_and_the_best(tmp_path):
    table = plan_frame()
    fig = plots.plan_front(table)
    ax = fig.axes[0]
    assert len(collection(ax, "feasible-on-demand")) == 2
    assert len(collection(ax, "feasible-spot")) == 1
    assert len(collection(ax, "rejected-spot")) == 1
    assert len(collection(ax, "pareto-on-demand")) == 1 and len(collection(ax, "pareto-spot")) == 1
    best = collection(ax, "best")
    assert best.tolist() == [[5400.0 / 3600, 50.0]]  # hours: the longest time is 25 h
    assert "1 not" in ax.get_title()
    # The spot front point's bars run from its p10 to its p90.
    segments = [seg for c in ax.collections if c.get_gid() == "spot-spread" for seg in c.get_segments()]
    assert sorted(map(lambda seg: seg.tolist(), segments)) == sorted([
        [[5000.0 / 3600, 50.0], [6000.0 / 3600, 50.0]], [[5400.0 / 3600, 45.0], [5400.0 / 3600, 60.0]]])
    assert_png(fig, tmp_path / "plan.png")
    results = dlsim.Results(kind="plan", tables={"results": table})
    assert plots.plot_names(results) == ["plan_front"]
    assert_pngs(plots.save_all(results, tmp_path), ["plan_front.png"])
    with pytest.raises(ValueError, match="plan results"):
        plots.plan_front(dlsim.Results(kind="training", tables={"results": table}))


# ----------------------------------------------------------------------------- jct, names, titles

def test_jct_draws_one_cdf_per_variant_of_its_finished_jobs(tmp_path):
    results = jobs_results([[60.0, 120.0, 240.0, None], [30.0, 3000.0]])
    fig = plots.jct(results)
    ax = fig.axes[0]
    lines = ax.get_lines()
    assert len(lines) == 2
    # Variant 0: three finished jobs (the running one is left out), the CDF ends at 100%.
    xs, ys = lines[0].get_data()
    assert list(xs) == [1.0, 2.0, 4.0]  # minutes: the longest time is 50 min
    assert list(ys) == pytest.approx([100 / 3, 200 / 3, 100])
    assert "policy-0: 3 jobs, median 2 min" in lines[0].get_label()
    assert ax.get_xscale() == "log"  # 0.5 to 50 min spans 100x
    assert ax.get_xlabel() == "job completion time (min)"
    assert_png(fig, tmp_path / "jct.png")


def test_jct_needs_a_finished_job_and_cluster_results(quickstart):
    with pytest.raises(ValueError, match="no job finished"):
        plots.jct(jobs_results([[None]]))
    with pytest.raises(ValueError, match="cluster"):
        plots.jct(quickstart)


def test_save_all_writes_only_the_plots_named(quickstart, tmp_path):
    assert_pngs(plots.save_all(quickstart, tmp_path / "one", only=["scaling"]), ["scaling.png"])
    # A name picks every per-variant file of that plot.
    assert_pngs(plots.save_all(timeline_results(), tmp_path / "gantt", only="gantt"),
                ["gantt-variant0.png", "gantt-variant1.png"])
    with pytest.raises(ValueError, match="no plot named nope .*there are: scaling, cost_vs_time, breakdown"):
        plots.save_all(quickstart, tmp_path / "none", only=["nope"])
    assert not (tmp_path / "none").exists()  # nothing written before the names are checked
    assert plots.plot_names(quickstart) == ["scaling", "cost_vs_time", "breakdown"]


def test_a_scenario_given_as_a_dict_gets_a_title_that_says_what_it_ran():
    results = dlsim.run({"cluster": {"instance": "aws/p3.2xlarge"},
                         "workload": {"model": "resnet50", "batch": {"per_device": 32}, "iterations": 10},
                         "sweep": {"nodes": [1, 2]}})
    fig = plots.scaling(results)
    assert fig._suptitle.get_text() == "Throughput and scaling efficiency (resnet50 on aws/p3.2xlarge)"
