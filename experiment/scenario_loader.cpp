// The scenario schema: every key a scenario may hold, its type, unit, range and default, in
// the order scenarios/README.md documents them.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <fstream>
#include <set>
#include <sstream>

#include "experiment/atomic_file.hpp"
#include "experiment/catalog_yaml.hpp"
#include "experiment/builtin_profiles.hpp"
#include "experiment/cluster_yaml.hpp"
#include "experiment/collective_yaml.hpp"
#include "experiment/serving_run.hpp"
#include "experiment/serving_yaml.hpp"
#include "experiment/load.hpp"
#include "experiment/nearest_name.hpp"
#include "experiment/model_yaml.hpp"
#include "experiment/network_yaml.hpp"
#include "experiment/plan_fit.hpp"
#include "experiment/plan_search_yaml.hpp"
#include "experiment/plan_yaml.hpp"
#include "experiment/profile_yaml.hpp"
#include "experiment/sweep_spec.hpp"
#include "experiment/validation_yaml.hpp"
#include "experiment/overrides.hpp"
#include "experiment/yaml_document.hpp"
#include "experiment/yaml_reader.hpp"
#include "models/catalog.hpp"
#include "models/memory_model.hpp"
#include "models/zoo.hpp"

namespace dlsim::experiment {
namespace {

constexpr std::int64_t kMaxNodes = 100'000;
constexpr std::int64_t kMaxBatch = 100'000'000;
constexpr double kMaxSamples = 1e15;
constexpr double kMaxEpochs = 1e6;
constexpr std::int64_t kMaxIterations = 1'000'000'000'000;

const std::vector<std::string> kPrecisions{"fp32", "tf32", "fp16", "bf16", "fp8"};

models::Precision precision_of(const std::string& s) { return *models::parse_precision(s); }

// The precision a device usually trains in, the default of workload.precision: mixed bf16 from
// Ampere on and on TPUs, mixed fp16 on Volta and Turing (tensor cores without bf16), fp32 on
// older or unknown devices.
std::string usual_precision(const models::DeviceSpec& device) {
  using models::Generation;
  switch (device.generation) {
    case Generation::ampere:
    case Generation::ada:
    case Generation::hopper:
    case Generation::blackwell:
    case Generation::cdna3:
    case Generation::tpu:
    case Generation::trainium: return device.supports(models::Precision::bf16) ? "bf16" : "fp32";
    case Generation::volta:
    case Generation::turing: return device.supports(models::Precision::fp16) ? "fp16" : "fp32";
    default: return "fp32";
  }
}

ClusterConfig read_cluster(MapReader& r, const models::Catalog& catalog, const std::string& base_dir) {
  ClusterConfig c;
  const YAML::Node instance = r.node("instance");
  if (!instance.IsDefined() || instance.IsNull()) {
    r.fail_missing("instance", "a catalog instance type such as aws/p3.16xlarge, or an inline mapping "
                               "{accelerator, accelerators_per_node, network_bandwidth, price, ...}");
  }
  if (instance.IsMap()) {
    MapReader inline_reader(instance, r.path_of("instance"), r.source());
    c.instance_name = "inline";
    c.instance = read_instance_fields(inline_reader, "inline", catalog);
    inline_reader.finish();
  } else {
    c.instance_name = r.text("instance");
    const models::InstanceType* t = catalog.find_instance(c.instance_name);
    if (c.instance_name == kLocalCpuInstance) {
      // Built from the scenario's profile (profile_yaml.hpp); price 0 unless cluster.price says.
      static const models::InstanceType local = [] {
        models::InstanceType i;
        i.name = kLocalCpuInstance;
        i.provider = "local";
        i.accelerators_per_node = 1;
        return i;
      }();
      t = &local;
    }
    if (t == nullptr) {
      r.fail("instance", "unknown instance type '" + c.instance_name + "'" +
                             did_you_mean(c.instance_name, catalog.instance_names()) +
                             "; run 'dlsim catalog instances' for the list");
    }
    c.instance = *t;
  }
  c.nodes = static_cast<int>(r.integer("nodes", 1, kMaxNodes, 1));
  c.instance.price_per_hour = r.quantity("price", Dimension::price_rate, 0, 1e5, c.instance.price_per_hour);
  if (c.instance_name != kLocalCpuInstance) {
    c.device = *catalog.find_device(c.instance.device);
    c.profile = *catalog.find_profile(c.instance.device);
  }
  apply_cluster_profile(r, c, base_dir);
  if (c.device.generation == models::Generation::cdna3) {
    // network_yaml.cpp: RCCL has no model, so its collectives run ideal (docs/validation.md).
    c.accuracy_note = c.device.name + " collectives run as ideal phases at line rate (RCCL is not modelled) and its kernels at "
                      "the H100's fractions of peak: an upper bound";
  }
  if (c.device.generation == models::Generation::trainium) {
    // No Trainium kernel or collective has been measured for dlsim: datasheet peaks, the mean
    // measured GPU fractions of them, and Neuron's collectives as ideal phases (network_yaml.cpp).
    c.accuracy_note = c.device.name + " runs at the mean measured GPU fractions of its datasheet peaks (no Trainium kernel "
                      "measured) and its collectives as ideal phases at line rate (Neuron's collectives are not modelled): "
                      "an estimate, not a calibrated prediction";
  }
  r.finish();
  return c;
}

void read_batch(MapReader& w, WorkloadConfig& wl) {
  if (!w.has("batch")) w.fail_missing("batch", "{per_device: N} or {global: N} samples");
  MapReader b(w.node("batch"), w.path_of("batch"), w.source());
  const bool per_device = b.has("per_device");
  const bool global = b.has("global");
  b.allow({"per_device", "global"});
  if (per_device == global) {
    w.fail("batch", "give exactly one of 'per_device' (samples per accelerator) or 'global' (samples per iteration)");
  }
  wl.batch_mode = per_device ? BatchMode::per_device : BatchMode::global;
  wl.batch = static_cast<int>(b.integer(per_device ? "per_device" : "global", 1, kMaxBatch));
  b.finish();
}

// workload.input.storage: {type, sample_bytes, object_bytes (object), capacity (parallel file
// system), bandwidth (local; others: an override), cached}. Needs read_work's dataset.
models::DatasetStorage read_storage(MapReader& st, const WorkloadConfig& wl) {
  std::vector<std::string> names;
  for (const models::StorageSpec& s : models::builtin_storage()) names.push_back(s.name);
  models::DatasetStorage d;
  d.spec = *models::find_storage(st.choice("type", names));
  if (!st.has("sample_bytes")) st.fail_missing("sample_bytes", "one sample as stored (e.g. 110KB for an ImageNet JPEG)");
  d.sample_bytes = st.quantity("sample_bytes", Dimension::size, 1, 1e12);
  const bool object = d.spec.kind == models::StorageKind::object;
  const bool parallel_fs = d.spec.kind == models::StorageKind::parallel_fs;
  const bool local = d.spec.kind == models::StorageKind::local;
  if (st.has("object_bytes") && !object) st.fail("object_bytes", "sizes the objects of an object storage; " + d.spec.name + " is a " + std::string(models::to_string(d.spec.kind)) + " storage");
  d.object_bytes = object ? st.quantity("object_bytes", Dimension::size, d.sample_bytes, 1e13, d.sample_bytes) : 0;
  if (st.has("capacity") && !parallel_fs) st.fail("capacity", "is a parallel file system's provisioned size; " + d.spec.name + " holds the dataset");
  const double dataset_bytes = wl.dataset_samples * d.sample_bytes;
  d.capacity_bytes = parallel_fs ? st.quantity("capacity", Dimension::size, std::max(1.0, dataset_bytes), 1e18, std::max(dataset_bytes, d.spec.min_capacity_bytes)) : 0;
  if (local && !st.has("bandwidth")) st.fail_missing("bandwidth", "how fast the instance's own disks read (e.g. 2GB/s)");
  if (st.has("bandwidth")) {
    if (parallel_fs) st.fail("bandwidth", "a file system's throughput follows its tier and capacity: choose aws/fsx-lustre-125, -250, -500 or -1000");
    // object: one connection's rate; block: the volume's; local: the node's disks'.
    (object ? d.spec.connection_bytes_per_s : d.spec.bytes_per_s) = st.quantity("bandwidth", Dimension::bandwidth, 1, 1e15);
  }
  d.cached = st.boolean("cached", false);
  if (d.cached && !(wl.dataset_samples > 0)) st.fail("cached", "keeps the dataset after its first epoch: give the work as data: {samples, epochs}");
  st.finish();
  return d;
}

// workload.input.preparation: {instance (a CPU type) | vcpus + price, nodes, samples_per_vcpu,
// startup}. Needs the dataset's samples.
models::DatasetPreparation read_preparation(MapReader& p, const WorkloadConfig& wl) {
  models::DatasetPreparation d;
  if (!(wl.dataset_samples > 0)) p.fail("nodes", "prepares the dataset's samples: give the work as data: {samples, epochs}");
  const bool typed = p.has("instance");
  if (typed) {
    std::vector<std::string> names;
    for (const models::CpuInstance& c : models::builtin_cpu_instances()) names.push_back(c.name);
    const models::CpuInstance& c = *models::find_cpu_instance(p.choice("instance", names));
    for (const char* key : {"vcpus", "price"}) {
      if (p.has(key)) p.fail(key, "comes from the instance type " + c.name + "; give either instance or vcpus and price");
    }
    d.instance = c.name;
    d.vcpus = c.vcpus;
    d.price_per_hour = c.price_per_hour;
  } else {
    if (!p.has("vcpus")) p.fail_missing("vcpus", "each node's vCPUs (or name a CPU instance type: instance)");
    if (!p.has("price")) p.fail_missing("price", "each node's on-demand price in USD per hour (or name a CPU instance type: instance)");
    d.vcpus = static_cast<int>(p.integer("vcpus", 1, 100'000));
    d.price_per_hour = p.number("price", 0, 1e6);
  }
  d.nodes = static_cast<int>(p.integer("nodes", 1, 1'000'000, 1));
  if (!p.has("samples_per_vcpu")) {
    p.fail_missing("samples_per_vcpu", "samples one vCPU prepares per second, as measured (e.g. about 117 for ImageNet JPEGs "
                                       "decoded and resized by PIL)");
  }
  d.samples_per_vcpu_s = p.number("samples_per_vcpu", 1e-6, 1e9);
  d.startup_s = p.quantity("startup", Dimension::duration, 0, 30 * 86400.0, 0);
  p.finish();
  return d;
}

// workload.input.transfer: {route: inter-zone | inter-region | internet, from (provider; default
// the cluster's), bandwidth}. Needs the dataset's bytes.
models::DatasetTransfer read_transfer(MapReader& t, const WorkloadConfig& wl, const ClusterConfig& cluster) {
  models::DatasetTransfer d;
  const std::string route = t.choice("route", {"inter-zone", "inter-region", "internet"});
  d.route = route == "inter-zone" ? models::TransferRoute::inter_zone
            : route == "internet" ? models::TransferRoute::internet
                                  : models::TransferRoute::inter_region;
  const std::string own = cluster.instance.provider;
  const bool known = own == "aws" || own == "gcp" || own == "azure";
  if (!t.has("from") && !known) t.fail_missing("from", "the provider the data leaves (aws, gcp or azure): " + cluster.instance_name + "'s is not one");
  d.provider = t.choice("from", {"aws", "gcp", "azure"}, known ? own : "aws");
  d.usd_per_gb = models::transfer_usd_per_gb(d.provider, d.route);
  if (!t.has("bandwidth")) t.fail_missing("bandwidth", "the copy's sustained rate (e.g. 10Gbps)");
  d.bytes_per_s = t.quantity("bandwidth", Dimension::bandwidth, 1, 1e15);
  if (!(wl.dataset_bytes > 0)) {
    t.fail("route", "moves the dataset's bytes: give workload.input.bytes, or storage.sample_bytes with data: {samples}");
  }
  t.finish();
  return d;
}

// workload.input: {loader: none | pytorch | dali-cpu | custom, samples_per_worker (custom),
// workers (default: the node's vCPUs), prefetch, storage, bytes, preparation, transfer}.
void read_input(MapReader& w, WorkloadConfig& wl, const ClusterConfig& cluster) {
  MapReader in(w.node("input"), w.path_of("input"), w.source(), true);
  const std::string loader = in.choice("loader", {"none", "pytorch", "dali-cpu", "custom"}, "none");
  models::InputPipeline& p = wl.input;
  p.loader = loader == "pytorch" ? models::Loader::pytorch
             : loader == "dali-cpu" ? models::Loader::dali_cpu
             : loader == "custom" ? models::Loader::custom
                                  : models::Loader::none;
  if (p.loader == models::Loader::custom) {
    if (!in.has("samples_per_worker")) in.fail_missing("samples_per_worker", "the custom loader's samples per second per worker");
    p.samples_per_worker_s = in.number("samples_per_worker", 1e-6, 1e9);
  } else {
    if (in.has("samples_per_worker")) in.fail("samples_per_worker", "is a custom loader's rate (loader: custom); " + loader + "'s is measured");
    p.samples_per_worker_s = models::loader_samples_per_worker_s(p.loader);
  }
  const int vcpus = cluster.instance.vcpus;
  if (p.loader != models::Loader::none && !in.has("workers") && vcpus < 1) {
    in.fail_missing("workers", "the loader's workers per node: " + cluster.instance_name + "'s vCPUs are not in the catalog");
  }
  p.workers = static_cast<int>(in.integer("workers", 1, 100'000, vcpus));
  p.vcpus = std::max(0, vcpus);
  p.prefetch = static_cast<int>(in.integer("prefetch", 0, 1'000, 2));
  if (in.has("storage")) {
    if (p.loader == models::Loader::none) in.fail("storage", "is read by the data loader's workers: give workload.input.loader");
    MapReader st(in.node("storage"), in.path_of("storage"), in.source());
    wl.storage = read_storage(st, wl);
  }
  // The dataset's size: given, or its samples as stored.
  if (in.has("bytes")) {
    wl.dataset_bytes = in.quantity("bytes", Dimension::size, 1, 1e18);
  } else if (wl.storage.present() && wl.dataset_samples > 0) {
    wl.dataset_bytes = wl.dataset_samples * wl.storage.sample_bytes;
  }
  if (in.has("preparation")) {
    MapReader p(in.node("preparation"), in.path_of("preparation"), in.source());
    wl.preparation = read_preparation(p, wl);
  }
  if (in.has("transfer")) {
    MapReader t(in.node("transfer"), in.path_of("transfer"), in.source());
    wl.transfer = read_transfer(t, wl, cluster);
  }
  in.finish();
}

// workload.evaluation: {every: epochs, samples: N | time: duration}; workload.startup: duration.
// Called after read_work (epochs) and read_plan (the split of the model).
void read_evaluation_and_startup(MapReader& w, WorkloadConfig& wl) {
  wl.startup_s = w.quantity("startup", Dimension::duration, 0, 30 * 86400.0, 0);
  if (!w.has("evaluation")) return;
  MapReader e(w.node("evaluation"), w.path_of("evaluation"), w.source());
  if (!(wl.epochs > 0)) e.fail("every", "counts epochs: give the work as data: {samples, epochs}");
  wl.evaluation.every_epochs = static_cast<int>(e.integer("every", 1, 1'000'000, 1));
  const bool samples = e.has("samples");
  const bool time = e.has("time");
  if (samples == time) e.fail(samples ? "time" : "samples", "give exactly one of 'samples' (the validation set) or 'time' (a pass as measured)");
  if (time) {
    wl.evaluation.time_s = e.quantity("time", Dimension::duration, 1e-6, 30 * 86400.0);
  } else {
    if (wl.plan.tensor > 1 || wl.plan.pipeline > 1 || wl.plan.context > 1 || wl.plan.expert > 1) {
      e.fail("samples", "a forward pass is timed on one accelerator holding the whole model (a data-parallel plan); "
                        "with tensor, pipeline, context or expert parallelism give the pass's 'time'");
    }
    wl.evaluation.samples = e.number("samples", 1, kMaxSamples);
  }
  e.finish();
}

void read_work(MapReader& w, WorkloadConfig& wl) {
  wl.iterations = w.integer("iterations", 1, kMaxIterations, 0);
  // tokens: as in cluster jobs, the work of a language model in tokens (iterations follow from
  // the global batch and the sequence length).
  w.allow({"tokens"});
  if (w.has("tokens")) {
    if (wl.model.tokens_per_sample <= 1) {
      w.fail("tokens", "model '" + wl.model_name + "' has no sequence: give iterations or data: {samples, epochs}");
    }
    if (wl.iterations > 0) w.fail("tokens", "give the amount of work once: tokens or iterations, not both");
    wl.tokens = w.number("tokens", 1, 1e18);
  }
  if (w.has("data")) {
    MapReader d(w.node("data"), w.path_of("data"), w.source());
    // The dataset in samples, or in tokens for a sequence model (samples = tokens / sequence length).
    if (d.has("tokens")) {
      if (d.has("samples")) d.fail("tokens", "give the dataset once: samples or tokens, not both");
      if (wl.sequence_length <= 0) d.fail("tokens", "counts a sequence model's tokens; model '" + wl.model_name + "' has no sequence length");
      wl.dataset_samples = std::ceil(d.number("tokens", 1, kMaxSamples * 1e6) / wl.sequence_length);
      d.allow({"samples"});
    } else {
      wl.dataset_samples = d.number("samples", 1, kMaxSamples);
      d.allow({"tokens"});
    }
    wl.epochs = d.number("epochs", 1e-6, kMaxEpochs, 0.0);
    d.finish();
    if (wl.epochs > 0 && wl.iterations > 0) {
      w.fail("iterations", "give the amount of work once: data.epochs or iterations, not both");
    }
    if (wl.epochs > 0 && wl.tokens > 0) w.fail("tokens", "give the amount of work once: data.epochs or tokens, not both");
    if (wl.epochs == 0 && wl.iterations == 0 && wl.tokens == 0) {
      d.fail_missing("epochs", "passes over the dataset (or give workload.iterations instead)");
    }
  } else {
    w.allow({"data"});
    if (wl.iterations == 0 && wl.tokens == 0) {
      w.fail_missing("data", "the work to do: data: {samples: N, epochs: E}, iterations: N, or tokens: N (language models)");
    }
  }
}

// What to change in a plan that does not fit: the smallest changes that make it fit, or the
// general advice when none of them does.
std::string fit_advice(const models::ModelGraph& model, const models::ParallelPlan& plan, double memory_bytes) {
  const std::string fits = describe_fits(changes_that_fit(model, plan, memory_bytes));
  return fits.empty() ? "; no change of recomputation, micro-batch, sequence parallelism or ZeRO stage (or two of them) makes "
                        "it fit: use more tensor or pipeline parallelism, or more accelerators"
                      : fits;
}

// The decoder transformer built again from its (changed) config, keeping the model's name.
void rebuild_decoder(WorkloadConfig& wl) {
  const std::string name = wl.model.name;
  wl.model = models::decoder_transformer(*wl.decoder, wl.sequence_length > 0 ? wl.sequence_length : wl.decoder->max_positions);
  wl.model.name = name;
}

// workload.attention's choice and the kernel it names ("auto" and "unfused": FA2 wherever flash
// attention is then chosen).
models::FlashKernel flash_kernel_of(const std::string& choice) {
  return models::flash_kernel_named(choice).value_or(models::FlashKernel::fa2);
}

// The attention core of a decoder transformer: "flash" where FlashAttention runs the device and
// precision (and an error where it was asked for and does not), else "unfused"; "auto" (the
// default) is what current frameworks do: PyTorch's SDPA and Megatron-Core with Transformer
// Engine pick a FlashAttention kernel when one runs, and fall back on the unfused product.
bool flash_attention_chosen(const MapReader& w, const WorkloadConfig& wl, const models::DeviceSpec& device, const std::string& choice,
                            const std::string& key, const YAML::Node& at) {
  // Under fp8 attention runs in bf16 (Transformer Engine's recipe, models/fp8_recipe.hpp).
  const std::string unavailable =
      models::flash_attention_unavailable(models::storage_precision(wl.precision), device, flash_kernel_of(choice));
  const bool asked = models::flash_kernel_named(choice).has_value();
  if (asked && !unavailable.empty()) {
    throw ConfigError(w.source().locate(at, key), key, unavailable + "; use attention: unfused (or auto)");
  }
  return asked || (choice == "auto" && unavailable.empty());
}

void resolve_attention(const MapReader& w, WorkloadConfig& wl, const models::DeviceSpec& device, const std::string& choice,
                       const std::string& key, const YAML::Node& at) {
  const bool flash = flash_attention_chosen(w, wl, device, choice, key, at);
  const models::FlashKernel kernel = flash_kernel_of(choice);
  if (flash == wl.decoder->flash_attention && kernel == wl.decoder->flash_kernel) return;
  wl.decoder->flash_attention = flash;
  wl.decoder->flash_kernel = kernel;
  rebuild_decoder(wl);
}

// The same choice for an encoder of the zoo (BERT, ViT): PyTorch's nn.MultiheadAttention and
// Hugging Face's BERT run scaled_dot_product_attention, whose flash backend takes them where it
// runs; built unfused, the model is built again with one FlashAttention kernel per layer.
void resolve_encoder_attention(const MapReader& w, WorkloadConfig& wl, const models::DeviceSpec& device, const std::string& choice,
                               const std::string& key, const YAML::Node& at, models::EncoderOptions& encoder) {
  if (!flash_attention_chosen(w, wl, device, choice, key, at)) return;
  encoder.flash_attention = true;
  encoder.flash_kernel = flash_kernel_of(choice);
  wl.model = models::encoder_model(wl.model_name, encoder);
}

// workload.fused_kernels and workload.fused_cross_entropy (scenario.hpp): a decoder transformer's
// bias-GeLU, bias-dropout-add and scale-mask-softmax, and its loss, fused (default) or as separate
// kernels; unfused with 16-bit activations the softmax and the loss run in FP32, as Megatron-LM
// runs them (models/zoo_decoder.cpp). An encoder of the zoo (`encoder`, else null) takes
// fused_kernels alone: unfused, its softmax runs in FP32 under 16-bit training too, as PyTorch's
// autocast runs it (models/zoo.hpp EncoderOptions).
void read_kernel_fusion(MapReader& w, WorkloadConfig& wl, models::EncoderOptions* encoder) {
  const bool fused = w.boolean("fused_kernels", true);
  const bool fused_loss = w.boolean("fused_cross_entropy", true);
  const bool sixteen_bit = models::bytes_per_element(models::storage_precision(wl.precision)) <= 2;
  if (encoder != nullptr) {
    if (w.has("fused_cross_entropy")) w.fail("fused_cross_entropy", "chooses a decoder transformer's loss kernel; model '" + wl.model_name + "' is not one");
    wl.fused_kernels = fused;
    if (fused) return;
    encoder->fused_kernels = false;
    encoder->softmax_in_fp32 = sixteen_bit;
    wl.model = models::encoder_model(wl.model_name, *encoder);
    return;
  }
  if (!wl.decoder) {
    for (const char* key : {"fused_kernels", "fused_cross_entropy"}) {
      if (w.has(key)) w.fail(key, "chooses a transformer's kernel fusion; model '" + wl.model_name + "' is not one");
    }
    return;
  }
  wl.fused_kernels = fused;
  wl.fused_cross_entropy = fused_loss;
  if (fused == wl.decoder->fused_kernels && fused_loss == wl.decoder->fused_cross_entropy) return;
  wl.decoder->fused_kernels = fused;
  wl.decoder->softmax_in_fp32 = !fused && sixteen_bit;
  wl.decoder->fused_cross_entropy = fused_loss;
  wl.decoder->cross_entropy_in_fp32 = !fused_loss && sixteen_bit;
  rebuild_decoder(wl);
}

// workload.pad_vocabulary (scenario.hpp), applied to the final model's vocabulary projections.
void read_vocabulary_padding(MapReader& w, WorkloadConfig& wl) {
  wl.pad_vocabulary = w.boolean("pad_vocabulary", true);
  bool found = false;
  for (models::Layer& layer : wl.model.layers) {
    if (!layer.vocabulary) continue;
    layer.matmul.padded = wl.pad_vocabulary;
    found = true;
  }
  if (!found && w.has("pad_vocabulary")) {
    w.fail("pad_vocabulary", "model '" + wl.model_name + "' has no projection to a vocabulary (a language model's head)");
  }
}

// workload.memory_format (scenario.hpp), applied to the model's convolutions.
void read_memory_format(MapReader& w, WorkloadConfig& wl) {
  wl.channels_first = w.choice("memory_format", {"nhwc", "nchw"}, "nhwc") == "nchw";
  bool found = false;
  for (models::Layer& layer : wl.model.layers) {
    if (layer.kind != models::LayerKind::conv || !(layer.conv.channels > 0)) continue;
    layer.conv.channels_first = wl.channels_first;
    found = true;
  }
  if (!found && w.has("memory_format")) {
    w.fail("memory_format", "model '" + wl.model_name + "' has no convolution whose tensors it could lay out");
  }
}

WorkloadConfig read_workload(MapReader& w, const ClusterConfig& cluster) {
  WorkloadConfig wl;
  std::string attention = "auto";  // a transformer's attention core (resolve_attention)
  bool encoder = false;            // a zoo encoder (BERT, ViT): its attention core is a choice too
  models::EncoderOptions encoder_options;  // a zoo encoder's build options (BERT's mlm_positions, ...)
  std::string attention_key = w.path_of("model") + ".transformer.attention";
  const YAML::Node model = w.node("model");
  YAML::Node attention_at = model;
  if (model.IsMap()) {
    // A model defined in the scenario (model_yaml.hpp); its sequence length is part of it.
    MapReader definition(model, w.path_of("model"), w.source());
    models::DecoderConfig decoder;
    wl.model = read_model_definition(definition, &decoder, &attention);
    if (model["transformer"].IsMap() && model["transformer"]["attention"].IsDefined()) attention_at = model["transformer"]["attention"];
    if (decoder.layers > 0) wl.decoder = decoder;
    wl.model_name = wl.model.name;
    wl.user_model = true;
    if (w.has("sequence_length")) w.fail("sequence_length", "a model defined here sets its own sequence length (transformer.sequence_length or tokens_per_sample)");
    wl.sequence_length = wl.model.tokens_per_sample > 1 ? static_cast<int>(wl.model.tokens_per_sample) : 0;
  } else {
    const auto names = models::zoo_model_names();
    wl.model_name = w.choice("model", names);
    const bool sequence_model = models::zoo_model_has_sequence(wl.model_name);
    if (!sequence_model && w.has("sequence_length")) w.fail("sequence_length", "model '" + wl.model_name + "' takes no sequence length");
    // 0: the model's usual length; the model builder knows its maximum.
    const int sequence_length = sequence_model ? static_cast<int>(w.integer("sequence_length", 1, 1'048'576, 0)) : 0;
    try {
      wl.model = models::zoo_model(wl.model_name, sequence_length);
    } catch (const std::invalid_argument& e) {
      w.fail("sequence_length", e.what());
    }
    wl.sequence_length = sequence_model ? static_cast<int>(wl.model.tokens_per_sample) : 0;
    // BERT's masked-LM head on the masked positions only (zoo.hpp): max_predictions_per_seq.
    const bool bert = wl.model_name == "bert-base" || wl.model_name == "bert-large";
    if (w.has("mlm_positions") && !bert) w.fail("mlm_positions", "is BERT's masked-LM head setting; model '" + wl.model_name + "' has none");
    encoder_options.sequence_length = wl.sequence_length;
    if (bert && w.has("mlm_positions")) {
      encoder_options.mlm_positions = static_cast<int>(w.integer("mlm_positions", 1, wl.sequence_length, 0));
      wl.model = models::encoder_model(wl.model_name, encoder_options);
    }
    const auto decoders = models::decoder_model_names();
    if (std::find(decoders.begin(), decoders.end(), wl.model_name) != decoders.end()) wl.decoder = models::decoder_config(wl.model_name);
    encoder = models::zoo_model_is_encoder(wl.model_name);
    if (w.has("attention") && !wl.decoder && !encoder) {
      w.fail("attention", "chooses a transformer's attention core; model '" + wl.model_name + "' is not one");
    }
    attention = w.choice("attention", kAttentionChoices, "auto");
    attention_key = w.path_of("attention");
    if (w.node("attention").IsDefined()) attention_at = w.node("attention");
  }

  wl.precision_is_default = !w.has("precision");
  const std::string precision = w.choice("precision", kPrecisions, usual_precision(cluster.device));
  wl.precision = precision_of(precision);
  if (!cluster.device.supports(wl.precision)) {
    std::string supported;
    for (const auto& p : kPrecisions) {
      if (cluster.device.supports(precision_of(p))) supported += (supported.empty() ? "" : ", ") + p;
    }
    w.fail("precision", "accelerator " + cluster.device.name + " has no " + precision + " support; it supports: " + supported);
  }
  if (wl.decoder) resolve_attention(w, wl, cluster.device, attention, attention_key, attention_at);
  if (encoder) resolve_encoder_attention(w, wl, cluster.device, attention, attention_key, attention_at, encoder_options);
  read_kernel_fusion(w, wl, encoder ? &encoder_options : nullptr);
  read_vocabulary_padding(w, wl);
  read_memory_format(w, wl);
  wl.optimizer = *models::optimizer_from_string(w.choice("optimizer", models::optimizer_names(), "sgd-momentum"));
  read_batch(w, wl);
  read_work(w, wl);
  read_input(w, wl, cluster);

  MapReader dp(w.node("data_parallel"), w.path_of("data_parallel"), w.source(), true);
  wl.overlap = dp.boolean("overlap", true);
  wl.bucket_bytes = dp.quantity("bucket", Dimension::size, 1, 1e12, 25.0 * 1024 * 1024);
  wl.gradient_precision = precision_of(dp.choice("gradient_precision", {"fp32", "fp16", "bf16"}, "fp32"));
  dp.finish();
  MapReader plan(w.node("plan"), w.path_of("plan"), w.source(), true);
  wl.plan = read_plan(plan);
  read_evaluation_and_startup(w, wl);
  w.finish();
  return wl;
}

SweepConfig read_sweep(MapReader& s) {
  SweepConfig sweep;
  const YAML::Node nodes = s.node("nodes");
  if (nodes.IsDefined() && !nodes.IsNull()) {
    if (!nodes.IsSequence() || nodes.size() == 0) s.fail("nodes", "expected a non-empty list of node counts, e.g. [1, 2, 4, 8]");
    std::set<int> seen;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      const std::string path = s.path_of("nodes") + "[" + std::to_string(i) + "]";
      const int n = static_cast<int>(parse_integer(nodes[i], path, s.source(), 1, kMaxNodes));
      if (!seen.insert(n).second) throw ConfigError(s.source().locate(nodes[i], path), path, "node count " + std::to_string(n) + " appears twice");
      sweep.nodes.push_back(n);
    }
  }
  const YAML::Node plans = s.node("plan");
  if (plans.IsDefined() && !plans.IsNull()) {
    if (!plans.IsSequence() || plans.size() == 0) {
      s.fail("plan", "expected a non-empty list of plans, e.g. [{tensor: 1}, {tensor: 8}] (each as workload.plan)");
    }
    for (std::size_t i = 0; i < plans.size(); ++i) {
      MapReader p(plans[i], s.path_of("plan") + "[" + std::to_string(i) + "]", s.source(), true);
      sweep.plans.push_back(read_plan(p));
    }
  }
  s.finish();
  return sweep;
}

OutputConfig read_output(MapReader& o) {
  OutputConfig out;
  out.results = o.optional_text("results").value_or("");
  out.csv = o.optional_text("csv").value_or("");
  out.trace = o.optional_text("trace").value_or("");
  out.jobs_csv = o.optional_text("jobs_csv").value_or("");
  for (const auto& [key, path] : {std::pair{"results", out.results}, std::pair{"csv", out.csv}, std::pair{"trace", out.trace}}) {
    if (o.has(key) && path.empty()) o.fail(key, "expected a file path");
  }
  // Refused before running: a folder, FIFO or device given as an output file (atomic_file.hpp).
  // "-" is standard output, for one output at a time; a trace is one file per configuration.
  int to_standard_output = 0;
  for (const auto& [key, path] : {std::pair{"results", out.results}, std::pair{"csv", out.csv}, std::pair{"trace", out.trace},
                                  std::pair{"jobs_csv", out.jobs_csv}}) {
    if (const std::string why = path.empty() ? "" : unwritable_reason(path); !why.empty()) o.fail(key, why);
    if (!is_standard_output(path)) continue;
    if (std::string(key) == "trace") o.fail(key, "'-' (standard output) is not for traces: a trace is written per configuration; give a file path");
    if (++to_standard_output > 1) o.fail(key, "only one output can go to standard output ('-')");
  }
  const auto same_file = [](const std::string& a, const std::string& b) {
    if (is_standard_output(a) || is_standard_output(b)) return false;
    return std::filesystem::absolute(a).lexically_normal() == std::filesystem::absolute(b).lexically_normal();
  };
  if (!out.results.empty() && !out.csv.empty() && same_file(out.results, out.csv)) {
    o.fail("csv", "the CSV file must differ from the results file");
  }
  for (const auto& [key, other] : {std::pair{"results", out.results}, std::pair{"csv", out.csv}}) {
    if (!out.trace.empty() && !other.empty() && same_file(out.trace, other)) {
      o.fail("trace", std::string("the trace file must differ from the ") + key + " file");
    }
  }
  o.finish();
  return out;
}

// Finds the points the job cannot run: a batch that does not split (an error: the batch is the
// user's), a plan that does not fit the model or the accelerator count, or a rank whose memory
// exceeds the accelerator's. Each is blamed on the key that decides it (the plan field, or the
// batch). With several points the plan failures become Scenario::infeasible (rows with their
// reason); when every point fails, the first one's located error is thrown, unless
// `keep_infeasible` (a variant of `dlsim sweep`, which reports it as rows).
void check_feasible(Scenario& s, const YAML::Node& root, const Source& source, bool keep_infeasible) {
  const std::string batch_key = s.workload.batch_mode == BatchMode::global ? "global" : "per_device";
  // The plan's YAML: workload.plan, or sweep.plan[i].
  const auto plan_node = [&](int index) -> std::pair<YAML::Node, std::string> {
    if (!s.sweep.plans.empty()) return {root["sweep"]["plan"][index], "sweep.plan[" + std::to_string(index) + "]"};
    return {root["workload"]["plan"], "workload.plan"};
  };
  // The located error of a plan_for / validate_plan message; `batch` tells a batch error.
  const auto error_at = [&](const std::string& message, int index, bool& batch) {
    // Messages name their field: "plan.<field>: why" or "batch: why".
    std::string field = message.substr(0, message.find(':'));
    std::string why = message.substr(std::min(message.size(), field.size() + 2));
    std::string path = "workload.batch." + batch_key;
    YAML::Node at = root["workload"]["batch"][batch_key];
    batch = field == "batch";
    if (field.rfind("plan.", 0) == 0) {
      const auto [plan, plan_path] = plan_node(index);
      // The deepest key of the field's path ("zero.reduce_bucket_size") that the YAML has.
      YAML::Node deepest = plan;
      std::string deepest_path = plan_path, rest = field.substr(5);
      while (!rest.empty() && deepest.IsMap()) {
        const std::string key = rest.substr(0, rest.find('.'));
        const YAML::Node child = static_cast<const YAML::Node&>(deepest)[key];
        if (!child.IsDefined()) break;
        deepest.reset(child);
        deepest_path += "." + key;
        rest = rest.size() > key.size() ? rest.substr(key.size() + 1) : "";
      }
      if (deepest_path != plan_path) {
        path = deepest_path;
        at = deepest;
      } else if (plan.IsMap() && plan.size() > 0) {
        path = plan_path;
        at = plan;
      } else {
        path = "workload";
        at = root["workload"];
      }
    } else if (field != "batch") {
      why = message;
    }
    return ConfigError(source.locate(at, path), path, why);
  };
  const auto& wl = s.workload;
  const int plan_count = static_cast<int>(s.plans().size());
  std::vector<InfeasiblePoint> infeasible;
  const auto record = [&](int nodes, int index, const std::string& label, const ConfigError& e) {
    infeasible.push_back({nodes, index, label, e.where(), e.key_path(), e.message()});
  };
  for (int nodes : s.node_counts()) {
    for (int index = 0; index < plan_count; ++index) {
      const int accelerators = nodes * s.cluster.instance.accelerators_per_node;
      const std::string where = " (" + std::to_string(nodes) + " nodes, " + std::to_string(accelerators) + " accelerators)";
      models::ParallelPlan plan;
      std::string label;
      try {
        plan = s.plan_for(nodes, index);
        label = describe_plan(plan);
        models::validate_plan(plan, wl.model, accelerators);
      } catch (const std::invalid_argument& e) {
        bool batch = false;
        const ConfigError error = error_at(e.what() + where, index, batch);
        if (batch) throw error;  // the batch is the user's choice, not a point of the search
        record(nodes, index, label, error);
        continue;
      }
      const models::MemoryBreakdown mem = models::peak_memory(wl.model, plan);
      if (mem.total() > s.cluster.device.memory_bytes) {
        // Blame the plan when there is one, else the batch (what the user would change).
        const auto [pn, plan_path] = plan_node(index);
        const bool has_plan = pn.IsMap() && pn.size() > 0;
        const std::string path = has_plan ? plan_path : "workload.batch." + batch_key;
        const YAML::Node at = has_plan ? pn : root["workload"]["batch"][batch_key];
        record(nodes, index, label,
               ConfigError(source.locate(at, path), path,
                           "model " + wl.model_name + " with plan " + label + where + " does not fit in " + s.cluster.device.name +
                               " memory: " + models::describe(mem) + ", has " + format_size(s.cluster.device.memory_bytes) +
                               fit_advice(wl.model, plan, s.cluster.device.memory_bytes)));
      }
    }
  }
  const std::size_t points = s.node_counts().size() * static_cast<std::size_t>(plan_count);
  if (!keep_infeasible && !infeasible.empty() && infeasible.size() == points) throw infeasible.front().error();
  s.infeasible = std::move(infeasible);
}

// Every evaluated node count must give a buildable fabric (torus shape, fat-tree size, regions);
// a custom topology must hold the cluster: its node count and accelerators per node.
void check_fabric(const Scenario& s, const YAML::Node& root, const Source& source) {
  const std::string key = s.network.custom ? "custom" : "fabric";
  const YAML::Node at = root["network"][key];
  const auto fail = [&](const std::string& why) {
    throw ConfigError(source.locate(at.IsDefined() ? at : root, "network." + key), "network." + key, why);
  };
  for (int nodes : s.node_counts()) {
    network::Topology topology;
    try {
      topology = s.topology_for(nodes);
    } catch (const std::invalid_argument& e) {
      fail("cannot build the fabric for " + std::to_string(nodes) + " nodes: " + e.what());
    }
    if (!s.network.custom) continue;
    const int per_node = s.cluster.instance.accelerators_per_node;
    if (topology.nodes() != nodes) {
      fail("the custom topology has accelerators on " + std::to_string(topology.nodes()) + " nodes but the cluster has " +
           std::to_string(nodes) + " (cluster.nodes; a custom topology cannot be swept over nodes)");
    }
    std::vector<int> count(static_cast<std::size_t>(nodes), 0);
    for (auto v : topology.accelerators()) ++count[static_cast<std::size_t>(topology.vertex(v).node)];
    for (int n = 0; n < nodes; ++n) {
      if (count[static_cast<std::size_t>(n)] != per_node) {
        fail("node " + std::to_string(n) + " of the custom topology has " + std::to_string(count[static_cast<std::size_t>(n)]) +
             " accelerators; the instance type has " + std::to_string(per_node) + " per node");
      }
    }
  }
}

// The top-level plan: section (plan_search_yaml.hpp): a training workload whose plan the
// planner chooses, so without workload.plan and without a sweep.
void read_plan_section(MapReader& top, const YAML::Node& root, const models::Catalog& catalog, const std::string& base_dir,
                       Scenario& s) {
  MapReader plan(top.node("plan"), "plan", top.source());
  if (s.collective) top.fail("plan", "a plan search needs a training workload, not a collective sweep");
  const YAML::Node& const_root = root;  // const access: operator[] must not add keys
  const YAML::Node workload = const_root["workload"];
  const YAML::Node& const_workload = workload;
  // (Reading the workload leaves an absent plan as an empty mapping: that is no plan.)
  const YAML::Node written_plan = const_workload["plan"];
  if (written_plan.IsDefined() && !written_plan.IsNull() && !(written_plan.IsMap() && written_plan.size() == 0)) {
    throw ConfigError(top.source().locate(const_workload["plan"], "workload.plan"), "workload.plan",
                      "the plan: section searches the parallel plan; remove workload.plan (or the plan: section to run this plan)");
  }
  if (s.workload.batch_mode != BatchMode::global) {
    throw ConfigError(top.source().locate(const_workload["batch"], "workload.batch"), "workload.batch",
                      "a plan search keeps the global batch fixed: give workload.batch.global");
  }
  const YAML::Node sweep = const_root["sweep"];
  if (!s.sweep.nodes.empty() || !s.sweep.plans.empty() || !s.sweep.variants.empty()) {
    throw ConfigError(top.source().locate(sweep, "sweep"), "sweep",
                      "a plan scenario sweeps with plan.instances and plan.nodes, not a sweep: section");
  }
  s.search = read_plan_search(plan, catalog, s.cluster, base_dir);
}

// The optional validation: section (validation_yaml.hpp).
ValidationSpec read_validation_section(MapReader& top, const Source& source) {
  if (!top.has("validation")) return {};
  MapReader validation(top.node("validation"), "validation", source);
  return read_validation(validation);
}

Scenario read_scenario(const YAML::Node& root, const std::function<YAML::Node()>& fresh_root, const Source& source,
                       const std::string& base_dir, const LoadOptions& options) {
  MapReader top(root, "", source);
  Scenario s;
  s.source = source.file;
  s.seed = static_cast<std::uint64_t>(top.integer("seed", 0, std::numeric_limits<std::int64_t>::max(), 1));
  s.sweep.variants = read_variant_sweep(root["sweep"], source, s.seed);
  if (top.has("pools")) {
    // A cluster scenario: many jobs on node pools (cluster_yaml.hpp).
    s.cluster_sim = read_cluster_scenario(root, fresh_root, source, base_dir, s.seed);
    top.allow({"pools", "jobs", "trace", "scheduler", "sweep", "variants", "catalog", "billing", "wan", "fabric"});
    MapReader output(top.node("output"), "output", source, true);
    s.output = read_output(output);
    s.validation = read_validation_section(top, source);
    if (!s.output.trace.empty()) output.fail("trace", "cluster scenarios have no iteration trace (use a training scenario)");
    top.finish();
    s.input_yaml = YAML::Dump(root);
    return s;
  }

  models::Catalog catalog = builtin_catalog();
  if (auto file = top.optional_text("catalog")) {
    const std::filesystem::path p = std::filesystem::path(*file).is_absolute() ? std::filesystem::path(*file)
                                                                              : std::filesystem::path(base_dir) / *file;
    load_catalog_file(p.string(), source, "catalog", top.node("catalog"), catalog);
  }
  if (!top.has("cluster")) top.fail_missing("cluster", "the machines: instance type and node count");
  MapReader cluster(top.node("cluster"), "cluster", source);
  s.cluster = read_cluster(cluster, catalog, base_dir);
  MapReader network(top.node("network"), "network", source, true);
  s.network = read_network(network, s.cluster);
  if (top.has("serving")) {
    // A serving scenario: replicas of an LLM answering a request stream (serving_yaml.hpp).
    for (const char* other : {"workload", "collective", "plan"}) {
      if (top.has(other)) top.fail(other, "a serving scenario has no '" + std::string(other) + "' section (its model is serving.model)");
    }
    // Variants only (sweep.grid / zip / random, read above): `dlsim sweep` runs each.
    MapReader sweep(top.node("sweep"), "sweep", source, true);
    sweep.allow({"grid", "zip", "random"});
    sweep.finish();
    MapReader serving(top.node("serving"), "serving", source);
    s.serving = read_serving(serving, s.cluster, base_dir);
    if (const ServingProblem problem = serving_problem(*s.serving, s.cluster); !problem.why.empty()) serving.fail(problem.key, problem.why);
    MapReader output(top.node("output"), "output", source, true);
    if (output.has("jobs_csv")) output.fail("jobs_csv", "serving runs write output.results, output.csv (a row per request) and output.trace; no jobs_csv");
    s.output = read_output(output);
    s.validation = read_validation_section(top, source);
    top.finish();
    s.input_yaml = YAML::Dump(root);
    return s;
  }
  // A scenario is a training job or a collective sweep.
  if (top.has("workload") && top.has("collective")) {
    top.fail("collective", "a scenario has either a training 'workload' or a 'collective' sweep, not both");
  }
  if (top.has("collective")) {
    MapReader collective(top.node("collective"), "collective", source);
    s.collective = read_collective(collective);
    top.allow({"workload"});
  } else {
    if (!top.has("workload")) top.fail_missing("workload", "the training job: model, batch, data (or 'collective' for a collective sweep)");
    MapReader workload(top.node("workload"), "workload", source);
    s.workload = read_workload(workload, s.cluster);
    if (const YAML::Node jobs_csv = child(child(root, "output"), "jobs_csv"); jobs_csv.IsDefined()) {
      throw ConfigError(source.locate(jobs_csv, "output.jobs_csv"), "output.jobs_csv",
                        "only cluster scenarios (with pools:) have a jobs table");
    }
    top.allow({"collective"});
  }
  MapReader sweep(top.node("sweep"), "sweep", source, true);
  sweep.allow({"grid", "zip", "random"});  // read above (sweep_spec.hpp)
  VariantSweep variants = std::move(s.sweep.variants);
  s.sweep = read_sweep(sweep);
  s.sweep.variants = std::move(variants);
  MapReader output(top.node("output"), "output", source, true);
  s.output = read_output(output);
  s.validation = read_validation_section(top, source);
  if (top.has("plan")) read_plan_section(top, root, catalog, base_dir, s);
  top.finish();
  if (s.search) {
    // The planner checks each candidate (experiment/planner.hpp); the fabric of each size is built there.
    if (s.workload.input.loader != models::Loader::none) {
      throw ConfigError(source.locate(root["workload"]["input"], "workload.input"), "workload.input",
                        "a plan search compares instance types with other vCPUs: the input pipeline is not searched yet "
                        "(run the chosen plan as a training scenario with workload.input)");
    }
    if (s.workload.evaluation.samples > 0) {
      throw ConfigError(source.locate(root["workload"]["evaluation"]["samples"], "workload.evaluation.samples"), "workload.evaluation.samples",
                        "a plan search tries tensor and pipeline splits, where a forward pass is not timed: give the pass's 'time'");
    }
  } else {
    check_fabric(s, root, source);
  }
  if (s.collective) {
    check_collective(s, root, source);
  } else if (!s.search) {
    check_feasible(s, root, source, options.keep_infeasible);
  }
  s.input_yaml = YAML::Dump(root);
  return s;
}

}  // namespace

std::string Scenario::kind() const {
  return cluster_sim ? "cluster" : collective ? "collective" : search ? "plan" : serving ? "serving" : "training";
}

const InfeasiblePoint* Scenario::infeasible_at(int nodes, int plan_index) const {
  for (const InfeasiblePoint& p : infeasible) {
    if (p.nodes == nodes && p.plan_index == plan_index) return &p;
  }
  return nullptr;
}

std::vector<int> Scenario::node_counts() const {
  return sweep.nodes.empty() ? std::vector<int>{cluster.nodes} : sweep.nodes;
}

network::Topology Scenario::topology_for(int nodes) const {
  if (network.custom) return network::build_custom(network.custom_vertices, network.custom_links);
  return network::build_cluster(network.node, fabric_for(nodes));
}

network::FabricSpec Scenario::fabric_for(int nodes) const {
  network::FabricSpec f = network.fabric;
  f.nodes = nodes;
  if (f.kind == network::FabricKind::torus) shape_torus(f, network, nodes, cluster.instance.accelerators_per_node);
  return f;
}

Scenario load_scenario_text(const std::string& text, const std::string& name,
                            const std::vector<std::string>& set_arguments, const std::string& base_dir,
                            const LoadOptions& options) {
  Source source{name, {}};
  for (const auto& a : set_arguments) source.overrides.push_back(parse_set_argument(a));
  YAML::Node root;
  try {
    // A second document would be silently ignored by YAML::Load: a scenario is one document.
    root = load_one_document(text, name);
  } catch (const YAML::Exception& e) {
    throw ConfigError({name, e.mark.line + 1, e.mark.column + 1}, "", "invalid YAML: " + e.msg);
  }
  if (!root.IsDefined() || root.IsNull()) {
    if (source.overrides.empty()) throw ConfigError({name, 1, 1}, "", "the scenario is empty");
    root = YAML::Node(YAML::NodeType::Map);
  }
  if (!root.IsMap()) throw ConfigError(source.locate(root, ""), "", "a scenario is a mapping with keys cluster, workload, ...");
  for (const Override& o : source.overrides) apply_override(root, o);
  // Cluster scenarios read each variant from its own fresh parse (line numbers kept).
  const auto fresh_root = [&text, &source]() {
    YAML::Node fresh = YAML::Load(text);
    if (!fresh.IsDefined() || fresh.IsNull()) fresh = YAML::Node(YAML::NodeType::Map);
    for (const Override& o : source.overrides) apply_override(fresh, o);
    return fresh;
  };
  try {
    return read_scenario(root, fresh_root, source, base_dir, options);
  } catch (const YAML::Exception& e) {
    // A yaml-cpp failure the schema did not check first (every reader should use yaml_reader.hpp's
    // checked access): still a located error about the input, never an internal one.
    throw ConfigError({name, e.mark.is_null() ? 0 : e.mark.line + 1, e.mark.is_null() ? 0 : e.mark.column + 1}, "",
                      "a value has the wrong shape here (a list or mapping where a single value belongs, or the reverse)");
  }
}

Scenario load_scenario(const std::string& path, const std::vector<std::string>& set_arguments, const LoadOptions& options) {
  std::ifstream in(path);
  if (!in) throw ConfigError({path, 0, 0}, "", "cannot read the scenario file (missing or unreadable)");
  std::stringstream text;
  text << in.rdbuf();
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return load_scenario_text(text.str(), path, set_arguments, dir.empty() ? "." : dir, options);
}

}  // namespace dlsim::experiment
