// Scenario: one validated, fully resolved scenario, as experiment::load_scenario makes it from
// YAML. Catalog names are resolved to specs, units to SI (bytes, bytes/s, seconds, USD/h).
// Immutable description: nothing here changes during a run.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "experiment/cluster_scenario.hpp"
#include "experiment/config_error.hpp"
#include "experiment/serving_config.hpp"
#include "experiment/sweep_axis.hpp"
#include "experiment/validation.hpp"
#include "models/parallel_plan.hpp"
#include "models/device.hpp"
#include "models/instance_type.hpp"
#include "models/model_graph.hpp"
#include "models/input_pipeline.hpp"
#include "models/storage.hpp"
#include "models/dataset_preparation.hpp"
#include "models/precision.hpp"
#include "models/zoo.hpp"
#include "network/collectives.hpp"
#include "network/topology_builders.hpp"

namespace dlsim::experiment {

struct ClusterConfig {
  std::string instance_name;      // catalog name, or "inline"
  models::InstanceType instance;  // resolved (price override applied)
  models::DeviceSpec device;
  models::DeviceProfile profile;
  int nodes = 1;
  std::string profile_path;       // cluster.profile resolved against the scenario's folder, or ""
  std::string profile_note;       // how the profile applies ("measured on ...", "transferred ..."), or ""
  // What the prediction for this device leaves out, so that it is a bound rather than an
  // estimate (AMD's MI300X: RCCL not modelled), or "": printed with the results and kept in the
  // resolved scenario (HDF5, Python) as cluster.note.
  std::string accuracy_note;
};

// The fabric: one node design (from the instance type unless overridden) and how nodes connect.
// fabric.nodes is set per evaluated node count; torus dims are derived when not given.
struct NetworkConfig {
  network::NodeSpec node;
  network::FabricSpec fabric;
  // A topology written out in full (network.custom): used instead of node x fabric.
  bool custom = false;
  std::vector<network::CustomVertex> custom_vertices;
  std::vector<network::CustomLink> custom_links;
  bool torus_dims_given = false;
  network::IciGeneration ici = network::IciGeneration::none;  // the instance's TPU ICI, or none
  network::Algorithm all_reduce = network::Algorithm::automatic;
};

enum class BatchMode { per_device, global };

// workload.plan as written; sizes left at 0 are derived per node count (Scenario::plan_for).
struct PlanConfig {
  int data = 0;                   // 0: accelerators / (tensor x pipeline x context)
  int tensor = 1;
  int pipeline = 1;
  int expert = 1;
  int context = 1;                // context-parallel ranks per sequence (ring attention)
  bool sequence_parallel = false;
  models::PipelineSchedule schedule = models::PipelineSchedule::one_f_one_b;
  int virtual_stages = 1;
  int micro_batch_size = 0;       // 0: derived from the batch and micro_batches
  int micro_batches = 0;          // 0: derived from the batch and micro_batch_size
  int zero_stage = 0;
  models::Recompute recompute = models::Recompute::none;
  int recompute_layers = 0;       // full recomputation of the first N blocks per stage only (0: all)
  std::array<models::Axis, 4> order{models::Axis::tensor, models::Axis::context, models::Axis::pipeline, models::Axis::data};
  bool scatter_gather = true;
  bool overlap_p2p = false;       // Megatron-Core --overlap-p2p-communication (pipeline sends beside compute)
  bool tp_comm_overlap = false;   // Megatron-Core --tp-comm-overlap (needs sequence_parallel)
  bool overlap_param_gather = false;  // Megatron-Core --overlap-param-gather (needs zero_stage 1 or 2)
  models::ZeroConfig zero;        // plan.zero (zero_stage 3 only)
  models::ActivationCheckpointing checkpointing;  // plan.activation_checkpointing
  // How the layers split over pipeline stages (models::ParallelPlan, stage_blocks()).
  std::vector<int> stage_layers;
  int first_stage_layers = 0;
  int last_stage_layers = 0;
  bool account_for_embedding = false;
  bool account_for_loss = false;
  models::GradientCompression compression;        // plan.gradient_compression
  // plan.parameter_server as written: enabled, servers, placement, synchronous, staleness; the
  // bandwidths below are 0 where the scenario leaves them to the instance type (plan_for).
  models::ParameterServerConfig parameter_server;
  double server_price_per_hour = 0;  // plan.parameter_server.server_price: per dedicated server node (USD/h)
};

// workload.evaluation: a forward pass over a validation set every `every_epochs` epochs, the
// training paused meanwhile (as torchvision's and NVIDIA's ImageNet recipes do after each epoch).
// Its time is given (time_s) or follows from `samples` run through the model's forward pass on
// every accelerator, beside the input pipeline.
struct EvaluationConfig {
  int every_epochs = 0;           // 0: no evaluation
  double samples = 0;             // validation samples (> 0), or
  double time_s = 0;              // a pass's time as measured (> 0)
};

struct WorkloadConfig {
  std::string model_name;         // zoo name, or the name of a model defined in the scenario
  models::InputPipeline input;    // workload.input: the data loader (none: samples cost no host time)
  EvaluationConfig evaluation;    // workload.evaluation
  models::DatasetStorage storage; // workload.input.storage: where the dataset is read from (absent: free)
  models::DatasetPreparation preparation;  // workload.input.preparation: a one-off CPU job before training
  models::DatasetTransfer transfer;        // workload.input.transfer: the dataset moved before training
  double dataset_bytes = 0;       // workload.input.bytes, or samples x storage.sample_bytes (0: not known)
  double startup_s = 0;           // workload.startup: before the first step (container, framework, warm-up)
  bool user_model = false;        // workload.model was a definition, not a zoo name
  int sequence_length = 0;        // 0 for models without sequences
  models::ModelGraph model;
  // The decoder-only transformer's sizes when the model is one (a zoo decoder or a transformer
  // definition): Megatron-style FLOP counts need layers, hidden and vocabulary.
  std::optional<models::DecoderConfig> decoder;
  models::Precision precision = models::Precision::fp32;
  bool precision_is_default = false;  // not given: the device's usual training precision
  models::Precision gradient_precision = models::Precision::fp32;
  models::Optimizer optimizer = models::Optimizer::sgd_momentum;
  BatchMode batch_mode = BatchMode::per_device;
  int batch = 1;                  // per device or global, by batch_mode
  double dataset_samples = 0;     // 0 when the work is given in iterations only
  double epochs = 0;              // > 0 with dataset_samples
  std::int64_t iterations = 0;    // > 0 when the work is given in iterations
  double tokens = 0;              // > 0 when the work is given in tokens (language models)
  bool overlap = true;
  double bucket_bytes = 25.0 * 1024 * 1024;
  // workload.pad_vocabulary: the framework pads the vocabulary projection's width (Megatron-LM,
  // NeMo, DeepLearningExamples); false: its width is the model's own (Hugging Face), and a width
  // that is not a multiple of 16 bytes pays Hopper's alignment slowdown (models/gemm_model.hpp).
  bool pad_vocabulary = true;
  // workload.memory_format: nhwc (default: channels last, as DeepLearningExamples' AMP recipes,
  // MLPerf and TensorFlow's layout optimizer run convolutions) or nchw (PyTorch's default layout):
  // with tensor-core math cuDNN then transposes each convolution's tensors (models/layer_kernels.cpp).
  bool channels_first = false;
  // workload.fused_kernels: a decoder transformer's bias-GeLU, bias-dropout-add and
  // scale-mask-softmax fused as Megatron-LM runs them (default), or each a kernel of its own; an
  // encoder's (BERT, ViT) scale-mask-softmax and dropout-add likewise.
  bool fused_kernels = true;
  // workload.fused_cross_entropy: the loss as one fused kernel (default), or Megatron-LM's
  // vocabulary-parallel cross-entropy in separate kernels.
  bool fused_cross_entropy = true;
  PlanConfig plan;
};

// A plan with the workload's numerics set (precision, gradient precision, optimizer, gradient
// reduction overlap and bucket), the parts of a ParallelPlan the plan: keys do not decide.
models::ParallelPlan plan_with_numerics(const WorkloadConfig& workload);

// A collective sweep instead of a training job: the operation over message sizes, by one group
// of ranks or by several at once (to measure contention).
struct CollectiveConfig {
  network::CollectiveKind operation = network::CollectiveKind::all_reduce;
  network::Algorithm algorithm = network::Algorithm::automatic;
  network::Protocol protocol = network::Protocol::automatic;
  std::vector<double> sizes;      // bytes per rank (nccl-tests convention)
  int ranks_per_node = 0;         // the first k accelerators of every node take part (0: all)
  int groups = 1;                 // groups running the collective at the same time
  bool interleaved = false;       // node n in group n % groups (else consecutive blocks)
  int server_shards = 1;          // push-pull
};

struct SweepConfig {
  std::vector<int> nodes;         // empty: just cluster.nodes
  std::vector<PlanConfig> plans;  // empty: just workload.plan; else every plan at every node count
  VariantSweep variants;          // sweep.grid / zip / random: what `dlsim sweep` runs (any kind of scenario)
};

// Spot capacity in a plan search (plan.spot): each spot candidate's training run is simulated in
// the cluster model (scheduler/cluster_simulation.hpp) `replications` times, one seed each: its
// nodes reclaimed at `reclaim` (per node), replaced after `provisioning`, the job checkpointing
// by `checkpoint` (Young/Daly's interval by default) and restarting from the last one.
struct PlanSpotConfig {
  double discount = -1;               // off the on-demand price, in [0, 1); < 0: the catalog's spot price
  scheduler::Hazard reclaim;          // per node
  double notice_s = -1;               // < 0: the provider's (AWS 120 s; GCP and Azure 30 s)
  double provisioning_s = 300;        // mean delay of a replacement node (exponential)
  int replications = 8;               // cluster-model runs per candidate
  // Policy young-daly unless given; size 0: the model's weights and optimizer state
  // (plan_spot.hpp, checkpoint_bytes).
  scheduler::CheckpointSpec checkpoint;
};

// The plan: section: `dlsim plan` searches instance type x node count x parallel plan x capacity
// for the workload under these constraints (experiment/planner.hpp).
enum class PlanObjective { cheapest, fastest };
struct PlanSearchConfig {
  // Capacity types searched (plan.capacity): on-demand (failure-free, at the catalog price) and
  // spot (plan.spot). Never empty.
  std::vector<scheduler::Capacity> capacities{scheduler::Capacity::on_demand};
  std::optional<PlanSpotConfig> spot;  // when capacities has spot
  double deadline_s = 0;               // time to train at most this (0: no deadline)
  double budget_usd = 0;               // cost to train at most this (0: no budget)
  int max_accelerators = 0;            // 0: no limit
  std::vector<std::string> instances;  // catalog names (cluster.instance when not given)
  std::vector<int> nodes;              // node counts to try (cluster.nodes when not given)
  PlanObjective objective = PlanObjective::cheapest;
};

struct OutputConfig {
  std::string results;            // HDF5 path ("" = none)
  std::string csv;                // CSV path ("" = none)
  std::string trace;              // Chrome/Perfetto trace of one iteration ("" = none)
  std::string jobs_csv;           // cluster scenarios: per-job results of every variant ("" = none)
  // Whether one of them is "-", standard output (atomic_file.hpp): the command's own report then
  // goes to standard error.
  bool to_standard_output() const { return results == "-" || csv == "-" || jobs_csv == "-"; }
};

// A point of a training scenario (node count, plan) that cannot run: its plan does not split the
// model over the accelerators or does not fit in memory. With several points, such a point is a
// result row with its reason instead of an error (a sweep is not aborted by one bad point); the
// located error is kept for when every point is infeasible.
struct InfeasiblePoint {
  int nodes = 0;
  int plan_index = 0;
  std::string plan;               // describe_plan(), or "" when the plan could not be derived
  SourceLocation where;
  std::string key_path;
  std::string reason;
  ConfigError error() const { return ConfigError(where, key_path, reason); }
};

struct Scenario {
  std::string source;             // file the scenario came from
  std::uint64_t seed = 1;
  ClusterConfig cluster;
  NetworkConfig network;
  WorkloadConfig workload;         // training scenarios
  std::optional<CollectiveConfig> collective;  // collective scenarios (then no workload)
  std::optional<ClusterScenario> cluster_sim;  // cluster scenarios (top-level pools:; then no workload)
  std::optional<PlanSearchConfig> search;      // plan scenarios (top-level plan:; a training workload without a plan)
  std::optional<ServingConfig> serving;        // serving scenarios (top-level serving:; then no workload)
  SweepConfig sweep;
  OutputConfig output;
  ValidationSpec validation;      // published figures the scenario reproduces (empty: none)
  std::string input_yaml;         // the scenario text after --set overrides, re-emitted
  std::vector<InfeasiblePoint> infeasible;  // training scenarios: points that become rows with their reason

  // The infeasible point at (nodes, plan_index), or nullptr.
  const InfeasiblePoint* infeasible_at(int nodes, int plan_index) const;

  // "cluster" (pools of jobs), "collective", "plan" (a plan search), "serving" or "training".
  std::string kind() const;
  // The node counts to evaluate: the sweep, or the cluster's own count.
  std::vector<int> node_counts() const;
  // The parallel plan of the training job at a node count: sizes and micro-batches derived from
  // the batch where the scenario leaves them out. Throws std::invalid_argument (message starting
  // "plan.<field>:" or "batch:") when they cannot be derived; validate with models::validate_plan.
  models::ParallelPlan plan_for(int nodes, int plan_index = 0) const;
  // The plans to evaluate at every node count: the sweep's, or workload.plan.
  std::vector<PlanConfig> plans() const;
  // The fabric spec for a node count (torus dims derived when not given).
  network::FabricSpec fabric_for(int nodes) const;
  // The topology a node count runs on: node x fabric, or the custom topology.
  network::Topology topology_for(int nodes) const;
  // The accelerators of each collective group at a node count, in rank order.
  std::vector<std::vector<network::VertexId>> collective_groups(const network::Topology& topology, int nodes) const;
};

}  // namespace dlsim::experiment
