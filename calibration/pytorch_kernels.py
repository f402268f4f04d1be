#!/usr/bin/python3
"""Times, on the local CUDA GPU, single kernels of a training step that dlsim's kernel model predicts
but that no shipped table measures, and writes them as CSV tables for validation.

The shipped tables (../shared/reference/kernels) hold forward GEMMs of LLM layers (vidur: row-major
NT only, at most 4,096 tokens) and DeepBench's V100/P100 convolutions; they hold no attention kernel
and nothing on Hopper but forward GEMMs. This script measures what a training step adds:
  <prefix>-training-gemm.csv  the three products of each linear layer at training token counts:
                              forward Y = X W^T (row-major NT), data gradient dX = dY W (NN),
                              weight gradient dW = dY^T X (TN), for GPT-3-like widths at tensor-parallel
                              splits 1 and 8
  <prefix>-alignment-gemm.csv the same three products of vocabulary projections whose width is not a
                              multiple of 8 (GPT-2's 50,257, BERT's 30,522) beside padded widths
  <prefix>-attention.csv      PyTorch's FlashAttention backend (scaled_dot_product_attention restricted
                              to SDPBackend.FLASH_ATTENTION: FlashAttention-2), forward and forward+backward,
                              causal and not, head dimensions 64 and 128, sequences 512 .. 16,384
  <prefix>-conv.csv           every distinct convolution of torchvision's ResNet-50 at batch 128,
                              channels_last, cudnn.benchmark on: forward, data gradient and weight gradient
                              (aten.convolution_backward with one output at a time)
All in bf16. These tables are for checking predictions (held out), never for fitting end-to-end figures.

Timing: inputs made on the GPU first; each case runs 3 untimed calls, then is timed in samples of
back-to-back calls between two CUDA events (as many calls as make a sample last about 1 ms, at most
200), 10 samples; the median per call is written. A case that fails (out of memory, a backend that
refuses the shape) is written with its error and the run goes on.

Usage (on a machine with PyTorch and a CUDA GPU):
    python3 calibration/pytorch_kernels.py --out-prefix results/h200
Exits 2 when PyTorch or a CUDA device is missing.
"""
import argparse
import csv
import statistics
import sys


def fail(message):
    print("pytorch_kernels.py: " + message, file=sys.stderr)
    sys.exit(2)


def median_call_seconds(torch, fn, samples=10):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    stop.record()
    stop.synchronize()
    one = max(start.elapsed_time(stop) * 1e-3, 1e-6)
    calls = max(1, min(200, int(1e-3 / one)))
    times = []
    for _ in range(samples):
        start.record()
        for _ in range(calls):
            fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1e-3 / calls)
    return statistics.median(times)


class Table:
    """A CSV file written row by row (flushed), so that a run cut short keeps what it measured."""

    def __init__(self, path, columns):
        self.file = open(path, "w", newline="")
        self.writer = csv.DictWriter(self.file, fieldnames=columns + ["error"])
        self.writer.writeheader()

    def add(self, row):
        self.writer.writerow(row)
        self.file.flush()


GEMM_COLUMNS = ["gpu", "source_model", "op", "pass", "tp", "m", "n", "k", "layout", "dtype", "median_ms"]


def time_linear_layer(torch, table, labels, tokens, out_features, in_features, dtype, dtype_name, hold_s=0.0):
    """The three products of one linear layer Y = X W^T, each a row of `table`: forward (NT), data
    gradient dX = dY W (NN), weight gradient dW = dY^T X (TN). `labels`: gpu, source_model, op, tp.
    hold_s > 0: each product first runs back to back for that long (continuous load), and the row
    gets the SM clock after its timing (column sm_clock_mhz)."""
    dev = torch.device("cuda")
    x = torch.randn(tokens, in_features, device=dev, dtype=dtype)
    w = torch.randn(out_features, in_features, device=dev, dtype=dtype)
    dy = torch.randn(tokens, out_features, device=dev, dtype=dtype)
    passes = [("forward", tokens, out_features, in_features, "NT", lambda: torch.matmul(x, w.t())),
              ("data_gradient", tokens, in_features, out_features, "NN", lambda: torch.matmul(dy, w)),
              ("weight_gradient", out_features, in_features, tokens, "TN", lambda: torch.matmul(dy.t(), x))]
    for pas, m, n, k, layout, fn in passes:
        row = dict(labels, **{"pass": pas}, m=m, n=n, k=k, layout=layout, dtype=dtype_name)
        try:
            if hold_s > 0:
                one = median_call_seconds(torch, fn, samples=2)
                for _ in range(max(1, int(hold_s / one))):
                    fn()
            row["median_ms"] = "%.5f" % (1e3 * median_call_seconds(torch, fn))
            if hold_s > 0:
                row["sm_clock_mhz"] = gpu_clock_and_power()[0] or ""
        except Exception as e:  # noqa: BLE001 - recorded, the run goes on
            row["error"] = str(e).splitlines()[0][:200]
        table.add(row)
    del x, w, dy


def training_gemms(torch, gpu, prefix, hold_s=0.0):
    name_suffix, columns = ("-training-gemm-sustained.csv", GEMM_COLUMNS + ["sm_clock_mhz"]) if hold_s > 0 else \
        ("-training-gemm.csv", GEMM_COLUMNS)
    table = Table(prefix + name_suffix, columns)
    for hidden, name in [(4096, "gpt3-6.7b"), (12288, "gpt3-175b")]:
        for tp in (1, 8):
            layers = [("qkv", 3 * hidden // tp, hidden), ("proj", hidden, hidden // tp),
                      ("fc1", 4 * hidden // tp, hidden), ("fc2", hidden, 4 * hidden // tp)]
            for tokens in (2048, 8192):
                for op, out_f, in_f in layers:
                    time_linear_layer(torch, table, dict(gpu=gpu, source_model=name, op=op, tp=tp), tokens, out_f, in_f,
                                      torch.bfloat16, "bf16", hold_s=hold_s)
    torch.cuda.empty_cache()


def aligned_gemms(torch, gpu, prefix):
    """The three products of vocabulary projections whose width is not a multiple of 8 elements
    (GPT-2's 50,257, BERT's 30,522) beside padded ones (50,304, 30,528, 32,000): cuBLAS then picks kernels
    that load 1 or 2 elements at a time instead of 16 bytes."""
    table = Table(prefix + "-alignment-gemm.csv", GEMM_COLUMNS)
    for dtype, dname in [(torch.bfloat16, "bf16"), (torch.float16, "fp16")]:
        for tokens, hidden, vocab, name in [(8192, 768, 50257, "gpt2"), (8192, 768, 50304, "gpt2-padded"),
                                            (4096, 768, 30522, "bert-base"), (4096, 768, 30528, "bert-base-padded"),
                                            (8192, 4096, 32000, "llama2-7b"), (8192, 4096, 32001, "llama2-7b+1")]:
            time_linear_layer(torch, table, dict(gpu=gpu, source_model=name, op="lm_head", tp=1), tokens, vocab, hidden,
                              dtype, dname)
    torch.cuda.empty_cache()


def gpu_clock_and_power():
    """(SM clock MHz, power W) of GPU 0 by NVML, or (None, None) without pynvml."""
    try:
        import pynvml
        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByIndex(0)
        return (pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM),
                pynvml.nvmlDeviceGetPowerUsage(h) / 1000.0)
    except Exception:  # noqa: BLE001 - clocks are extra information
        return (None, None)


def sustained(torch, gpu, prefix, seconds=6.0, window=0.05):
    """Matrix products back to back for `seconds`: the rate, SM clock and power every `window`
    seconds, to see whether a GPU under continuous tensor-core load keeps its clock (a training
    step is such a load; a kernel table's few calls per shape are not)."""
    table = Table(prefix + "-sustained.csv", ["gpu", "shape", "dtype", "t_s", "tflops", "sm_clock_mhz", "power_w"])
    dev, dtype = torch.device("cuda"), torch.bfloat16
    for m, n, k, label in [(8192, 8192, 8192, "8192x8192x8192"), (8192, 12288, 12288, "8192x12288x12288 (GPT-3 175B qkv, 8K tokens)")]:
        a = torch.randn(m, k, device=dev, dtype=dtype)
        b = torch.randn(n, k, device=dev, dtype=dtype)
        one = median_call_seconds(torch, lambda: torch.matmul(a, b.t()), samples=3)
        calls = max(1, int(window / one))
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        elapsed = 0.0
        while elapsed < seconds:
            start.record()
            for _ in range(calls):
                torch.matmul(a, b.t())
            stop.record()
            stop.synchronize()
            dt = start.elapsed_time(stop) * 1e-3
            elapsed += dt
            clock, power = gpu_clock_and_power()
            table.add(dict(gpu=gpu, shape=label, dtype="bf16", t_s="%.3f" % elapsed,
                           tflops="%.1f" % (2.0 * m * n * k * calls / dt / 1e12), sm_clock_mhz=clock or "",
                           power_w="%.0f" % power if power else ""))
        del a, b
        torch.cuda.synchronize()
        import time
        time.sleep(2.0)   # let the clock recover before the next shape
    torch.cuda.empty_cache()


def training_gemms_sustained(torch, gpu, prefix):
    """training_gemms() with each product first run back to back for 0.4 s: their times under
    continuous load, with the SM clock after each (column sm_clock_mhz)."""
    training_gemms(torch, gpu, prefix, hold_s=0.4)


def attention(torch, gpu, prefix):
    table = Table(prefix + "-attention.csv",
                  ["gpu", "backend", "batch", "heads", "seq", "head_dim", "causal", "dtype", "forward_ms",
                   "forward_backward_ms"])
    from torch.nn.attention import SDPBackend, sdpa_kernel
    import torch.nn.functional as F
    dev, dtype = torch.device("cuda"), torch.bfloat16
    for head_dim in (64, 128):
        heads = 2048 // head_dim
        for seq in (512, 1024, 2048, 4096, 8192, 16384):
            batch = max(1, 32768 // seq)
            for causal in (False, True):
                row = dict(gpu=gpu, backend="flash (FlashAttention-2 in PyTorch)", batch=batch, heads=heads, seq=seq,
                           head_dim=head_dim, causal=int(causal), dtype="bf16")
                try:
                    q, k, v = (torch.randn(batch, heads, seq, head_dim, device=dev, dtype=dtype, requires_grad=True)
                               for _ in range(3))
                    dout = torch.randn(batch, heads, seq, head_dim, device=dev, dtype=dtype)
                    with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                        def fwd():
                            with torch.no_grad():
                                F.scaled_dot_product_attention(q, k, v, is_causal=causal)

                        def fwd_bwd():
                            out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                            torch.autograd.grad(out, (q, k, v), dout)

                        row["forward_ms"] = "%.5f" % (1e3 * median_call_seconds(torch, fwd))
                        row["forward_backward_ms"] = "%.5f" % (1e3 * median_call_seconds(torch, fwd_bwd))
                    del q, k, v, dout
                except Exception as e:  # noqa: BLE001
                    row["error"] = str(e).splitlines()[0][:200]
                table.add(row)
    torch.cuda.empty_cache()


# torchvision ResNet-50 (v1.5: stride on the 3x3): (in channels, height=width, out channels, kernel, stride, pad).
RESNET50_CONVS = [
    (3, 224, 64, 7, 2, 3),
    (64, 56, 64, 1, 1, 0), (64, 56, 64, 3, 1, 1), (64, 56, 256, 1, 1, 0), (256, 56, 64, 1, 1, 0),
    (256, 56, 128, 1, 1, 0), (128, 56, 128, 3, 2, 1), (128, 28, 512, 1, 1, 0), (256, 56, 512, 1, 2, 0),
    (512, 28, 128, 1, 1, 0), (128, 28, 128, 3, 1, 1),
    (512, 28, 256, 1, 1, 0), (256, 28, 256, 3, 2, 1), (256, 14, 1024, 1, 1, 0), (512, 28, 1024, 1, 2, 0),
    (1024, 14, 256, 1, 1, 0), (256, 14, 256, 3, 1, 1),
    (1024, 14, 512, 1, 1, 0), (512, 14, 512, 3, 2, 1), (512, 7, 2048, 1, 1, 0), (1024, 14, 2048, 1, 2, 0),
    (2048, 7, 512, 1, 1, 0), (512, 7, 512, 3, 1, 1),
]


def convolutions(torch, gpu, prefix, batch=128):
    table = Table(prefix + "-conv.csv",
                  ["gpu", "source_model", "n", "c", "h", "w", "k", "r", "s", "stride", "pad", "layout", "dtype",
                   "forward_ms", "data_gradient_ms", "weight_gradient_ms"])
    dev, dtype = torch.device("cuda"), torch.bfloat16
    cl = torch.channels_last
    for c, hw, k, rs, stride, pad in RESNET50_CONVS:
        row = dict(gpu=gpu, source_model="resnet50", n=batch, c=c, h=hw, w=hw, k=k, r=rs, s=rs, stride=stride, pad=pad,
                   layout="NHWC", dtype="bf16")
        try:
            x = torch.randn(batch, c, hw, hw, device=dev, dtype=dtype).to(memory_format=cl)
            w = torch.randn(k, c, rs, rs, device=dev, dtype=dtype).to(memory_format=cl)
            y = torch.nn.functional.conv2d(x, w, stride=stride, padding=pad)
            dy = torch.randn_like(y).to(memory_format=cl)

            def backward(mask):
                return lambda: torch.ops.aten.convolution_backward(dy, x, w, None, [stride, stride], [pad, pad], [1, 1],
                                                                   False, [0, 0], 1, mask)

            row["forward_ms"] = "%.5f" % (1e3 * median_call_seconds(
                torch, lambda: torch.nn.functional.conv2d(x, w, stride=stride, padding=pad)))
            row["data_gradient_ms"] = "%.5f" % (1e3 * median_call_seconds(torch, backward([True, False, False])))
            row["weight_gradient_ms"] = "%.5f" % (1e3 * median_call_seconds(torch, backward([False, True, False])))
            del x, w, y, dy
        except Exception as e:  # noqa: BLE001
            row["error"] = str(e).splitlines()[0][:200]
        table.add(row)
    torch.cuda.empty_cache()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out-prefix", required=True, help="path prefix of the CSV files")
    parser.add_argument("--gpu", help="label for the gpu column (default: the device's name)")
    parser.add_argument("--only", action="append", choices=["gemm", "align", "attention", "conv", "sustained", "gemm-hot"])
    args = parser.parse_args()
    try:
        import torch
    except ImportError as e:
        fail("PyTorch is not installed for %s (%s)" % (sys.executable, e))
    if not torch.cuda.is_available():
        fail("PyTorch %s finds no CUDA device" % torch.__version__)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    gpu = args.gpu or torch.cuda.get_device_properties(0).name
    parts = args.only or ["gemm", "align", "attention", "conv"]
    for part, fn in [("gemm", training_gemms), ("align", aligned_gemms), ("attention", attention),
                     ("conv", convolutions), ("sustained", sustained), ("gemm-hot", training_gemms_sustained)]:
        if part in parts:
            print("pytorch_kernels.py: %s ..." % part, flush=True)
            fn(torch, gpu, args.out_prefix)
    print("pytorch_kernels.py: done (torch %s, CUDA %s, cuDNN %s)" % (
        torch.__version__, torch.version.cuda, torch.backends.cudnn.version()), flush=True)


if __name__ == "__main__":
    main()
