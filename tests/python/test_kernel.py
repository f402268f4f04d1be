"""The kernel model from Python: dlsim.kernel_time, dlsim.memory_kernel_time and
dlsim.predict_kernels give what ``dlsim kernel`` gives, and bad input raises ConfigError."""
import re
import subprocess

import pandas as pd
import pytest

import dlsim

VIDUR_GEMM = (
    "gpu,source_model,op,tp,m,n,k,bias,dtype,median_ms,mean_ms,std_ms\n"
    "A100,Llama-2-7b-hf,attn_pre_proj,1,2048,12288,4096,0,fp16,0.7,0.70,0.01\n"
    "H100,Llama-2-7b-hf,mlp_down_proj,2,512,4096,5504,0,fp16,0.05,0.0510,0.001\n"
    "A40,Llama-2-7b-hf,attn_pre_proj,1,8,12288,4096,0,fp16,0.2,0.2,0.0\n"
)


def test_kernel_time_is_what_the_command_predicts(dlsim_exe, tmp_path):
    t = dlsim.kernel_time("A100", 2048, 12288, 4096)
    assert t["device"] == "A100-80GB"
    assert t["seconds"] > 0
    assert t["tflops"] == pytest.approx(2 * 2048 * 12288 * 4096 / t["seconds"] / 1e12)
    assert t["tile_m"] > 0 and t["tile_n"] > 0 and t["split_k"] >= 1 and t["waves"] >= 1
    assert isinstance(t["memory_bound"], bool)
    assert 0 < t["band_p10_seconds"] < t["seconds"] < t["band_p90_seconds"]
    # The table path of the CLI: predicted_ms to 6 significant digits.
    (tmp_path / "t.csv").write_text(VIDUR_GEMM)
    subprocess.run([str(dlsim_exe), "kernel", "--input", "t.csv", "--output", "out.csv"], cwd=tmp_path, check=True,
                   capture_output=True)
    written = pd.read_csv(tmp_path / "out.csv")
    assert written["predicted_ms"][0] == pytest.approx(t["seconds"] * 1e3, rel=1e-5)
    # The single-GEMM path of the CLI: its printed time and tile.
    out = subprocess.run([str(dlsim_exe), "kernel", "--device", "A100-80GB", "--gemm", "2048x12288x4096"],
                         check=True, capture_output=True, text=True).stdout
    printed = re.search(r"predicted +([0-9.]+) (us|ms)", out)
    value = float(printed.group(1)) * (1e-6 if printed.group(2) == "us" else 1e-3)
    assert value == pytest.approx(t["seconds"], rel=1e-3)
    assert f"tile {t['tile_m']} x {t['tile_n']}, split-K {t['split_k']}" in out


def test_kernel_time_follows_the_shape():
    small = dlsim.kernel_time("H100-SXM", 4096, 4096, 1024)
    large = dlsim.kernel_time("H100-SXM", 4096, 4096, 8192)
    assert large["seconds"] > small["seconds"]
    assert dlsim.kernel_time("H100", 4096, 4096, 1024) == small
    batched = dlsim.kernel_time("H100-SXM", 4096, 4096, 1024, batch=4)
    assert batched["seconds"] > small["seconds"]
    bf16 = dlsim.kernel_time("A100", 4096, 4096, 4096, precision="bf16", layout="tn")
    assert bf16["seconds"] > 0


def test_kernel_time_pays_the_alignment_slowdown_on_hopper():
    # GPT-2's LM head: 50,257 columns are 2-byte rows in bf16; 50,304 are aligned.
    odd = dlsim.kernel_time("H100-SXM", 8192, 50257, 768, precision="bf16")
    padded = dlsim.kernel_time("H100-SXM", 8192, 50304, 768, precision="bf16")
    assert odd["alignment_bytes"] == 2 and padded["alignment_bytes"] == 16
    assert odd["alignment_factor"] > 3 and padded["alignment_factor"] == 1
    assert odd["seconds"] > 3 * padded["seconds"]
    # Before Hopper the fallback kernels are no class of their own.
    assert dlsim.kernel_time("A100", 8192, 50257, 768, precision="bf16")["alignment_factor"] == 1


def test_memory_kernel_time():
    t = dlsim.memory_kernel_time("A100", "rms_norm", 64 * 2**20)
    assert t["curve"] == "rms_norm"
    assert t["bytes_per_second"] == pytest.approx(64 * 2**20 / t["seconds"])
    assert dlsim.memory_kernel_time("A100", "stream", 1e9)["seconds"] > dlsim.memory_kernel_time("A100", "stream", 1e8)["seconds"]


@pytest.mark.parametrize("call, where", [
    (lambda: dlsim.kernel_time("X900", 64, 64, 64), "device"),
    (lambda: dlsim.kernel_time("TPU-v4", 64, 64, 64), "device"),
    (lambda: dlsim.kernel_time("A100", 0, 64, 64), "shape"),
    (lambda: dlsim.kernel_time("A100", 64, 64, 64, precision="fp12"), "precision"),
    (lambda: dlsim.kernel_time("A100", 64, 64, 64, layout="tt"), "layout"),
    (lambda: dlsim.memory_kernel_time("A100", "rmsnorm", 1e6), "kernel"),
])
def test_bad_input_raises_config_error(call, where):
    with pytest.raises(dlsim.ConfigError) as e:
        call()
    assert e.value.key_path == where


def test_predict_kernels_from_a_file_or_a_frame(tmp_path):
    (tmp_path / "t.csv").write_text(VIDUR_GEMM)
    from_file = dlsim.predict_kernels(tmp_path / "t.csv")
    assert list(from_file.columns)[-1] == "predicted_ms"
    assert from_file["predicted_ms"][1] == pytest.approx(dlsim.kernel_time("H100", 512, 4096, 5504)["seconds"] * 1e3)
    assert from_file.attrs["devices"] == ["A100-80GB", "H100-SXM", "A40"]
    assert [e["op"] for e in from_file.attrs["errors"]] == ["attn_pre_proj", "mlp_down_proj", "all"]
    from_frame = dlsim.predict_kernels(pd.read_csv(tmp_path / "t.csv"))
    assert list(from_frame["predicted_ms"]) == pytest.approx(list(from_file["predicted_ms"]), rel=1e-12)


def test_predict_kernels_locates_bad_rows(tmp_path):
    (tmp_path / "t.csv").write_text(VIDUR_GEMM + "X900,x,attn_pre_proj,1,8,12288,4096,0,fp16,0.2,0.2,0.0\n")
    with pytest.raises(dlsim.ConfigError) as e:
        dlsim.predict_kernels(tmp_path / "t.csv")
    assert (e.value.line, e.value.key_path) == (5, "gpu")
    assert str(e.value).startswith(f"{tmp_path / 't.csv'}:5: gpu: unknown device or GPU label 'X900'")
