// ModelGraph: a DL model as an ordered list of layers (operations), each with its cost per
// sample. Built from the architecture (zoo*.cpp, or a user's YAML), never typed in as totals.
// Units: FLOPs count a multiply-add as 2 FLOPs; element counts are per sample; parameters are
// counts (elements), not bytes. Bytes follow from element counts and the run's precision.
//
// Besides its costs, each layer says how parallel plans split it (parallel_plan.hpp):
// - block: the repeating unit it belongs to (a transformer layer); pipeline stages are cut at
//   block boundaries. Layers before the first block go to the first stage, after the last to
//   the last stage. Models without blocks (CNNs) are cut between layers.
// - tensor: how Megatron-style tensor parallelism splits it over t ranks (Shoeybi et al. 2019):
//   `split` layers (column/row-parallel linears, attention heads, vocabulary-parallel embedding
//   and head) do 1/t of the work and hold 1/t of the parameters; `replicated` layers (norms,
//   residual adds, dropout) are repeated on every rank, or split by sequence parallelism.
// - tp_all_reduce: a row-parallel or vocabulary-parallel layer whose output is all-reduced over
//   the tensor-parallel group in forward (and whose matching column-parallel input gradient is
//   all-reduced in backward): Megatron's g and f operators.
// - experts > 0: a mixture-of-experts layer holding `experts` identical experts; parameters
//   counts all of them, forward_flops the work actually done per sample (top-k experts per
//   token). Expert parallelism puts experts/e of them on each rank.
// - tied_to: the layer whose parameters this one also uses (tied weights).
// - all_to_all_after: tokens are exchanged over the expert-parallel group after this layer
//   (dispatch after the router, combine after the experts), in forward and in backward.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "models/attention_model.hpp"
#include "models/memory_kernel_model.hpp"

namespace dlsim::models {

// attention: a fused attention kernel (FlashAttention: scores, softmax, dropout and context in
// one, attention_model.hpp).
enum class LayerKind { conv, linear, matmul, norm, elementwise, pool, embedding, softmax, attention };

enum class TensorSplit { replicated, split };

// The kernels a layer runs, for the kernel-level model (layer_kernels.hpp). Per sample, as the
// costs are. Zeros mean "not given": derived from the costs (derive_matmul).
// A matrix layer is `count` products C[rows x cols] = A[rows x depth] B[depth x cols]; for a
// linear layer A is the input (rows = positions per sample), B the weights. With a batch of b
// samples the GEMM is (rows b) x cols x depth, `count` times; a batched product of activations
// (attention scores and context) is rows x cols x depth, count b times (batch_in_count).
struct MatmulDims {
  double rows = 0, cols = 0, depth = 0, count = 1;
  bool batch_in_count = false;
  bool input_gradient = true;     // backward computes dA (false: A is the image of a first layer)
  bool weight_gradient = true;    // backward computes dB (weights, or the second activation)
  // Whether the operands' rows are 16-byte aligned (models/gemm_model.hpp, operand alignment).
  // True: as frameworks lay them out (Megatron pads the vocabulary to a multiple of 128 per
  // tensor-parallel rank; model widths are multiples of 64). False: the widths are the model's own
  // (a Hugging Face LM head of 50,257), and the alignment follows from the dimensions.
  bool padded = true;
};

// A convolution's geometry per sample (channels 0: not given).
struct ConvDims {
  double channels = 0, height = 0, width = 0, filters = 0;
  double kernel_h = 1, kernel_w = 1, stride = 1, pad_h = 0, pad_w = 0;
  // The tensors' memory layout (workload.memory_format). False: NHWC ("channels last"), the
  // layout cuDNN's tensor-core kernels read and write. True: NCHW, PyTorch's default, which a
  // tensor-core convolution transposes around every call (layer_kernels.cpp).
  bool channels_first = false;
};

// A fused attention layer's geometry per sample (LayerKind::attention).
struct AttentionDims {
  double heads = 0, kv_heads = 0, query_length = 0, key_length = 0, head_dim = 0;
  bool causal = true;
  // Context parallelism (ring attention): the key/value blocks a rank's queries meet, one per
  // ring step; query_length and key_length are then the rank's block (layer_kernels.cpp).
  int ring_steps = 1;
  FlashKernel kernel = FlashKernel::fa2;  // the FlashAttention implementation (attention_model.hpp)
};

struct Layer {
  std::string name;
  LayerKind kind = LayerKind::elementwise;
  double parameters = 0;          // trainable parameter count
  double forward_flops = 0;       // per sample
  double activation_elements = 0; // output elements per sample (read by the next layer)
  double input_elements = 0;      // input elements per sample
  // Backward FLOPs per sample; a negative value means the default rule (backward_flops()).
  double backward_flops = -1;
  // Elements per sample kept from forward for backward; negative means the default rule
  // (saved_elements()).
  double saved_elements = -1;
  int block = -1;                 // repeating block index, -1 outside blocks
  TensorSplit tensor = TensorSplit::replicated;
  bool tp_all_reduce = false;     // output all-reduced over the tensor-parallel group
  bool attention_core = false;    // attention scores/softmax/context (selective recomputation)
  int experts = 0;                // > 0: a layer of `experts` experts (mixture of experts)
  bool all_to_all_after = false;  // expert-parallel all-to-all after this layer
  // Kernel-level description (layer_kernels.hpp).
  MatmulDims matmul;              // conv, linear, matmul
  ConvDims conv;                  // conv
  AttentionDims attention;        // attention
  std::optional<MemoryKernel> memory_kernel;  // other kinds; default by kind (memory_kernel_of)
  // Runs inside the previous layer's kernel (operator fusion, e.g. Megatron's bias-dropout-add):
  // no launch of its own, and only the traffic the previous kernel does not already do.
  bool fused = false;
  // Uses the parameters of layer `tied_to` (tied weights, e.g. a language-model head reusing the
  // token embedding); -1: only its own. Its `parameters` do not count them again. ZeRO-3 must
  // gather the tied layer's parameters before this one runs (zero3_schedule.hpp).
  int tied_to = -1;
  // The projection to the vocabulary (a language model's head, BERT's MLM decoder): the layer a
  // framework pads, or not (workload.pad_vocabulary).
  bool vocabulary = false;
  // Bytes per element of a memory-bound layer's inputs and outputs when they are not the training
  // precision's (0: the precision's), e.g. a softmax computed in FP32 and its conversions.
  double input_element_bytes = 0, output_element_bytes = 0;
  // Its backward launches nothing: an add whose gradient passes through unchanged (a separate
  // bias add; the bias gradient is the linear layer's own reduction).
  bool backward_free = false;
};

// Backward FLOPs per sample: the layer's own figure, else twice the forward for matrix layers
// (gradients for the input and for the weights) and once the forward for the others.
double backward_flops(const Layer& layer);
// Elements kept for backward per sample: the layer's own figure, else its input for matrix,
// norm, softmax, pooling and embedding layers and nothing for elementwise layers (activations
// such as ReLU and residual adds keep no more than what their neighbours already saved).
double saved_elements(const Layer& layer);
// Bytes one forward pass of the layer reads (inputs and weights) and writes (outputs) per
// sample, at `element_bytes` per element. The weights are read once per pass, not per sample:
// forward_bytes_read(l, b, e) = b * input * e + parameters * e.
double forward_bytes_read(const Layer& layer, double batch, double element_bytes);
double forward_bytes_written(const Layer& layer, double batch, double element_bytes);
// The memory-bound kernel class a non-matrix layer runs: its own, else by kind (norm: layer
// norm, softmax: softmax, embedding: gather, pool: pool, elementwise: stream).
MemoryKernel memory_kernel_of(const Layer& layer);
// The matrix product of a matrix layer: its own dims where given, else derived from its costs.
// Linear and conv layers with parameters: rows = forward FLOPs / (2 parameters) (positions per
// sample), cols = outputs / rows, depth = parameters / cols (exact for a bias-free linear layer,
// and for a convolution's implicit GEMM: depth = C R S);
// products without parameters: a cube of the same FLOPs (the shape is unknown; documented).
MatmulDims derive_matmul(const Layer& layer);

struct ModelGraph {
  std::string name;
  std::string sample_unit;        // "image", "sequence"
  double tokens_per_sample = 1;   // sequence length for language models, 1 otherwise
  std::vector<Layer> layers;      // forward order

  double parameters() const;
  double forward_flops_per_sample() const;
  double backward_flops_per_sample() const;
  double training_flops_per_sample() const { return forward_flops_per_sample() + backward_flops_per_sample(); }
  int blocks() const;             // number of distinct blocks (max block index + 1)
  bool has_tensor_layout() const; // some layer is tensor-split
  bool has_experts() const;
};

}  // namespace dlsim::models
