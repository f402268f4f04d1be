"""The Python API: scenarios from files and dicts, runs, results tables, sweeps, catalog, calibration."""
import json
import math
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pandas as pd
import pytest

import dlsim

# The quick-start scenario written as a dict (scenarios/quickstart.yaml without its output section).
QUICKSTART = {
    "seed": 1,
    "cluster": {"instance": "aws/p3.16xlarge", "nodes": 1},
    "workload": {
        "model": "resnet50",
        "precision": "fp16",
        "batch": {"per_device": 256},
        "data": {"samples": 1281167, "epochs": 90},
        "data_parallel": {"overlap": True, "bucket": "25MiB", "gradient_precision": "fp32"},
    },
    "sweep": {"nodes": [1, 2, 4, 8, 16, 32]},
}


def assert_same_tables(a: pd.DataFrame, b: pd.DataFrame):
    assert list(a.columns) == list(b.columns)
    for c in a.columns:
        x, y = a[c].to_numpy(), b[c].to_numpy()
        if x.dtype.kind == "f":
            assert np.array_equal(x, y, equal_nan=True), c
        else:
            assert list(x) == list(y), c


def test_a_file_runs_and_gives_the_tables_of_the_hdf5_file(source_dir, run_scenario):
    results = dlsim.run(source_dir / "scenarios/quickstart.yaml")
    assert results.kind == "training"
    table = results.table
    assert list(table["nodes"]) == [1, 2, 4, 8, 16, 32]
    assert list(table["accelerators"]) == [8, 16, 32, 64, 128, 256]  # 8 V100s per p3.16xlarge
    assert table["nodes"].dtype == np.int64 and table["samples_per_second"].dtype == np.float64
    assert (np.diff(table["samples_per_second"]) > 0).all()  # more nodes, more throughput
    assert results.units["results"]["time_to_train"] == "s"
    # The same numbers as the file `dlsim run` writes, bit for bit.
    from_file = dlsim.read_results(run_scenario("quickstart.yaml"))
    assert_same_tables(results.table, from_file.table)
    assert results.units == from_file.units
    assert results.seed == from_file.seed == 1


def test_a_dict_gives_what_the_same_yaml_file_gives(source_dir):
    from_dict = dlsim.run(QUICKSTART)
    from_file = dlsim.run(source_dir / "scenarios/quickstart.yaml")
    assert_same_tables(from_dict.table, from_file.table)


def test_overrides_as_dict_or_list_and_with_values_agree():
    # fp32 at 256 images per V100-16GB does not fit (activations double): 64 per GPU.
    a = dlsim.run(QUICKSTART, set={"workload.precision": "fp32", "workload.batch.per_device": 64, "sweep.nodes": [2]})
    b = dlsim.run(QUICKSTART, set=["workload.precision=fp32", "workload.batch.per_device=64", "sweep.nodes=[2]"])
    c = dlsim.Scenario(QUICKSTART).with_values({"workload.precision": "fp32", "workload.batch.per_device": 64,
                                                "sweep.nodes": [2]}).run()
    assert len(a.table) == 1 and a.table["nodes"][0] == 2
    assert_same_tables(a.table, b.table)
    assert_same_tables(a.table, c.table)
    fp16 = dlsim.run(QUICKSTART, set={"sweep.nodes": [2], "workload.batch.per_device": 64})
    assert fp16.table["samples_per_second"][0] > a.table["samples_per_second"][0]  # tensor cores


def test_scenario_properties_and_summary():
    s = dlsim.load(QUICKSTART)
    assert s.kind == "training" and s.seed == 1 and s.source == "<dict>"
    summary = s.summary()
    assert summary["model"] == "resnet50" and summary["device"] == "V100-16GB"
    assert summary["node_counts"] == [1, 2, 4, 8, 16, 32]
    assert "resnet50" in s.yaml and "instance" in s.resolved_yaml


def test_results_written_from_python_read_back_identical(tmp_path):
    results = dlsim.run(QUICKSTART)
    path = tmp_path / "q.h5"
    results.write_hdf5(path)
    back = dlsim.read_results(path)
    assert back.kind == "training"
    assert_same_tables(results.table, back.table)
    results.write_csv(tmp_path / "q.csv")
    csv = pd.read_csv(tmp_path / "q.csv")
    assert list(csv.columns) == list(results.table.columns)
    assert "samples/s" in results.printed_table() or "samples" in results.printed_table()


def test_a_cluster_scenario_gives_jobs_pools_timeline_and_series(source_dir, run_scenario):
    results = dlsim.run(source_dir / "scenarios/spot-vs-on-demand.yaml")
    assert results.kind == "cluster"
    n = results.variants()
    assert n == len(results.table) > 1
    assert set(results.jobs["variant"]) == set(range(n))
    # Every preemption counted in the jobs table is in the preemptions table.
    assert results.jobs["preemptions"].sum() == (results.job_preemptions["cause"] == "capacity lost").sum()
    spans = results.job_timeline
    assert set(spans["state"]) <= {"queued", "restarting", "running", "checkpointing", "resizing"}
    assert (spans["end"] > spans["start"]).all()
    busy = results.series("busy_gpus", 0)
    assert list(busy.columns) == ["time", "value"] and busy["value"].max() <= 64
    with pytest.raises(KeyError):
        results.series("nope", 0)
    from_file = dlsim.read_results(run_scenario("spot-vs-on-demand.yaml"))
    assert sorted(from_file.tables) == sorted(results.tables)
    for name in ("results", "jobs", "job_timeline", "job_preemptions"):
        assert_same_tables(results.tables[name], from_file.tables[name])


def test_a_sweep_is_the_grid_of_runs_whatever_the_thread_count():
    grid = {"workload.precision": ["fp16", "fp32"], "workload.batch.per_device": [32, 64]}
    base = {"sweep.nodes": [1, 4]}
    one = dlsim.sweep(QUICKSTART, grid, threads=1, set=base)
    two = dlsim.sweep(QUICKSTART, grid, threads=2, set=base)
    assert one.attrs["kind"] == "training" and len(one.attrs["variants"]) == 4
    assert len(one) == 8  # 4 variants x 2 node counts
    assert list(one.columns[:3]) == ["sweep_variant", "workload.precision", "workload.batch.per_device"]
    assert list(one["workload.batch.per_device"][:4]) == ["32", "32", "64", "64"]
    assert_same_tables(one, two)
    single = dlsim.run(QUICKSTART, set={**base, "workload.precision": "fp32", "workload.batch.per_device": 64})
    last = one[one["sweep_variant"] == 3].drop(columns=["sweep_variant", "workload.precision", "workload.batch.per_device"])
    assert_same_tables(last.reset_index(drop=True), single.table)


def test_catalog_and_model_zoo():
    devices = dlsim.devices()
    assert devices.loc["H100-SXM", "memory_bytes"] == pytest.approx(80e9, rel=0.08)  # 80 GB (GiB or GB)
    assert devices.loc["A100-40GB", "peak_fp16_flops"] == pytest.approx(312e12)  # NVIDIA A100 datasheet, dense
    instances = dlsim.instances()
    assert instances.loc["aws/p4d.24xlarge", "accelerators_per_node"] == 8
    assert instances.loc["aws/p4d.24xlarge", "device"] in devices.index
    assert instances.loc["aws/p4d.24xlarge", "nic_tech"] == "efa" and instances.loc["aws/p4d.24xlarge", "vcpus"] == 96
    assert instances.loc["aws/p5.48xlarge", "spot_price_per_hour"] == pytest.approx(30.326)  # SkyPilot catalog v7
    assert devices.loc["Trainium2", "generation"] == "trainium" and devices.loc["Trainium2", "compute_units"] == 8
    assert devices.loc["H100-SXM", "generation"] == "hopper"
    models = dlsim.models()
    assert models.loc["resnet50", "parameters"] == pytest.approx(25.6e6, rel=0.02)  # He et al. 2016
    assert dlsim.model("bert-large")["parameters"] == pytest.approx(340e6, rel=0.05)  # Devlin et al. 2019
    with pytest.raises(KeyError, match="unknown model 'nope'"):
        dlsim.model("nope")


def test_calibration_on_the_cpu_writes_a_profile_a_scenario_can_use(tmp_path):
    out = tmp_path / "cpu.yaml"
    report = dlsim.calibrate(out, backend="cpu", quick=True, repeats=3, max_spread=10)
    assert out.exists() and "backend: cpu" in out.read_text()
    assert "gemm" in report.lower()


def test_runs_release_the_gil(source_dir):
    # While a run works in another thread, this thread keeps running Python.
    scenario = dlsim.load(source_dir / "scenarios/trace-policies.yaml")
    done = threading.Event()
    worker = threading.Thread(target=lambda: (scenario.run(), done.set()))
    ticks = 0
    worker.start()
    while not done.is_set() and worker.is_alive():
        ticks += 1
        time.sleep(0.001)
    worker.join()
    assert ticks > 50  # with the GIL held for the whole run, this loop could not tick at all


LONG_RUN = textwrap.dedent("""
    import sys, time, dlsim
    s = dlsim.Scenario({"seed": 1, "pools": [{"name": "p", "instance": "aws/p3.16xlarge", "nodes": 64}],
                        "trace": {"format": "synthetic", "jobs": 300000, "mean_interarrival": "20s", "duration_max": "3d"},
                        "scheduler": {"policy": "las"}})
    print("loaded", flush=True)
    start = time.monotonic()
    try:
        s.run()
        print("finished", flush=True)
    except KeyboardInterrupt:
        print(f"interrupted {time.monotonic() - start:.2f}", flush=True)
""")


def test_ctrl_c_stops_a_long_run_with_keyboard_interrupt():
    child = subprocess.Popen([sys.executable, "-c", LONG_RUN], stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "loaded"
    time.sleep(1.0)
    sent = time.monotonic()
    child.send_signal(signal.SIGINT)
    out, _ = child.communicate(timeout=120)
    waited = time.monotonic() - sent
    assert out.startswith("interrupted"), out
    assert waited < 5, f"took {waited:.1f} s to stop"
    assert child.returncode == 0


def test_a_sweep_of_the_scenario_own_section_matches_dlsim_sweep(tmp_path, dlsim_exe):
    scenario = dict(QUICKSTART, sweep={"nodes": [1, 4], "grid": {"workload.precision": ["fp16", "fp32"]},
                                       "zip": {"workload.batch.per_device": [32, 64]}})
    frame = dlsim.sweep(scenario)
    assert len(frame) == 2 * 2 * 2 and list(frame.columns[:3]) == ["sweep_variant", "workload.precision", "workload.batch.per_device"]
    path = tmp_path / "s.yaml"
    path.write_text(__import__("json").dumps(scenario))
    subprocess.run([str(dlsim_exe), "sweep", str(path), "--output", str(tmp_path / "s.h5"), "--quiet"], check=True)
    stored = dlsim.read_results(tmp_path / "s.h5").table
    assert_same_tables(frame, stored)
    with pytest.raises(dlsim.ConfigError, match="dlsim sweep"):
        dlsim.run(scenario)


def test_validate_gives_the_rows_and_errors_dlsim_validate_prints(source_dir, dlsim_exe):
    folder = source_dir / "scenarios" / "published"
    frame = dlsim.validate(folder, fast=True)
    printed = subprocess.run([str(dlsim_exe), "validate", str(folder), "--fast", "--format", "markdown", "--quiet"],
                             check=True, capture_output=True, text=True).stdout
    assert frame.attrs["markdown"] == printed
    figures = printed.split("\n\n")[0]  # the figures' table ends at a blank line
    rows = [line for line in figures.splitlines() if line.startswith("| ") and not line.startswith("| source |")]
    assert len(frame) == len(rows) >= 10
    assert list(frame["id"]) == [row.split(" | ")[1] for row in rows]
    # A published single value: error = (predicted - published) / published, in the published unit.
    single = frame[frame["published_low"] == frame["published_high"]]
    assert len(single) > 0
    expected = (single["predicted"] - single["published_low"]) / single["published_low"]
    assert (abs(single["error"] - expected) < 1e-9).all()
    measured = frame[frame["reference"] == "measured"]
    assert frame.attrs["measured_points"] == len(measured)
    assert abs(frame.attrs["mape_measured"] - measured["error"].abs().mean()) < 1e-12
    assert len(dlsim.validate(folder, fast=True, only=["nccl-"])) == (frame["scenario"].str.startswith("nccl-")).sum()
    with pytest.raises(dlsim.ConfigError, match="not a folder"):
        dlsim.validate(folder / "missing")


# GPT-2 small on one 8 x V100 node of two instance types (tests/experiment/test_planner.cpp's space).
PLAN_SCENARIO = {
    "cluster": {"instance": "aws/p3.16xlarge"},
    "workload": {"model": "gpt2", "sequence_length": 1024, "precision": "fp16", "optimizer": "adam",
                 "batch": {"global": 8}, "data": {"tokens": 1e9, "epochs": 1}},
    "plan": {"objective": "cheapest", "instances": ["aws/p3.16xlarge", "aws/p3dn.24xlarge"], "nodes": [1]},
}


def test_plan_gives_every_candidate_and_the_answer_dlsim_plan_gives(tmp_path, dlsim_exe):
    frame = dlsim.plan(PLAN_SCENARIO, threads=2)
    counts = frame.attrs["counts"]
    assert len(frame) == counts["enumerated"] > 100
    assert counts["no_fit"] + counts["pruned"] + counts["deadline"] + counts["budget"] + counts["feasible"] == len(frame)
    assert (frame["status"] == "feasible").sum() == counts["feasible"]
    best = frame.iloc[frame.attrs["best"]]
    assert best["status"] == "feasible" and bool(best["best"])
    assert frame.attrs["best"] in frame.attrs["front"]
    # Cheapest: no feasible candidate costs less than the best one.
    feasible = frame[frame["status"] == "feasible"]
    assert best["cost_to_train"] == feasible["cost_to_train"].min()
    # The same answer as the command, whatever the thread count.
    path = tmp_path / "plan.yaml"
    path.write_text(json.dumps(PLAN_SCENARIO))
    subprocess.run([str(dlsim_exe), "plan", str(path), "--quiet", "--csv", str(tmp_path / "plan.csv")],
                             check=True, capture_output=True, text=True)
    table = pd.read_csv(tmp_path / "plan.csv")
    assert list(table["plan"]) == list(frame["plan"])
    assert list(table["status"]) == list(frame["status"])
    assert dlsim.plan(PLAN_SCENARIO, threads=1).attrs["best"] == frame.attrs["best"]
    # Nothing meets an impossible deadline: a ConfigError naming the plan section.
    with pytest.raises(dlsim.ConfigError) as e:
        dlsim.plan(PLAN_SCENARIO, set={"plan.deadline": "1s"})
    assert e.value.key_path == "plan"


def test_plan_with_spot_capacity_costs_spot_rows_by_their_cluster_model_runs():
    scenario = json.loads(json.dumps(PLAN_SCENARIO))
    scenario["workload"]["data"]["tokens"] = 1e10  # hours of training: reclamations happen
    scenario["plan"].update({"instances": ["aws/p3.16xlarge"], "capacity": ["on-demand", "spot"],
                             "spot": {"discount": 0.6, "reclaim": {"mean": "6h"}, "replications": 3}})
    frame = dlsim.plan(scenario, threads=2)
    counts = frame.attrs["counts"]
    assert set(frame["capacity"]) == {"on-demand", "spot"}
    assert (frame["capacity"] == "spot").sum() * 2 == len(frame)
    spot = frame[(frame["capacity"] == "spot") & (frame["status"] == "feasible")]
    assert len(spot) > 0 and counts["spot_runs"] == 3 * (frame["spot_runs"] > 0).sum()
    assert counts["memoized"] > 0
    # The mean lies within the runs' spread; the failure-free bound is never beaten.
    assert (spot["time_to_train_p10"] <= spot["time_to_train"]).all()
    assert (spot["time_to_train"] <= spot["time_to_train_p90"]).all()
    assert (spot["time_to_train"] >= spot["time_to_train_bound"]).all()
    assert (spot["cost_per_hour"] == 0.4 * frame[frame["capacity"] == "on-demand"]["cost_per_hour"].iloc[0]).all()
    assert frame[frame["capacity"] == "on-demand"]["time_to_train_p10"].isna().all()


SERVE_SCENARIO = {
    "seed": 5,
    "cluster": {"instance": "aws/p5.48xlarge"},
    "serving": {"model": "llama2-7b", "replicas": 2, "tensor": 2,
                "requests": {"arrival": "poisson", "rate": 10, "count": 200, "prompt_tokens": 400, "output_tokens": 50},
                "targets": {"ttft": "500ms"}},
}


def test_serve_gives_a_row_per_request_and_the_command_line_csv(tmp_path, dlsim_exe):
    frame = dlsim.serve(SERVE_SCENARIO)
    assert len(frame) == 200
    assert not frame["dropped"].any()
    assert (frame["first_token_s"] > frame["arrival_s"]).all()
    assert (frame["finish_s"] >= frame["first_token_s"]).all()
    assert set(frame["replica"]) == {0, 1}
    summary = frame.attrs["summary"]
    assert summary["completed"] == 200
    ttft = (frame["first_token_s"] - frame["arrival_s"]).to_numpy()
    assert summary["ttft_s"]["p50"] == pytest.approx(float(np.median(ttft)), rel=1e-9)
    assert 0 < summary["within_targets"] <= 1
    # The same requests as the command's CSV, and the same for the same seed.
    path = tmp_path / "serve.yaml"
    path.write_text(json.dumps({**SERVE_SCENARIO, "output": {"csv": str(tmp_path / "serve.csv")}}))
    subprocess.run([str(dlsim_exe), "run", str(path), "--quiet"], check=True, capture_output=True, text=True)
    table = pd.read_csv(tmp_path / "serve.csv")
    assert np.allclose(table["finish_s"], frame["finish_s"], rtol=1e-8)
    # A training call on it says where to go; a bad key is a located ConfigError.
    with pytest.raises(dlsim.ConfigError) as e:
        dlsim.run(SERVE_SCENARIO)
    assert "dlsim.serve" in str(e.value)
    with pytest.raises(dlsim.ConfigError) as e:
        dlsim.serve(SERVE_SCENARIO, set={"serving.tensor": 3})
    assert e.value.key_path == "serving.tensor"


def test_serve_runs_serverless_functions_and_refuses_a_sweep(source_dir):
    path = source_dir / "scenarios/serving-resnet50-serverless.yaml"
    frame = dlsim.serve(path, set={"serving.requests.duration": "10min"})
    summary = frame.attrs["summary"]
    assert summary["platform"] == "function" and summary["per_sample"]
    assert summary["function_vcpus"] == pytest.approx(3008 / 1769)
    assert summary["cold_starts"] >= 1
    # One sample per request: answered once, at least one forward pass after arriving.
    assert (frame["finish_s"] == frame["first_token_s"]).all()
    assert summary["cost_usd"] == pytest.approx(summary["billed_gb_seconds"] * 0.0000166667 + len(frame) * 0.2e-6)
    with pytest.raises(dlsim.ConfigError) as e:
        dlsim.serve(source_dir / "scenarios/published/claims-serverless-idle-cost.yaml")
    assert e.value.key_path == "sweep"


def test_a_serving_run_writes_its_hdf5_file(source_dir, dlsim_exe, tmp_path):
    import h5py
    out = tmp_path / "serve.h5"
    subprocess.run([str(dlsim_exe), "run", str(source_dir / "scenarios/serving-resnet50-serverless.yaml"), "--quiet",
                    "--set", "serving.requests.duration=5min", "--set", f"output.results={out}",
                    "--set", f"output.csv={tmp_path / 'serve.csv'}"], check=True)
    table = pd.read_csv(tmp_path / "serve.csv")
    with h5py.File(out) as f:
        assert f.attrs["kind"] in ("serving", b"serving")
        assert len(f["requests/e2e"]) == len(table)
        assert np.allclose(f["requests/e2e"][:], table["e2e_s"], rtol=1e-8)
        assert f["results/total_cost"][0] > 0
        assert f["replicas_over_time/replicas"][0] == 0


def test_serving_plots_draw_the_latency_cdfs_and_the_replicas():
    from dlsim import plots
    frame = dlsim.serve(SERVE_SCENARIO, set={"serving.scaling": {"min_replicas": 0, "target": 2, "keep_alive": "10s"}})
    fig = plots.serving_latency(frame)
    lines = fig.axes[0].get_lines()
    assert len(lines) == 3
    assert lines[0].get_ydata()[-1] == pytest.approx(1.0)
    fig = plots.serving_replicas(frame)
    assert len(fig.axes) == 2  # requests, and replicas on a second axis
    assert max(fig.axes[1].get_lines()[0].get_ydata()) >= 1
    with pytest.raises(TypeError):
        plots.serving_latency(pd.DataFrame())
