"""Issue 19 from Python: undecodable input is a ConfigError, a bad thread count is refused, and
the interpreter exits cleanly while a run or a sweep is still going in a daemon thread."""
import subprocess
import sys
import textwrap

import pytest

import dlsim


def test_undecodable_bytes_raise_config_error_with_the_bytes_escaped(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_bytes(b"cluster: {instance: aws/p3.16xlarge, nodes: 1}\n"
                     b"workload:\n  model: resnet\xff50\n  batch: {per_device: 64}\n  iterations: 10\n")
    with pytest.raises(dlsim.ConfigError) as caught:
        dlsim.load(path)
    assert caught.value.key_path == "workload.model"
    assert "resnet\\xff50" in str(caught.value)


def test_a_huge_name_is_refused_with_a_short_message():
    huge = "x" * 1_000_000
    with pytest.raises(dlsim.ConfigError) as caught:
        dlsim.load({"cluster": {"instance": "aws/p3.16xlarge"},
                    "workload": {"model": huge, "batch": {"per_device": 64}, "iterations": 10}})
    message = str(caught.value)
    assert len(message) < 3000
    assert "bytes left out" in message
    assert message.rstrip().endswith("vit-l16")  # the end of the allowed list is kept


@pytest.mark.parametrize("threads", [-1, 5000])
def test_a_bad_thread_count_is_refused(source_dir, threads):
    with pytest.raises(ValueError, match="threads must be 0"):
        dlsim.sweep(source_dir / "scenarios/quickstart.yaml", {"sweep.nodes": [[1]]}, threads=threads)


# The interpreter used to abort (SIGABRT) when it exited while dlsim.run or dlsim.sweep was going
# in a daemon thread: the thread took the GIL during finalization.
@pytest.mark.parametrize("call", [
    "dlsim.run(scenario, set={'sweep.nodes': [1, 2, 4, 8, 16, 32, 64]})",
    "dlsim.sweep(scenario, {'cluster.nodes': list(range(1, 65))}, threads=1)",
])
def test_exit_while_a_run_goes_on_in_a_thread_is_clean(source_dir, call):
    script = textwrap.dedent(f"""
        import threading, time
        import dlsim
        scenario = {str(source_dir / 'scenarios/quickstart.yaml')!r}
        started = threading.Event()
        def work():
            started.set()
            {call}
        threading.Thread(target=work, daemon=True).start()
        started.wait()
        time.sleep(0.3)
        print("exiting")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "exiting"
