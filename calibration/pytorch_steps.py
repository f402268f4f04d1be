#!/usr/bin/python3
"""Times PyTorch training steps on the local CUDA GPU and writes them as JSON.

The GPU validation of issue 6: dlsim predicts these same steps from a calibrated device profile
(compare_steps.py), and the two are compared. Each step is one full training iteration on one
GPU: zero the gradients, forward, loss, backward, optimizer step. Inputs are random tensors made
on the GPU before timing (data loading is not part of what dlsim predicts); a few different
batches are cycled so that no step sees the previous one's data.

Timing: `--warmup` untimed steps (cuDNN/cuBLAS autotuning, allocator growth), then `--repeats`
steps, each between two CUDA events after a torch.cuda.synchronize(); the median is reported
with the 10th and 90th percentiles.

Usage (on a machine with PyTorch and a CUDA GPU):
    /usr/bin/python3 calibration/pytorch_steps.py --out steps.json
    /usr/bin/python3 calibration/pytorch_steps.py --only gpt2 --repeats 50 --out gpt2.json
Exits 2 when PyTorch, torchvision/transformers or a CUDA device is missing, saying which.
"""
import argparse
import contextlib
import datetime
import json
import platform
import statistics
import sys

# The steps: dlsim zoo names, batch per GPU, precision (dlsim's names), optimizer (dlsim's names).
# Batches are the usual single-GPU ones of each model's reference training recipe: ResNet-50 at
# 128 images of 224x224 (torchvision reference uses 32 per GPU x 8; 128 fills an H100), BERT-base
# pre-training phase 1 (sequence 128), GPT-2 small at its full 1024 context.
STEPS = [
    {"name": "resnet50", "model": "resnet50", "batch": 128, "precision": "bf16", "optimizer": "sgd-momentum"},
    {"name": "bert-base", "model": "bert-base", "batch": 32, "sequence_length": 128, "precision": "bf16",
     "optimizer": "adam"},
    {"name": "gpt2", "model": "gpt2", "batch": 8, "sequence_length": 1024, "precision": "bf16", "optimizer": "adam"},
]
# Not run by default (--only NAME): GPT-2 with its vocabulary padded to a multiple of 64 (nanoGPT's
# 50,304), which shows what the unpadded 50,257 costs in the vocabulary projection's GEMMs.
EXTRA_STEPS = [
    {"name": "gpt2-vocab50304", "model": "gpt2", "vocab": 50304, "batch": 8, "sequence_length": 1024,
     "precision": "bf16", "optimizer": "adam"},
    # A Llama 3.2 1B-shaped decoder (Hugging Face's LlamaForCausalLM, SDPA attention: PyTorch's
    # FlashAttention-2 backend for a causal mask; RMSNorm, rotary positions, SwiGLU, grouped-query
    # attention with 8 KV heads, tied 128,256-word embeddings), at 2 x 4,096 tokens: today's LLM
    # layer shapes on one GPU, for a defined transformer in dlsim (compare_steps.py).
    {"name": "llama3.2-1b", "model": "llama", "batch": 2, "sequence_length": 4096, "precision": "bf16",
     "optimizer": "adam", "llama": {"hidden": 2048, "ffn": 8192, "layers": 16, "heads": 32, "kv_heads": 8,
                                    "vocab": 128256}},
]
DISTINCT_BATCHES = 4


def fail(message):
    print("pytorch_steps.py: " + message, file=sys.stderr)
    sys.exit(2)


def import_torch():
    try:
        import torch  # noqa: F401
    except ImportError as e:
        fail("PyTorch is not installed for %s (import torch: %s); run this script with a Python that has "
             "torch built with CUDA, on the machine with the GPU" % (sys.executable, e))
    import torch
    if not torch.cuda.is_available():
        fail("PyTorch %s finds no CUDA device (torch.cuda.is_available() is False)" % torch.__version__)
    return torch


def build(torch, step):
    """Returns (model, make_batch, loss_of) for a step, on the GPU."""
    dev = torch.device("cuda")
    if step["model"] == "resnet50":
        try:
            import torchvision
        except ImportError as e:
            fail("ResNet-50 needs torchvision (%s)" % e)
        model = torchvision.models.resnet50(weights=None).to(dev).to(memory_format=torch.channels_last)
        criterion = torch.nn.CrossEntropyLoss()

        def make_batch(_):
            x = torch.randn(step["batch"], 3, 224, 224, device=dev).to(memory_format=torch.channels_last)
            return x, torch.randint(0, 1000, (step["batch"],), device=dev)

        return model, make_batch, lambda m, b: criterion(m(b[0]), b[1])
    try:
        import transformers
    except ImportError as e:
        fail("%s needs transformers (%s)" % (step["model"], e))
    if step["model"] == "bert-base":
        config = transformers.BertConfig()   # 12 layers, hidden 768, 12 heads, vocabulary 30522
        model = transformers.BertForMaskedLM(config)
    elif step["model"] == "gpt2":
        config = transformers.GPT2Config()   # 12 layers, hidden 768, 12 heads, context 1024
        if step.get("vocab"):
            config.vocab_size = step["vocab"]
        model = transformers.GPT2LMHeadModel(config)
    elif step["model"] == "llama":
        shape = step["llama"]
        config = transformers.LlamaConfig(hidden_size=shape["hidden"], intermediate_size=shape["ffn"],
                                          num_hidden_layers=shape["layers"], num_attention_heads=shape["heads"],
                                          num_key_value_heads=shape["kv_heads"], vocab_size=shape["vocab"],
                                          max_position_embeddings=step["sequence_length"], tie_word_embeddings=True)
        config._attn_implementation = "sdpa"
        model = transformers.LlamaForCausalLM(config)
    else:
        fail("unknown model " + step["model"])
    model = model.to(dev)
    vocab = config.vocab_size

    def make_batch(_):
        ids = torch.randint(0, vocab, (step["batch"], step["sequence_length"]), device=dev)
        return ids, ids.clone()

    return model, make_batch, lambda m, b: m(input_ids=b[0], labels=b[1]).loss


def optimizer_for(torch, step, model):
    if step["optimizer"] == "sgd-momentum":
        return torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    return torch.optim.AdamW(model.parameters(), lr=1e-4)


def time_step(torch, step, warmup, repeats, profile_kernels=False):
    precision = step["precision"]
    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
    torch.backends.cudnn.allow_tf32 = precision == "tf32"
    torch.backends.cudnn.benchmark = True
    torch.manual_seed(1)
    model, make_batch, loss_of = build(torch, step)
    model.train()
    opt = optimizer_for(torch, step, model)
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(precision)
    scaler = torch.amp.GradScaler("cuda", enabled=precision == "fp16")
    batches = [make_batch(i) for i in range(DISTINCT_BATCHES)]

    def one(i):
        opt.zero_grad(set_to_none=True)
        autocast = torch.autocast("cuda", dtype=dtype) if dtype is not None else contextlib.nullcontext()
        with autocast:
            loss = loss_of(model, batches[i % DISTINCT_BATCHES])
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()

    for i in range(warmup):
        one(i)
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    sampler = ClockSampler()
    for i in range(repeats):
        torch.cuda.synchronize()
        start.record()
        one(i)
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1e-3)
    clocks = sampler.stop()
    peak = torch.cuda.max_memory_allocated()
    breakdown = None
    if profile_kernels:
        try:
            breakdown = kernel_breakdown(torch, one, repeats=5)
        except Exception as e:  # noqa: BLE001 - the step's time stands without its breakdown
            print("pytorch_steps.py: no kernel breakdown for %s: %s" % (step["name"], e), file=sys.stderr)
    del model, opt, batches
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    q = statistics.quantiles(times, n=10) if len(times) >= 2 else [times[0]] * 9
    result = dict(step, median_s=statistics.median(times), p10_s=q[0], p90_s=q[-1], min_s=min(times),
                  max_s=max(times), repeats=repeats, warmup=warmup, peak_memory_bytes=peak, times_s=times)
    if breakdown:
        result["kernels"] = breakdown
    if clocks:
        result.update(clocks)
    return result


class ClockSampler:
    """The SM clock and board power (NVML, pynvml) every 10 ms on a thread while the timed steps
    run: the clock a training step settles at under the power limit. Nothing without pynvml."""

    def __init__(self, period=0.01):
        import threading
        self.samples, self.done = [], threading.Event()
        try:
            import pynvml
            pynvml.nvmlInit()
            handle = pynvml.nvmlDeviceGetHandleByIndex(0)
        except Exception:  # noqa: BLE001 - clocks are extra information
            self.thread = None
            return

        def run():
            while not self.done.wait(period):
                try:
                    self.samples.append((pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM),
                                         pynvml.nvmlDeviceGetPowerUsage(handle) / 1000.0))
                except Exception:  # noqa: BLE001
                    return
        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    def stop(self):
        if self.thread is None:
            return {}
        self.done.set()
        self.thread.join()
        if not self.samples:
            return {}
        return {"sm_clock_mhz_median": statistics.median(c for c, _ in self.samples),
                "power_w_median": statistics.median(p for _, p in self.samples), "clock_samples": len(self.samples)}


# Kernel classes by CUDA kernel name (cuBLAS/CUTLASS GEMMs, cuDNN convolutions, FlashAttention);
# everything else is a memory-bound kernel (element-wise, norms, softmax, reductions, optimizer).
KERNEL_CLASSES = [
    ("attention", ("flash", "fmha", "attention")),
    ("convolution", ("convolution", "conv2d", "implicit", "winograd", "dgrad", "wgrad", "cudnn", "fprop")),
    ("gemm", ("gemm", "cutlass", "xmma", "sm90_", "sm80_", "cublas", "nvjet")),
]


def kernel_class(name):
    lower = name.lower()
    for label, keys in KERNEL_CLASSES:
        if any(k in lower for k in keys):
            return label
    return "memory-bound"


def kernel_breakdown(torch, one, repeats):
    """Device time per kernel class, and the kernel count, per step: `repeats` steps under torch.profiler."""
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for i in range(repeats):
            one(i)
        torch.cuda.synchronize()
    per_class, per_name, count = {}, {}, 0
    for e in prof.events():
        if e.device_type != torch.autograd.DeviceType.CUDA:
            continue
        t = e.time_range.elapsed_us() * 1e-6 / repeats   # a kernel's own span, microseconds -> seconds per step
        per_class[kernel_class(e.name)] = per_class.get(kernel_class(e.name), 0.0) + t
        per_name[e.name] = per_name.get(e.name, 0.0) + t
        count += 1
    top = sorted(per_name.items(), key=lambda kv: -kv[1])[:12]
    return {"device_time_s": sum(per_class.values()), "by_class_s": per_class,
            "kernels_per_step": count / repeats, "top": [{"name": n[:120], "s": t} for n, t in top]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="JSON file to write")
    parser.add_argument("--only", action="append", help="step name (repeatable): " +
                        ", ".join(s["name"] for s in STEPS))
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--kernels", action="store_true",
                        help="also record each step's device time per kernel class (torch.profiler, 5 more steps)")
    args = parser.parse_args()
    if args.warmup < 0 or args.repeats < 1:
        fail("--warmup must be >= 0 and --repeats >= 1")
    steps = STEPS
    if args.only:
        names = {s["name"] for s in STEPS + EXTRA_STEPS}
        unknown = [n for n in args.only if n not in names]
        if unknown:
            fail("unknown step %s; known: %s" % (", ".join(unknown), ", ".join(sorted(names))))
        steps = [s for s in STEPS + EXTRA_STEPS if s["name"] in args.only]
    torch = import_torch()
    props = torch.cuda.get_device_properties(0)
    results = []
    for step in steps:
        r = time_step(torch, step, args.warmup, args.repeats, args.kernels)
        print("%-10s batch %4d %-5s median %8.2f ms (p10 %.2f, p90 %.2f)%s" % (
            r["name"], r["batch"], r["precision"], 1e3 * r["median_s"], 1e3 * r["p10_s"], 1e3 * r["p90_s"],
            ", SM clock %.0f MHz, %.0f W" % (r["sm_clock_mhz_median"], r["power_w_median"])
            if "sm_clock_mhz_median" in r else ""), flush=True)
        if "kernels" in r:
            k = r["kernels"]
            print("           device time %.2f ms in %d kernels: %s" % (
                1e3 * k["device_time_s"], k["kernels_per_step"],
                ", ".join("%s %.2f ms" % (c, 1e3 * t) for c, t in sorted(k["by_class_s"].items()))), flush=True)
        results.append(r)
    doc = {
        "format": "dlsim-pytorch-steps-1",
        "device": props.name,
        "multiprocessors": props.multi_processor_count,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "python": platform.python_version(),
        "date": datetime.date.today().isoformat(),
        "steps": results,
    }
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
    print("wrote " + args.out)


if __name__ == "__main__":
    main()
