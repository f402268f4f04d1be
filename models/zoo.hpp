// Built-in models, built layer by layer from their published architectures. Transformers carry
// the layout parallel plans need (blocks, tensor split, tensor-parallel all-reduces, attention
// core, experts; see model_graph.hpp); CNNs have no blocks and are replicated.
#pragma once
#include <string>
#include <vector>

#include "models/model_graph.hpp"

namespace dlsim::models {

// ResNet-50 v1.5 (He et al. 2016; stride on the 3x3 conv), 224x224 input, 1000 classes.
ModelGraph resnet50();
// ResNet-101 v1.5: the same builder with [3, 4, 23, 3] bottleneck blocks (He et al. 2016, Table 1).
ModelGraph resnet101();
// VGG-16 (Simonyan & Zisserman 2015, configuration D, no BN), 224x224 input, 1000 classes.
ModelGraph vgg16();
// Inception-v3 (Szegedy et al. 2016) in the torchvision layout (BN after every conv), 299x299
// input, 1000 classes, with the auxiliary classifier (computed in training).
ModelGraph inception_v3();
// Vision Transformers (Dosovitskiy et al. 2021): 224x224 input, 16x16 patches (196 + 1 class
// token), pre-norm encoder, 1000-class head. sample_unit "image", one token per sample.
// flash_attention: the attention core as one FlashAttention kernel (see bert_base).
ModelGraph vit_b16(bool flash_attention = false);
ModelGraph vit_l16(bool flash_attention = false);
// BERT (Devlin et al. 2019) encoder with MLM head; sequence_length tokens per sample.
// mlm_positions: the positions the masked-LM head runs on; 0 means all s (as Hugging Face's
// BertForPreTraining computes it). Implementations that first gather the masked positions
// (Google's run_pretraining.py, NVIDIA DeepLearningExamples, Megatron-LM) run it on
// max_predictions_per_seq of them (20 at s = 128, 80 at s = 512). Throws std::invalid_argument
// for mlm_positions outside [0, sequence_length].
// flash_attention: the attention core (scores, softmax, context) as one FlashAttention kernel,
// as PyTorch's scaled_dot_product_attention runs it (nn.MultiheadAttention, Hugging Face's BERT
// with its default "sdpa" attention); false: batched GEMMs and a softmax over the s x s scores, as
// Google's BERT, NVIDIA DeepLearningExamples (2019-21) and eager PyTorch before SDPA ran it.
ModelGraph bert_base(int sequence_length = 128, int mlm_positions = 0, bool flash_attention = false);
ModelGraph bert_large(int sequence_length = 128, int mlm_positions = 0, bool flash_attention = false);

// The feed-forward's activation: GELU or ReLU (OPT) on one up matrix; or gated, SwiGLU (LLaMA) or
// GeGLU (Gemma, T5 v1.1), GELU(gate) x up, on gate and up matrices.
enum class FfnKind { gelu, relu, swiglu, geglu };
// How positions enter: a learned table added to the embeddings (GPT-2/3); rotary, its own kernel on
// Q and K, no parameters (LLaMA); ALiBi (Press et al., ICLR 2022; BLOOM, MPT), a per-head linear
// bias on the attention scores that implementations fold into the scores' batched GEMM
// (Megatron-DeepSpeed's baddbmm) or the flash kernel, so no kernel and no parameters of its own.
enum class Positions { learned, rotary, alibi };

// Decoder-only (GPT-style) transformer, built layer by layer (zoo_decoder.cpp). Defaults are the
// GPT-2 layout: plain GELU FFN, tied output embedding, learned positions, LayerNorm, biases.
struct DecoderConfig {
  std::string name;
  int layers = 0, hidden = 0, heads = 0;
  int kv_heads = 0;               // grouped-query attention K/V heads; 0 means heads (plain MHA)
  int head_dim = 0;               // features per attention head; 0 means hidden / heads (PaLM and
                                  //   Gemma use heads x head_dim != hidden)
  int ffn = 0;                    // feed-forward inner size
  int vocab = 0;
  int max_positions = 0;          // maximum (and default) sequence length
  FfnKind ffn_kind = FfnKind::gelu;
  bool gated_ffn() const { return ffn_kind == FfnKind::swiglu || ffn_kind == FfnKind::geglu; }  // gate, up, down
  bool tied_embeddings = true;    // LM head reuses the token embedding
  Positions positions = Positions::learned;
  bool rms_norm = false;          // RMSNorm (scale only); otherwise LayerNorm (scale and shift)
  bool linear_bias = true;        // biases on the linear layers
  bool dropout = false;           // dropout after softmax, attention output and FFN (GPT-2/3: 0.1)
  int experts = 0;                // > 0: mixture-of-experts FFN with this many experts per layer
  int top_k = 0;                  // experts each token is routed to (with experts > 0)
  bool flash_attention = false;   // the attention core as one FlashAttention kernel (no s x s matrix)
  FlashKernel flash_kernel = FlashKernel::fa2;  // with flash_attention: which implementation (flash_kernel.hpp)
  bool parallel_block = false;    // attention and MLP side by side on one norm (GPT-J, PaLM)
  // With parallel_block: attention and MLP each on its own norm of the block's input (GPT-NeoX's
  // input and post-attention LayerNorms, Falcon-40B/180B's ln_attn and ln_mlp), not one shared.
  bool parallel_block_two_norms = false;
  bool embedding_norm = false;    // a norm on the token embeddings before the first block (BLOOM)
  // Megatron-LM's fused kernels (Narayanan et al. SC'21, sec. 4.2): bias + GeLU, bias + dropout
  // + residual add, and scale + mask + softmax, each one kernel. False: each step its own PyTorch
  // kernel (Megatron's --no-bias-gelu-fusion --no-bias-dropout-fusion --no-masked-softmax-fusion,
  // and eager code in general): the same arithmetic, more launches and passes over memory.
  bool fused_kernels = true;
  // With fused_kernels false and 16-bit activations: the unfused softmax runs in FP32, converted
  // from and back to 16 bits (Megatron-LM 2021: query-key layer scaling, on by default, forces
  // attention_softmax_in_fp32).
  bool softmax_in_fp32 = false;
  // The loss as one fused cross-entropy kernel (Megatron-Core's --cross-entropy-loss-fusion, set
  // by NeMo / Megatron-Bridge recipes; Transformer Engine's or Apex's kernel). False: Megatron-LM's
  // vocabulary-parallel cross-entropy in PyTorch operations: max, subtract, exp, sum and divide
  // over the logits, each a kernel, and a scaling pass backward (zoo_decoder.cpp).
  bool fused_cross_entropy = true;
  // With fused_cross_entropy false and 16-bit activations: the logits converted to FP32 first
  // (Megatron-LM's default, fp16_lm_cross_entropy off), the loss computed in FP32.
  bool cross_entropy_in_fp32 = false;
};
// Features per head (head_dim, or hidden / heads), of the Q projection (heads x that) and of each
// of the K and V projections (kv_heads x that).
double decoder_head_dim(const DecoderConfig& c);
double decoder_q_features(const DecoderConfig& c);
double decoder_kv_features(const DecoderConfig& c);
// Throws std::invalid_argument for a bad config or sequence_length outside [1, max_positions].
ModelGraph decoder_transformer(const DecoderConfig& c, int sequence_length);
// Parameters a token passes through: all of them for a dense model; with experts, the expert
// layers count top_k of their experts (Mixtral 8x7B: 12.9 B of 46.7 B).
double decoder_active_parameters(const DecoderConfig& c);
// Presets: gpt2, gpt2-medium, gpt2-large, gpt2-xl, gpt3-125m ... gpt3-175b, llama-7b/13b/33b/65b,
// llama2-7b/13b/70b, llama3-8b/70b/405b, mistral-7b, mixtral-8x7b/8x22b, opt-13b/30b/66b/175b,
// bloom-176b, gpt-neox-20b, mpt-7b/30b, falcon-7b/40b/180b, palm-540b, gemma-2b/7b (the full list:
// decoder_model_names()). Unknown names throw std::out_of_range.
std::vector<std::string> decoder_model_names();
DecoderConfig decoder_config(const std::string& name);
// At the preset's full context, or at sequence_length (1..max_positions).
ModelGraph decoder_model(const std::string& name);
ModelGraph decoder_model(const std::string& name, int sequence_length);

// The encoder transformers of the zoo (bert-base, bert-large, vit-b16, vit-l16), whose attention
// core is a choice, built by name. sequence_length 0: the model's usual length (ignored by ViT);
// mlm_positions as bert_base (BERT only). Throws std::out_of_range for a name that is not one,
// std::invalid_argument as the builders do.
bool zoo_model_is_encoder(const std::string& name);
// fused_kernels: scale-mask-softmax one kernel and BERT's dropout fused with the residual add
// that follows (Megatron-LM's fusions); false: each step a kernel of its own (eager PyTorch, as
// DeepLearningExamples' and Hugging Face's BERT run), and with softmax_in_fp32 (16-bit training
// under PyTorch autocast, which runs softmax in FP32) the softmax steps, and BERT's dropout of
// the probabilities, on an FP32 copy between two conversions.
struct EncoderOptions {
  int sequence_length = 0;
  int mlm_positions = 0;
  bool flash_attention = false;
  bool fused_kernels = true;
  bool softmax_in_fp32 = false;
  FlashKernel flash_kernel = FlashKernel::fa2;  // with flash_attention: which implementation (flash_kernel.hpp)
};
ModelGraph encoder_model(const std::string& name, const EncoderOptions& options);

// Names the zoo knows (sorted) and a builder by name. sequence_length 0 means the model's
// usual length (BERT: 128; decoders: their full context); it is ignored by image models.
std::vector<std::string> zoo_model_names();
bool zoo_model_has_sequence(const std::string& name);
// Throws std::out_of_range for an unknown name, std::invalid_argument for a sequence length
// the model cannot take.
ModelGraph zoo_model(const std::string& name, int sequence_length = 0);

}  // namespace dlsim::models
