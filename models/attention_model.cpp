// FlashAttention forward/backward time from published kernel throughput (attention_model.hpp).
//
// time = FLOPs / (peak x efficiency x occupancy):
//  - FLOPs as the FlashAttention papers count them (header);
//  - efficiency = the published TFLOP/s of the kernel the device generation runs, over the peak of the
//    GPU the paper measured (A100: 312 TFLOP/s FP16/BF16; H100 SXM5 at the FA3 paper's fixed 1830 MHz:
//    989.4 FP16/BF16, 1978.9 FP8), interpolated linearly in log2(sequence length) and log2(head dim)
//    between the published panels; the rules R1-R8 below say what is used where nothing is published;
//  - occupancy = min(tiles, SMs it runs on) / compute units: a kernel with fewer 128-row tiles than SMs
//    leaves SMs idle, and SMs held by a communication kernel beside it (DeviceSpec::busy_units) are not
//    its to run on.
//
// R1 Kernel per generation and precision.
//    ampere, ada, fp16/bf16: FlashAttention-2 (FA2) on A100 (Tables A). Ada (and sm86 Ampere) run the same
//      FA2 code with less shared memory per SM; the A100 fractions are applied to their peaks unchanged.
//    hopper, fp16/bf16: FA2 on H100 (Tables B, the FA2 bars of the FA3 paper). FA2, not FA3, because FA2 is
//      what `pip install flash-attn`, PyTorch's SDPA flash backend and Hugging Face's "flash_attention_2"
//      run; FA3 is a separate beta build (hopper/ in the flash-attention repo). Stacks that use cuDNN's
//      fused attention on Hopper (Transformer Engine) run close to FA3 (Tables C), faster than modelled.
//    hopper, fp8: FA3 FP8 forward (Tables D). FA3 has no FP8 backward (flash-attention README: "FP16 / BF16
//      forward and backward, FP8 forward"): the backward runs at FA3's BF16 backward rate (Table C2) and
//      the device's BF16 peak.
//    blackwell, fp16/bf16: cuDNN's fused attention, which Transformer Engine and PyTorch's SDPA run there:
//      the A100 fractions (Tables A) against the Blackwell peak, divided by 1.3. FlashAttention-4, the
//      kernel written for Blackwell, reaches "up to 1613 TFLOPs/s (71% utilization)" of the B200's 2.25
//      PFLOP/s BF16 peak, "up to 1.3x" cuDNN 9.13 (Zadouri, Dao et al., "FlashAttention-4", arXiv 2026;
//      Together AI blog): FA4 at about the fraction FA2 reaches on A100 (73% forward at its best), cuDNN
//      1.3x below it. No per-length or per-head-dim figures were found: the A100 curves give the shape.
//    cdna3 (AMD MI300X), fp16/bf16: the H100 FA2 fractions (Tables B). NO PUBLISHED FIGURE was found for
//      the ROCm FlashAttention ports (composable_kernel, Triton) that PyTorch's SDPA runs there: an
//      assumption that a port of FA2 to a new generation reaches what FA2 reached on Hopper.
//    Pre-Ampere (FA2 requires sm80+; FlashAttention 1.x ran on Turing but no throughput figures for it are
//    tabulated here), TPUs, unknown generations, fp32/tf32/fp64, and fp8 off Hopper: std::invalid_argument.
// R2 A100 backward: the FA2 paper prints forward (Fig. 5) and forward+backward (Fig. 4), not the backward
//    bar values. Its benchmark (benchmarks/benchmark_flash_attention.py) times the two passes separately and
//    reports fwd+bwd as 3.5F / (t_fwd + t_bwd), so the backward rate is 2.5 / (3.5 / fwdbwd - 1 / fwd).
//    Check: the largest derived value, 196 TFLOP/s (hdim 128, 16k), is 63% of 312, the paper's "up to 63%
//    of the theoretical max throughput in the backward pass" (Sec. 1).
// R3 H100 causal backward is not published (the FA3 paper's backward panels are without causal mask): the
//    non-causal value times FA2-on-A100's causal / non-causal backward ratio (R2) at the same head dim and
//    length node.
// R4 FA3 FP8 causal forward at head dim 64 and 128: the transcriptions found could not be assigned to
//    causal panels with confidence, so: the non-causal FP8 value times FA3 FP16's causal / non-causal
//    forward ratio at the same head dim and node (FP8's 4224/8448/16896 against FP16's 4k/8k/16k). Check
//    at head dim 256, where both are published: the rule gives 0.59-0.85 of non-causal where the FP8
//    figures give 0.65-0.89 (the rule is within -8%..+1% of them).
// R5 Head dim: log2 interpolation between published panels, clamped outside them (A100: 64-128; H100
//    forward: 64-256, backward: 64-128). Head dims below 64 use the 64 figures (optimistic: FA2 at 32 is
//    slower than at 64), above the largest the largest.
// R6 Sequence length: the curve is looked up at the kernel's inner-loop length, the key length in the
//    forward (each tile of 128 queries loops over the keys) and the query length in the backward (FA2/FA3
//    parallelise the backward over key blocks and loop over queries). Above 16k: the 16k value (the curves
//    are flat from 8k). Below 512 (no figure): each tile is taken to cost a fixed prologue/epilogue of c
//    key columns, so efficiency ~ L / (L + c); c is fitted to the panel's 512 and 1k values (c = 1024 (r-1)
//    / (2-r), r = eff(1k) / eff(512)), and eff(L) = eff(512) (L / (L + c)) / (512 / (512 + c)). An
//    extrapolation, not a measurement.
// R7 Occupancy: the papers' benchmarks hold 16k tokens per batch (>= 2048 tiles, >= 15 waves), so their
//    figures include no idle SMs; a smaller problem with tiles = batch x heads x ceil(L / 128) < SMs runs at
//    tiles / SMs of that rate (L: query length forward, key length backward). Grouped-query attention does
//    the same FLOPs (K/V are shared, not fewer), so kv_heads does not change the time.
// R8 The Triton kernel (FlashKernel::triton): the FA2 paper (Dao 2023, Sec. 4.1) measures FA2 on A100
//    "around 1.3-1.5x faster than FlashAttention in Triton in the forward pass and around 2x faster in the
//    backward pass": the device's FA2 time (R1) times 1.4 forward and 2 backward, on every generation (the
//    Triton kernel has no Hopper-specific code path; no figure for it on H100 was found).
// R9 FlashAttention-3 (FlashKernel::fa3, attention: flash3), Hopper only: FP16/BF16 forward and backward
//    from the FA3 paper's own curves (Tables C1, C2 and R3's causal backward), at the device's 16-bit
//    peak. It stands for the class of Hopper attention kernels (wgmma and TMA; the FA3 paper plots
//    cuDNN 9.1's fused attention beside it): dlsim's own H200 measurement of a Llama 3.2 1B-shaped
//    step, whose SDPA ran cuDNN's kernels, took 20.8 ms of attention where these curves give about
//    21 ms (calibration/measured/h200/h200-steps-llama.json; FA2's curves give about 33 ms).
//
// Where the numbers come from. Every figure below is a value printed on top of a bar in the papers'
// figures (the papers give no tables). They were taken from third-party transcriptions of those labels,
// found through public search; each table says which and how they were cross-checked. Transcriptions by
// image-to-text models (subtext.edge.nugit.net "Technical Document Extraction" pages of the FA3 paper's
// figures) may misread a label: +-3% where two transcriptions disagreed, noted at the value.
#include "models/attention_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace dlsim::models {

namespace {

// R8: FA2 over the Triton FlashAttention kernel, per pass (the FA2 paper's 1.3-1.5x forward, its middle).
constexpr double kTritonForwardSlowdown = 1.4;
constexpr double kTritonBackwardSlowdown = 2.0;

using Row = std::array<double, 6>;

// R1, Blackwell: FlashAttention-4 over cuDNN 9.13 on B200, BF16 ("up to 1.3x", FA4 paper).
constexpr double kFa4OverCudnnBlackwell = 1.3;

struct Panel {
  double head_dim;
  bool causal;
  Row tflops;  // at the table's lengths
};

// The FA2 and FA3 papers' lengths (16k tokens per batch: batch 32 at 512 ... batch 1 at 16k; hidden 2048,
// i.e. 32/16/8 heads at head dim 64/128/256).
constexpr Row kLengths{512, 1024, 2048, 4096, 8192, 16384};
// FA3 paper App. C.2: the FP8 runs use 4224, 8448, 16896 (multiples of 132 SMs) for the long lengths.
constexpr Row kFp8Lengths{512, 1024, 2048, 4224, 8448, 16896};

constexpr double kA100Peak = 312.0;    // TFLOP/s FP16/BF16 dense (A100 datasheet; FA2 paper Sec. 2.1)
constexpr double kH100Peak = 989.4;    // TFLOP/s FP16/BF16 dense at 1830 MHz (FA3 paper App. C.1: "989")
constexpr double kH100Fp8Peak = 1978.9;

// ---- Tables A: FlashAttention-2 on A100 80GB SXM4, FP16 (Dao 2023, arXiv:2307.08691, Sec. 4.1) ----
// A1: forward, Fig. 5 (a)-(d). Transcription: a GitHub script plotting "Valores del paper A100" next to its
// own RTX 4060 Ti runs (found by searching code for the values). Single transcription; consistent with the
// paper's "up to 73% of the theoretical max throughput in the forward pass" (227 = 72.8% of 312).
constexpr std::array<Panel, 4> kA100Forward{{
    {64, false, {191, 193, 193, 192, 192, 192}},
    {128, false, {221, 226, 227, 222, 224, 223}},
    {64, true, {115, 146, 167, 177, 181, 183}},
    {128, true, {132, 164, 187, 198, 200, 197}},
}};
// A2: forward + backward, Fig. 4 (a)-(d), same transcription. Cross-checks: (c) matches two independent
// redraws of Fig. 4c (one extracted from the figure PDF's text layer in the arXiv source, 30/30 bars);
// (a) matches a lecture-slide transcription of the README's A100 plot, which gives 153 at 1k where the
// script has 162 (153 used: the script repeats its 2k value).
constexpr std::array<Panel, 4> kA100FwdBwd{{
    {64, false, {132, 153, 162, 171, 175, 176}},
    {128, false, {150, 172, 187, 196, 201, 203}},
    {64, true, {88, 119, 140, 156, 165, 171}},
    {128, true, {99, 133, 155, 173, 182, 189}},
}};

// ---- Tables B, C: H100 80GB SXM5, FP16/BF16 (Shah et al. 2024, arXiv:2407.08608, Sec. 4.1, App. C.1:
// FlashAttention 2.5.8, cuDNN 9.1.1, CUDA 12.3, clocks fixed at 1830 MHz, mean of 100 runs) ----
// Transcriptions: subtext.edge.nugit.net image pages of Fig. 5 / Fig. 6 (e.g. .../image/55f47a10...
// (fwd hdim 64), .../e27582d2... (fwd 128), .../4ec66909... (fwd 128 causal), .../9b7cf01f... (fwd 64
// causal), .../72bb6693... and .../662fef77... (fwd 256), .../40bf2854... (bwd 64), .../f60142e2...
// (bwd 128)). Panel assignment (causal or not) by the 16k values the paper's own summary attaches to each
// panel (msc-thesis notes of the paper: ~497, ~475, ~649, ~616, ~756, ~642 for FA3 in (a)-(f)).
// B1: FA2 forward, Fig. 5 (a)-(f).
constexpr std::array<Panel, 6> kH100Fa2Forward{{
    {64, false, {282, 306, 318, 321, 322, 324}},
    {128, false, {309, 350, 362, 368, 370, 370}},
    {256, false, {275, 313, 321, 323, 324, 326}},
    {64, true, {180, 229, 262, 284, 295, 299}},
    {128, true, {191, 260, 298, 319, 333, 335}},
    {256, true, {208, 251, 278, 293, 297, 298}},
}};
// B2: FA2 backward, Fig. 6 (a), (b): non-causal, head dim 64 and 128 only.
// Check: with B1, FA2 fwd+bwd at hdim 128, 16k = 3.5 / (1/370 + 2.5/322) = 334 TFLOP/s; the FA2 paper
// (Fig. 7) reports "up to 335 TFLOPs/s" fwd+bwd for FA2 on H100.
constexpr std::array<Panel, 2> kH100Fa2BackwardNonCausal{{
    {64, false, {198, 238, 264, 279, 287, 291}},
    {128, false, {214, 260, 291, 310, 318, 322}},
}};
// C1: FA3 forward, Fig. 5 (a)-(f). (e) at 1k: 639 in one transcription, 617 in another; 639 used.
constexpr std::array<Panel, 6> kH100Fa3Forward{{
    {64, false, {333, 392, 460, 476, 496, 497}},
    {128, false, {467, 565, 625, 638, 646, 648}},
    {256, false, {482, 639, 707, 736, 746, 756}},
    {64, true, {197, 265, 371, 420, 460, 473}},
    {128, true, {292, 423, 521, 579, 602, 616}},
    {256, true, {286, 427, 537, 612, 628, 642}},
}};
// C2: FA3 backward, Fig. 6 (a), (b): non-causal, head dim 64 and 128.
constexpr std::array<Panel, 2> kH100Fa3BackwardNonCausal{{
    {64, false, {272, 363, 422, 453, 472, 474}},
    {128, false, {316, 424, 501, 542, 559, 561}},
}};

// ---- Table D: FA3 FP8 forward on H100 SXM5 (arXiv:2407.08608 Fig. 7 (hdim 256) and App. C.2 Fig. 9) ----
// Transcriptions: subtext.edge.nugit.net image pages .../0c6bcc5c... (64), .../c33ff2e1... (128),
// .../32f2f2fe... (256), .../e3de8fab... and .../f474e7f2... (256 causal, two identical transcriptions).
// Non-causal assignment by the paper's 16k values (~615, ~1000, ~1150 non-causal; ~1000 causal at 256)
// and the abstract's "close to 1.2 PFLOPs/s". Causal 64 and 128: rule R4.
constexpr std::array<Panel, 4> kH100Fp8ForwardPublished{{
    {64, false, {240, 396, 462, 568, 596, 613}},
    {128, false, {348, 596, 733, 918, 974, 1008}},
    {256, false, {510, 744, 931, 966, 1151, 1171}},
    {256, true, {329, 521, 703, 856, 960, 1024}},
}};

// ---- Derived panels (rules R2-R4), computed from the published ones above at their nodes ----
constexpr Panel backward_from_fwd_bwd(const Panel& fwd, const Panel& fwd_bwd) {
  Panel p{fwd.head_dim, fwd.causal, {}};
  for (std::size_t i = 0; i < p.tflops.size(); ++i) {
    p.tflops[i] = 2.5 / (3.5 / fwd_bwd.tflops[i] - 1.0 / fwd.tflops[i]);
  }
  return p;
}

// base x num / den, node by node, as a causal panel.
constexpr Panel causal_by_ratio(const Panel& base, const Panel& num, const Panel& den) {
  Panel p{base.head_dim, true, {}};
  for (std::size_t i = 0; i < p.tflops.size(); ++i) p.tflops[i] = base.tflops[i] * num.tflops[i] / den.tflops[i];
  return p;
}

// R2: FA2 backward on A100.
constexpr std::array<Panel, 4> kA100Backward{{
    backward_from_fwd_bwd(kA100Forward[0], kA100FwdBwd[0]),
    backward_from_fwd_bwd(kA100Forward[1], kA100FwdBwd[1]),
    backward_from_fwd_bwd(kA100Forward[2], kA100FwdBwd[2]),
    backward_from_fwd_bwd(kA100Forward[3], kA100FwdBwd[3]),
}};

// R3: H100 backward tables with causal panels.
constexpr std::array<Panel, 4> with_causal_backward(const std::array<Panel, 2>& non_causal) {
  return {{non_causal[0], non_causal[1], causal_by_ratio(non_causal[0], kA100Backward[2], kA100Backward[0]),
           causal_by_ratio(non_causal[1], kA100Backward[3], kA100Backward[1])}};
}
constexpr std::array<Panel, 4> kH100Fa2Backward = with_causal_backward(kH100Fa2BackwardNonCausal);
constexpr std::array<Panel, 4> kH100Fa3Backward = with_causal_backward(kH100Fa3BackwardNonCausal);

// R4: FP8 forward with causal 64 and 128.
constexpr std::array<Panel, 6> kH100Fp8Forward{{
    kH100Fp8ForwardPublished[0],
    kH100Fp8ForwardPublished[1],
    kH100Fp8ForwardPublished[2],
    causal_by_ratio(kH100Fp8ForwardPublished[0], kH100Fa3Forward[3], kH100Fa3Forward[0]),
    causal_by_ratio(kH100Fp8ForwardPublished[1], kH100Fa3Forward[4], kH100Fa3Forward[1]),
    kH100Fp8ForwardPublished[3],
}};

// One pass of one kernel: its panels, their lengths and the peak the paper measured them against.
struct Curves {
  const Panel* panels;
  std::size_t count;
  const Row* lengths;
  double peak_tflops;
};

template <std::size_t N>
Curves curves(const std::array<Panel, N>& panels, const Row& lengths, double peak) {
  return {panels.data(), N, &lengths, peak};
}

constexpr double kTileRows = 128;  // FA2/FA3 tile of queries (forward) or keys (backward)

// Linear in log2(x) between nodes, clamped to the first and last node.
double log_interpolate(const Row& xs, const Row& ys, double x) {
  if (x <= xs.front()) return ys.front();
  if (x >= xs.back()) return ys.back();
  std::size_t hi = 1;
  while (xs[hi] < x) ++hi;
  const double f = (std::log2(x) - std::log2(xs[hi - 1])) / (std::log2(xs[hi]) - std::log2(xs[hi - 1]));
  return ys[hi - 1] + f * (ys[hi] - ys[hi - 1]);
}

// The panel values at one length, extended below the first node by rule R6.
double panel_tflops(const Panel& p, const Row& lengths, double length) {
  if (length >= lengths[0]) return log_interpolate(lengths, p.tflops, length);
  const double r = p.tflops[1] / p.tflops[0];
  if (r <= 1) return p.tflops[0];
  if (r >= 2) return p.tflops[0] * length / lengths[0];  // the c -> infinity limit
  const double c = lengths[1] * (r - 1) / (2 - r);        // lengths[1] = 2 lengths[0]
  return p.tflops[0] * (length / (length + c)) / (lengths[0] / (lengths[0] + c));
}

// Efficiency (fraction of peak) at a head dim and length, rules R5 and R6.
double efficiency(const Curves& c, double head_dim, bool causal, double length) {
  std::vector<const Panel*> panels;  // this causality, by head dim (tables are written in that order)
  for (std::size_t i = 0; i < c.count; ++i) {
    if (c.panels[i].causal == causal) panels.push_back(&c.panels[i]);
  }
  const auto at = [&](const Panel* p) { return panel_tflops(*p, *c.lengths, length); };
  double tflops = 0;
  if (head_dim <= panels.front()->head_dim) {
    tflops = at(panels.front());
  } else if (head_dim >= panels.back()->head_dim) {
    tflops = at(panels.back());
  } else {
    std::size_t hi = 1;
    while (panels[hi]->head_dim < head_dim) ++hi;
    const Panel* a = panels[hi - 1];
    const Panel* b = panels[hi];
    const double f = (std::log2(head_dim) - std::log2(a->head_dim)) / (std::log2(b->head_dim) - std::log2(a->head_dim));
    tflops = at(a) + f * (at(b) - at(a));
  }
  return tflops / c.peak_tflops;
}

double occupancy(const AttentionShape& s, double tile_length, const DeviceSpec& device) {
  const double tiles = s.batch * s.heads * std::ceil(tile_length / kTileRows);
  const double running = device.units_left();
  return std::min(tiles, running) / device.compute_units;
}

void check_runs(Precision precision, const DeviceSpec& device);

// R9: FlashAttention-3 is written for Hopper (wgmma, TMA, warp specialisation) and runs nowhere else.
std::string flash_kernel_unavailable(FlashKernel kernel, const DeviceSpec& device) {
  if (kernel != FlashKernel::fa3 || device.generation == Generation::hopper) return "";
  return "attention: FlashAttention-3 (flash3) runs on Hopper GPUs only (H100, H200), not on " + device.name +
         " (generation " + std::string(to_string(device.generation)) + "); use attention: flash";
}

void check(const AttentionShape& s, Precision precision, const DeviceSpec& device) {
  if (const std::string why = flash_kernel_unavailable(s.kernel, device); !why.empty()) throw std::invalid_argument(why);
  const double sizes[] = {s.batch, s.heads, s.kv_heads, s.query_length, s.key_length, s.head_dim};
  for (double x : sizes) {
    if (!(x >= 1) || !std::isfinite(x)) throw std::invalid_argument("attention: every size must be finite and >= 1");
  }
  if (s.kv_heads > s.heads) throw std::invalid_argument("attention: kv_heads must not exceed heads");
  check_runs(precision, device);
}

}  // namespace

std::string flash_attention_unavailable(Precision precision, const DeviceSpec& device, FlashKernel kernel) {
  try {
    check_runs(precision, device);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return flash_kernel_unavailable(kernel, device);
}

namespace {

void check_runs(Precision precision, const DeviceSpec& device) {
  if (!device.supports(precision)) {
    throw std::invalid_argument("attention: device " + device.name + " has no " + std::string(to_string(precision)) +
                                " peak");
  }
  const Generation g = device.generation;
  if (g != Generation::ampere && g != Generation::ada && g != Generation::hopper && g != Generation::blackwell &&
      g != Generation::cdna3) {
    throw std::invalid_argument("attention: no FlashAttention figures for " + device.name + " (generation " +
                                std::string(to_string(g)) +
                                "); FlashAttention-2 needs Ampere or newer (FlashAttention 1.x ran on Turing, "
                                "untabulated); TPUs do not run it");
  }
  const bool half = precision == Precision::fp16 || precision == Precision::bf16;
  if (!half && !(precision == Precision::fp8 && g == Generation::hopper)) {
    throw std::invalid_argument("attention: FlashAttention runs fp16/bf16 (and fp8 forward on Hopper, FA3), not " +
                                std::string(to_string(precision)) + " on " + device.name);
  }
  if (device.compute_units < 1) throw std::invalid_argument("attention: device " + device.name + " has no SM count");
}

}  // namespace

AttentionTime flash_attention_time(const AttentionShape& shape, Precision precision, const DeviceSpec& device) {
  check(shape, precision, device);
  const bool hopper = device.generation == Generation::hopper;
  const bool fp8 = precision == Precision::fp8;
  // R1: MI300X takes FA2-on-H100's fractions; Blackwell keeps the A100 ones (below), slowed to cuDNN's.
  const bool h100_fractions = (hopper || device.generation == Generation::cdna3) && !fp8 && shape.kernel != FlashKernel::fa3;
  const double stack_factor = device.generation == Generation::blackwell ? 1.0 / kFa4OverCudnnBlackwell : 1.0;

  // R1: the kernel's curves for each pass, and the peak each pass runs against.
  Curves forward = curves(kA100Forward, kLengths, kA100Peak);
  Curves backward = curves(kA100Backward, kLengths, kA100Peak);
  double forward_peak = device.peak(precision);
  double backward_peak = device.peak(precision);
  if (h100_fractions) {
    forward = curves(kH100Fa2Forward, kLengths, kH100Peak);
    backward = curves(kH100Fa2Backward, kLengths, kH100Peak);
  } else if (hopper && !fp8 && shape.kernel == FlashKernel::fa3) {  // R9
    forward = curves(kH100Fa3Forward, kLengths, kH100Peak);
    backward = curves(kH100Fa3Backward, kLengths, kH100Peak);
  } else if (hopper && fp8) {
    forward = curves(kH100Fp8Forward, kFp8Lengths, kH100Fp8Peak);
    backward = curves(kH100Fa3Backward, kLengths, kH100Peak);
    backward_peak = device.peak(Precision::bf16);
    if (!(backward_peak > 0)) {
      throw std::invalid_argument("attention: fp8 backward needs a bf16 peak on " + device.name);
    }
  }

  AttentionTime t;
  const double causal_factor = shape.causal ? 0.5 : 1.0;
  t.forward_flops = 4 * shape.query_length * shape.key_length * shape.head_dim * shape.heads * shape.batch *
                    causal_factor;
  t.backward_flops = 2.5 * t.forward_flops;

  // R6, R7: forward loops over keys in tiles of queries; backward loops over queries in tiles of keys.
  const double forward_rate = forward_peak * stack_factor *
                              efficiency(forward, shape.head_dim, shape.causal, shape.key_length) *
                              occupancy(shape, shape.query_length, device);
  const double backward_rate = backward_peak * stack_factor *
                               efficiency(backward, shape.head_dim, shape.causal, shape.query_length) *
                               occupancy(shape, shape.key_length, device);
  t.forward_s = t.forward_flops / forward_rate;
  t.backward_s = t.backward_flops / backward_rate;
  if (shape.kernel == FlashKernel::triton) {  // R8
    t.forward_s *= kTritonForwardSlowdown;
    t.backward_s *= kTritonBackwardSlowdown;
  }
  return t;
}

}  // namespace dlsim::models
