#!/usr/bin/python3
"""Predicts with dlsim the training steps pytorch_steps.py measured, and prints predicted versus
measured with the error of each.

For each measured step it writes a one-GPU scenario (a catalog instance `local/gpu-1x` of one
accelerator of the profile's device, so that no data-parallel communication enters), with
`cluster.profile` pointing at the calibrated profile, the step's model, batch, sequence length,
precision and optimizer, runs `dlsim run --csv`, and reads the iteration_time column.

Usage:
    /usr/bin/python3 calibration/compare_steps.py --measured steps.json \\
        --profile calibration/profiles/h100-sxm.yaml [--dlsim build/dlsim] [--markdown table.md]
Without --profile, dlsim's catalog figures for --device are used (the uncalibrated prediction).
Exits 2 when an input is missing or a dlsim run fails; with --max-error E, exits 1 when any step's
error exceeds E (a fraction: 0.05 for 5%).
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

CATALOG = """# Written by calibration/compare_steps.py: one accelerator, so a step has no communication.
instances:
  - name: local/gpu-1x
    provider: on-premises
    accelerator: {device}
    accelerators_per_node: 1
    network_bandwidth: 100Gbps
    network_latency: 10us
    intra_node_bandwidth: 32GB/s
    price: 1 USD/h                 # unused: only the iteration time is compared
"""


# pytorch_steps.py builds these with Hugging Face transformers, which keep the vocabulary at the
# model's own width (GPT-2 50,257, BERT 30,522): no padding, as dlsim's workload.pad_vocabulary: false.
HUGGING_FACE_LANGUAGE_MODELS = {"gpt2", "bert-base"}


def fail(message):
    print("compare_steps.py: " + message, file=sys.stderr)
    sys.exit(2)


def profile_device(path):
    """device.name of a dlsim profile (top-level `device:` block, its `name:`), without a YAML library."""
    in_device = False
    with open(path) as f:
        for line in f:
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            if not line[0].isspace():
                in_device = line.split(":")[0].strip() == "device"
                continue
            if in_device and line.strip().startswith("name:"):
                return line.split(":", 1)[1].strip().strip("'\"")
    fail("profile %s has no device.name; give --device" % path)


# pytorch_steps.py's Llama-shaped step as a defined transformer: Hugging Face's LlamaForCausalLM
# with SDPA attention (PyTorch's FlashAttention-2 backend), RMSNorm, rotary positions, SwiGLU, no
# biases or dropout, eager PyTorch (fused_kernels: false: every element-wise step its own kernel).
def llama_model_lines(step):
    shape = step["llama"]
    return ["  model:", "    name: %s" % step["name"],
            "    transformer: {attention: flash, layers: %d, hidden: %d, heads: %d, kv_heads: %d, ffn: %d, "
            "ffn_kind: swiglu, vocab: %d, sequence_length: %d, tied_embeddings: true, positions: rotary, "
            "norm: rmsnorm, bias: false, dropout: false}" % (
                shape["layers"], shape["hidden"], shape["heads"], shape["kv_heads"], shape["ffn"], shape["vocab"],
                step["sequence_length"]),
            "  fused_kernels: false", "  pad_vocabulary: false"]


def scenario_text(step, profile):
    lines = ["seed: 1", "catalog: catalog.yaml", "cluster:", "  instance: local/gpu-1x", "  nodes: 1"]
    if profile:
        lines.append("  profile: %s" % json.dumps(os.path.abspath(profile)))
    lines.append("workload:")
    if step.get("llama"):
        lines += llama_model_lines(step)
    else:
        lines.append("  model: %s" % step["model"])
        if step.get("sequence_length"):
            lines.append("  sequence_length: %d" % step["sequence_length"])
    if step["model"] in HUGGING_FACE_LANGUAGE_MODELS and not step.get("vocab"):
        lines.append("  pad_vocabulary: false")
    lines += ["  precision: %s" % step["precision"], "  optimizer: %s" % step["optimizer"],
              "  batch: {per_device: %d}" % step["batch"], "  iterations: 10", "output:", "  csv: out.csv"]
    return "\n".join(lines) + "\n"


def predict(dlsim, folder, step, profile):
    with open(os.path.join(folder, "scenario.yaml"), "w") as f:
        f.write(scenario_text(step, profile))
    run = subprocess.run([dlsim, "run", "scenario.yaml"], cwd=folder, capture_output=True, text=True)
    if run.returncode != 0:
        fail("dlsim run failed for %s (exit %d):\n%s%s" % (step["name"], run.returncode, run.stdout, run.stderr))
    with open(os.path.join(folder, "out.csv")) as f:
        rows = list(csv.DictReader(f))
    if len(rows) != 1:
        fail("expected one result row for %s, got %d" % (step["name"], len(rows)))
    return float(rows[0]["iteration_time"])


def table(measured, rows, source):
    out = ["Device: %s (PyTorch %s, CUDA %s, %s); prediction: %s" % (
        measured.get("device"), measured.get("torch"), measured.get("cuda"), measured.get("date"), source), "",
        "| step | batch | precision | measured (ms, median) | predicted (ms) | error |",
        "|---|---:|---|---:|---:|---:|"]
    for step, pred in rows:
        err = (pred - step["median_s"]) / step["median_s"]
        out.append("| %s | %d | %s | %.2f | %.2f | %+.1f%% |" % (
            step["name"], step["batch"], step["precision"], 1e3 * step["median_s"], 1e3 * pred, 100 * err))
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--measured", required=True, help="JSON written by pytorch_steps.py")
    parser.add_argument("--profile", help="calibrated dlsim profile (dlsim calibrate --backend cuda)")
    parser.add_argument("--device", help="catalog device (default: the profile's device.name)")
    parser.add_argument("--dlsim", default=os.path.join("build", "dlsim"), help="the dlsim executable")
    parser.add_argument("--markdown", help="also write the table to this file")
    parser.add_argument("--max-error", type=float, help="exit 1 when any |error| exceeds this fraction")
    args = parser.parse_args()
    for path, what in ((args.measured, "--measured"), (args.dlsim, "--dlsim")):
        if not os.path.isfile(path):
            fail("%s: no file %s" % (what, path))
    if args.profile and not os.path.isfile(args.profile):
        fail("--profile: no file %s" % args.profile)
    device = args.device or (profile_device(args.profile) if args.profile else None)
    if not device:
        fail("give --profile or --device")
    with open(args.measured) as f:
        measured = json.load(f)
    if measured.get("format") != "dlsim-pytorch-steps-1" or not measured.get("steps"):
        fail("%s is not a pytorch_steps.py result (format dlsim-pytorch-steps-1 with steps)" % args.measured)
    dlsim = os.path.abspath(args.dlsim)
    rows = []
    for step in measured["steps"]:
        with tempfile.TemporaryDirectory() as folder:
            with open(os.path.join(folder, "catalog.yaml"), "w") as f:
                f.write(CATALOG.format(device=device))
            rows.append((step, predict(dlsim, folder, step, args.profile)))
    source = ("profile " + args.profile) if args.profile else ("catalog figures of " + device + " (no profile)")
    text = table(measured, rows, source)
    print(text, end="")
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text)
    worst = max(abs(p - s["median_s"]) / s["median_s"] for s, p in rows)
    if args.max_error is not None and worst > args.max_error:
        print("largest error %.1f%% exceeds %.1f%%" % (100 * worst, 100 * args.max_error), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
