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


def sustained(torch, gpu, prefix, seconds=6.0, window=0.05, fp8=False):
    """Matrix products back to back for `seconds`: the rate, SM clock and power every `window`
    seconds, to see whether a GPU under continuous tensor-core load keeps its clock (a training
    step is such a load; a kernel table's few calls per shape are not). fp8: the products in FP8
    (E4M3, torch._scaled_mm with fast accumulation, BF16 output) instead of BF16."""
    table = Table(prefix + ("-fp8-sustained.csv" if fp8 else "-sustained.csv"),
                  ["gpu", "shape", "dtype", "t_s", "tflops", "sm_clock_mhz", "power_w"])
    dev = torch.device("cuda")
    for m, n, k, label in [(8192, 8192, 8192, "8192x8192x8192"), (8192, 12288, 12288, "8192x12288x12288 (GPT-3 175B qkv, 8K tokens)")]:
        a = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
        b = torch.randn(n, k, device=dev, dtype=torch.bfloat16)
        if fp8:
            a, b = a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn)
            scale = torch.ones((), device=dev, dtype=torch.float32)

            def product():
                torch._scaled_mm(a, b.t(), scale, scale, out_dtype=torch.bfloat16, use_fast_accum=True)
        else:
            def product():
                torch.matmul(a, b.t())
        one = median_call_seconds(torch, product, samples=3)
        calls = max(1, int(window / one))
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        elapsed = 0.0
        while elapsed < seconds:
            start.record()
            for _ in range(calls):
                product()
            stop.record()
            stop.synchronize()
            dt = start.elapsed_time(stop) * 1e-3
            elapsed += dt
            clock, power = gpu_clock_and_power()
            table.add(dict(gpu=gpu, shape=label, dtype="fp8_e4m3" if fp8 else "bf16", t_s="%.3f" % elapsed,
                           tflops="%.1f" % (2.0 * m * n * k * calls / dt / 1e12), sm_clock_mhz=clock or "",
                           power_w="%.0f" % power if power else ""))
        del a, b
        torch.cuda.synchronize()
        import time
        time.sleep(2.0)   # let the clock recover before the next shape
    torch.cuda.empty_cache()


def fp8_sustained(torch, gpu, prefix):
    """sustained() with FP8 products, 4 s per shape."""
    sustained(torch, gpu, prefix, seconds=4.0, fp8=True)


def fp8_gemms(torch, gpu, prefix):
    """FP8 GEMMs as Transformer Engine runs them on Hopper (torch._scaled_mm, cuBLASLt): every product
    in the one layout cuBLASLt allows for FP8 (row-major A [m x k] times B^T with B [n x k]: dlsim's
    "NT"), E4M3 operands, per-tensor scales, BF16 output, once with fast accumulation (TE's forward
    product) and once with the split accumulator (TE's data- and weight-gradient products), and the
    same product in BF16 beside it (matmul, the same layout) for a ratio measured in the same run.
    Shapes: square 1,024-16,384, the training products of GPT-3 6.7B and 175B layers (as
    training_gemms), Llama 3 70B at tensor-parallel 4 and 8 and Llama 3.1 405B at 8 (8,192 tokens)."""
    table = Table(prefix + "-fp8-gemm.csv", GEMM_COLUMNS + ["accumulate"])
    dev = torch.device("cuda")
    e4m3 = torch.float8_e4m3fn
    one = torch.ones((), device=dev, dtype=torch.float32)
    shapes = [("square", "square", 1, "forward", s, s, s) for s in (1024, 2048, 4096, 8192, 16384)]

    def layer_shapes(name, tp, tokens, layers):
        for op, out_f, in_f in layers:
            yield (name, op, tp, "forward", tokens, out_f, in_f)
            yield (name, op, tp, "data_gradient", tokens, in_f, out_f)
            yield (name, op, tp, "weight_gradient", out_f, in_f, tokens)

    for hidden, name in [(4096, "gpt3-6.7b"), (12288, "gpt3-175b")]:
        for tp in (1, 8):
            layers = [("qkv", 3 * hidden // tp, hidden), ("proj", hidden, hidden // tp),
                      ("fc1", 4 * hidden // tp, hidden), ("fc2", hidden, 4 * hidden // tp)]
            for tokens in (2048, 8192):
                shapes += list(layer_shapes(name, tp, tokens, layers))
    # Llama 3: grouped-query attention (8 KV heads of 128), SwiGLU (gate and up projections in one GEMM).
    for hidden, ffn, name, tps in [(8192, 28672, "llama3-70b", (4, 8)), (16384, 53248, "llama3.1-405b", (8,))]:
        for tp in tps:
            layers = [("qkv", (hidden + 2 * 1024) // tp, hidden), ("proj", hidden, hidden // tp),
                      ("fc1", 2 * ffn // tp, hidden), ("fc2", hidden, ffn // tp)]
            shapes += list(layer_shapes(name, tp, 8192, layers))
    for name, op, tp, pas, m, n, k in shapes:
        labels = dict(gpu=gpu, source_model=name, op=op, tp=tp, m=m, n=n, k=k, layout="NT", **{"pass": pas})
        try:
            a = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
            b = torch.randn(n, k, device=dev, dtype=torch.bfloat16)
            a8, b8 = a.to(e4m3), b.to(e4m3)
            row = dict(labels, dtype="bf16", accumulate="fp32")
            row["median_ms"] = "%.5f" % (1e3 * median_call_seconds(torch, lambda: torch.matmul(a, b.t())))
            table.add(row)
            for fast, acc in [(True, "fast"), (False, "split")]:
                row = dict(labels, dtype="fp8_e4m3", accumulate=acc)
                row["median_ms"] = "%.5f" % (1e3 * median_call_seconds(
                    torch, lambda: torch._scaled_mm(a8, b8.t(), one, one, out_dtype=torch.bfloat16, use_fast_accum=fast)))
                table.add(row)
            del a, b, a8, b8
        except Exception as e:  # noqa: BLE001 - recorded, the run goes on
            table.add(dict(labels, dtype="fp8_e4m3", error=str(e).splitlines()[0][:200]))
    torch.cuda.empty_cache()


def duty_cycle(torch, gpu, prefix, seconds=3.0, settle=1.0, window=0.1):
    """BF16 GEMMs (8192^3) interleaved with memory-bound kernels (an add over 512 MB) in set
    proportions, each mix run back to back for `seconds`: the GEMMs' rate, the memory kernels'
    bandwidth, the tensor-core share of the time (duty), the SM clock and the board power, as
    medians over `window`-long samples after the first `settle` seconds. It measures how far
    the clock drops when only part of a step is tensor-core work (models/power_limit.hpp)."""
    table = Table(prefix + "-duty.csv", ["gpu", "memory_calls_per_gemm", "duty", "gemm_tflops", "memory_gbs",
                                         "sm_clock_mhz", "power_w", "samples"])
    import time
    dev = torch.device("cuda")
    n = 8192
    a = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
    b = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
    x = torch.randn(256 * 1024 * 1024, device=dev, dtype=torch.bfloat16)
    y = torch.empty_like(x)
    moved = 2.0 * x.numel() * x.element_size()   # read x, write y
    for per_gemm in (None, 0, 1, 2, 4, 8, 16, 32, "memory only"):
        if per_gemm is None:   # an untimed warm-up mix, so the first row does not start cool
            plan, label = (1, 2), None
        elif per_gemm == "memory only":
            plan, label = (0, 8), per_gemm
        else:
            plan, label = (1, per_gemm), per_gemm
        gemms, mems = plan
        rows, start = [], time.time()
        while time.time() - start < (settle if label is None else settle + seconds):
            events = []
            t0 = time.time()
            while time.time() - t0 < window:
                for _ in range(gemms):
                    e = (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                    e[0].record(); torch.matmul(a, b.t()); e[1].record()
                    events.append(("gemm", e))
                for _ in range(mems):
                    e = (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                    e[0].record(); torch.add(x, 1.0, out=y); e[1].record()
                    events.append(("memory", e))
                torch.cuda.synchronize()
            clock, power = gpu_clock_and_power()
            g = sum(e[0].elapsed_time(e[1]) for k, e in events if k == "gemm") * 1e-3
            m = sum(e[0].elapsed_time(e[1]) for k, e in events if k == "memory") * 1e-3
            ng = sum(1 for k, _ in events if k == "gemm")
            nm = len(events) - ng
            if time.time() - start > settle:
                rows.append((g / (g + m) if g + m > 0 else 0, 2.0 * n ** 3 * ng / g / 1e12 if g > 0 else 0,
                             moved * nm / m / 1e9 if m > 0 else 0, clock or 0, power or 0))
        if label is None or not rows:
            continue
        med = [statistics.median(r[i] for r in rows) for i in range(5)]
        table.add(dict(gpu=gpu, memory_calls_per_gemm=label, duty="%.3f" % med[0], gemm_tflops="%.1f" % med[1],
                       memory_gbs="%.0f" % med[2], sm_clock_mhz="%.0f" % med[3], power_w="%.0f" % med[4],
                       samples=len(rows)))
        print("duty %.2f: GEMM %.0f TFLOP/s, memory %.0f GB/s, %.0f MHz, %.0f W" % tuple(med), flush=True)
        torch.cuda.synchronize()
        time.sleep(1.0)
    del a, b, x, y
    torch.cuda.empty_cache()


def attention_cudnn(torch, gpu, prefix):
    attention(torch, gpu, prefix, cudnn=True)


def training_gemms_sustained(torch, gpu, prefix):
    """training_gemms() with each product first run back to back for 0.4 s: their times under
    continuous load, with the SM clock after each (column sm_clock_mhz)."""
    training_gemms(torch, gpu, prefix, hold_s=0.4)


def attention(torch, gpu, prefix, cudnn=False):
    """PyTorch's scaled_dot_product_attention restricted to one backend: FlashAttention-2 (flash),
    or with cudnn=True cuDNN's fused attention (the backend PyTorch 2.11 picks by default on
    Hopper), written to <prefix>-attention.csv or <prefix>-attention-cudnn.csv."""
    table = Table(prefix + ("-attention-cudnn.csv" if cudnn else "-attention.csv"),
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
                row = dict(gpu=gpu, backend="cudnn (cuDNN fused attention)" if cudnn else "flash (FlashAttention-2 in PyTorch)",
                           batch=batch, heads=heads, seq=seq,
                           head_dim=head_dim, causal=int(causal), dtype="bf16")
                try:
                    q, k, v = (torch.randn(batch, heads, seq, head_dim, device=dev, dtype=dtype, requires_grad=True)
                               for _ in range(3))
                    dout = torch.randn(batch, heads, seq, head_dim, device=dev, dtype=dtype)
                    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION if cudnn else SDPBackend.FLASH_ATTENTION]):
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
    parser.add_argument("--only", action="append", choices=["gemm", "align", "attention", "conv", "sustained", "gemm-hot", "fp8", "fp8-sustained", "duty", "attention-cudnn"])
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
                     ("conv", convolutions), ("sustained", sustained), ("gemm-hot", training_gemms_sustained),
                     ("fp8", fp8_gemms), ("fp8-sustained", fp8_sustained), ("duty", duty_cycle),
                     ("attention-cudnn", attention_cudnn)]:
        if part in parts:
            print("pytorch_kernels.py: %s ..." % part, flush=True)
            fn(torch, gpu, args.out_prefix)
    print("pytorch_kernels.py: done (torch %s, CUDA %s, cuDNN %s)" % (
        torch.__version__, torch.version.cuda, torch.backends.cudnn.version()), flush=True)


if __name__ == "__main__":
    main()
