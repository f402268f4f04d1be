"""Errors from Python: dlsim's own exception types, with the location and key path, the same
messages as the CLI, and never a crash of the interpreter."""
import subprocess

import pytest

import dlsim

GOOD = {
    "cluster": {"instance": "aws/p3.16xlarge", "nodes": 2},
    "workload": {"model": "resnet50", "precision": "fp16", "batch": {"per_device": 64}, "iterations": 10},
}


def with_value(path, value):
    import copy
    d = copy.deepcopy(GOOD)
    node = d
    keys = path.split(".")
    for k in keys[:-1]:
        node = node[k]
    node[keys[-1]] = value
    return d


def test_a_bad_file_gives_file_line_column_and_key_path_as_the_cli_does(tmp_path, dlsim_exe):
    path = tmp_path / "bad.yaml"
    path.write_text("cluster:\n  instance: aws/p3.16xlarge\n  nodes: -4\nworkload:\n  model: resnet50\n  iterations: 10\n")
    with pytest.raises(dlsim.ConfigError) as caught:
        dlsim.load(path)
    e = caught.value
    assert isinstance(e, ValueError)
    assert (e.file, e.line, e.column, e.key_path) == (str(path), 3, 10, "cluster.nodes")
    cli = subprocess.run([str(dlsim_exe), "check", str(path)], capture_output=True, text=True)
    assert cli.returncode == 2
    assert cli.stderr.strip() == f"error: {e}"  # one validation path, one message


def test_a_bad_dict_names_the_key_path_without_positions():
    with pytest.raises(dlsim.ConfigError) as caught:
        dlsim.Scenario(with_value("cluster.nodes", 0))
    e = caught.value
    assert e.file == "<dict>" and e.line is None and e.column is None
    assert e.key_path == "cluster.nodes"
    assert str(e).startswith("<dict>: cluster.nodes: ")


@pytest.mark.parametrize("path, value, key_path, words", [
    ("cluster.instance", "aws/p3.16xlargee", "cluster.instance", "aws/p3.16xlarge"),  # the nearest name is suggested
    ("workload.model", "resnet-50", "workload.model", "resnet50"),
    ("workload.precision", "fp12", "workload.precision", "fp16"),
    ("cluster.nodes", "many", "cluster.nodes", "many"),
])
def test_unknown_names_and_wrong_values_are_config_errors(path, value, key_path, words):
    with pytest.raises(dlsim.ConfigError) as caught:
        dlsim.load(with_value(path, value))
    assert caught.value.key_path == key_path
    assert words in str(caught.value)


def test_an_unknown_key_is_an_error():
    d = with_value("cluster.nodse", 4)
    with pytest.raises(dlsim.ConfigError, match="nodse"):
        dlsim.load(d)


def test_a_bad_override_names_the_set_it_came_from():
    with pytest.raises(dlsim.ConfigError) as caught:
        dlsim.load(GOOD, set={"cluster.nodes": "[1, 2"})
    assert caught.value.file.startswith("--set")


def test_a_missing_file_is_a_config_error(tmp_path):
    with pytest.raises(dlsim.ConfigError, match="cannot read"):
        dlsim.load(tmp_path / "nope.yaml")


def test_a_model_that_does_not_fit_is_reported_not_crashed():
    # GPT-3 175B weights alone (350 GB in fp16) do not fit on two 8 x 16 GB nodes.
    d = with_value("workload.model", "gpt3-175b")
    with pytest.raises((dlsim.ConfigError, RuntimeError, ValueError)) as caught:
        dlsim.run(d)
    assert "memory" in str(caught.value).lower() or "fit" in str(caught.value).lower()


def test_values_json_cannot_hold_are_a_type_error():
    with pytest.raises(TypeError):
        dlsim.Scenario({"cluster": {"instance": object()}})
    with pytest.raises(TypeError):
        dlsim.Scenario(42)


def test_sweep_errors_name_the_variant():
    with pytest.raises(dlsim.ConfigError, match=r"sweep variant 1 \(cluster.nodes=0\)"):
        dlsim.sweep(GOOD, {"cluster.nodes": [1, 0]})
