"""`dlsim plot` (the CLI, which runs python -m dlsim.plot_command) on real results files."""
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

import dlsim

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def plot(dlsim_exe):
    """Runs `dlsim plot ARGS`; the build must hold the Python package `dlsim plot` runs."""
    package = dlsim_exe.parent / "python" / "dlsim" / "plot_command.py"
    if not package.exists():
        pytest.fail(f"{package} is missing: `dlsim plot` runs the package the build copies to {package.parent.parent}")

    def run(*args):
        return subprocess.run([str(dlsim_exe), "plot", *map(str, args)], capture_output=True, text=True, timeout=300)

    return run


def written(result, folder):
    """The PNG names `dlsim plot` printed, after checking they are PNG files in `folder`."""
    paths = [pathlib.Path(line) for line in result.stdout.splitlines()]
    for p in paths:
        assert p.parent == folder
        assert p.read_bytes()[:8] == PNG_SIGNATURE
    assert sorted(p.name for p in folder.iterdir()) == sorted(p.name for p in paths)
    return sorted(p.name for p in paths)


def test_plot_of_a_training_file_writes_its_three_plots(plot, run_scenario, tmp_path):
    result = plot(run_scenario("quickstart.yaml"), "--out", tmp_path / "plots")
    assert result.returncode == 0, result.stderr
    assert written(result, tmp_path / "plots") == ["breakdown.png", "cost_vs_time.png", "scaling.png"]


def test_plot_of_a_cluster_file_writes_beside_it_by_default(plot, run_scenario, tmp_path):
    h5 = tmp_path / "elastic.h5"
    shutil.copy(run_scenario("elastic-resize.yaml"), h5)
    results = dlsim.read_results(str(h5))
    expected = ["cost_vs_time.png"] + [f"utilization-variant{v}.png" for v in range(results.variants())]
    if (results.jobs["state"] == "done").any():
        expected.append("jct.png")
    if results.job_timeline is not None:
        expected += [f"gantt-variant{v}.png" for v in range(results.variants())]
    result = plot(h5)
    assert result.returncode == 0, result.stderr
    assert written(result, tmp_path / "elastic-plots") == sorted(expected)


@pytest.mark.parametrize("content", [None, b"not hdf5 at all", "h5-without-format"])
def test_plot_of_a_bad_file_is_an_error_with_exit_code_2(plot, tmp_path, content):
    path = tmp_path / "bad.h5"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content == "h5-without-format":
        import h5py

        with h5py.File(path, "w") as f:
            f["x"] = 1
    result = plot(path, "--out", tmp_path / "out")
    assert result.returncode == 2
    assert result.stderr.startswith("error: ") and str(path) in result.stderr
    assert result.stdout == ""
    assert not (tmp_path / "out").exists()


def test_plot_without_a_file_prints_its_usage_and_exits_2(plot):
    result = plot()
    assert result.returncode == 2
    assert "usage: dlsim plot" in result.stderr


def test_the_python_module_runs_alone(run_scenario, tmp_path):
    # python -m dlsim.plot_command, as `dlsim plot` runs it, with the package on PYTHONPATH.
    env = dict(os.environ)
    command = [sys.executable, "-m", "dlsim.plot_command", str(run_scenario("allreduce-p4d.yaml")), "--out", str(tmp_path)]
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    assert written(result, tmp_path) == ["collective.png"]


def test_plot_only_writes_the_named_plots_and_refuses_unknown_names(plot, run_scenario, tmp_path):
    result = plot(run_scenario("quickstart.yaml"), "--out", tmp_path / "only", "--only", "scaling", "--only", "breakdown")
    assert result.returncode == 0, result.stderr
    assert written(result, tmp_path / "only") == ["breakdown.png", "scaling.png"]
    bad = plot(run_scenario("quickstart.yaml"), "--out", tmp_path / "bad", "--only", "gannt")
    assert bad.returncode == 2
    assert "no plot named gannt" in bad.stderr and "there are: scaling, cost_vs_time, breakdown" in bad.stderr
    assert not (tmp_path / "bad").exists()
