#include "models/data_parallel_step.hpp"

#include <deque>
#include <stdexcept>
#include <vector>

#include "models/roofline.hpp"
#include "network/flow_network.hpp"
#include "network/routing.hpp"
#include "sim/engine.hpp"

namespace dlsim::models {

double optimizer_bytes_per_parameter(Optimizer optimizer) {
  return optimizer == Optimizer::adam ? 28.0 : 20.0;
}

namespace {

void validate(const DataParallelConfig& c) {
  if (c.model == nullptr || c.model->layers.empty()) throw std::invalid_argument("data-parallel step: no model");
  if (c.per_device_batch < 1) throw std::invalid_argument("data-parallel step: per-device batch must be >= 1");
  if (c.nodes < 1 || c.accelerators_per_node < 1) throw std::invalid_argument("data-parallel step: no accelerators");
  if (!(c.bucket_bytes > 0)) throw std::invalid_argument("data-parallel step: bucket size must be > 0");
  if (c.topology == nullptr) throw std::invalid_argument("data-parallel step: no fabric topology");
  if (c.topology->accelerators().size() < static_cast<std::size_t>(c.nodes) * c.accelerators_per_node) {
    throw std::invalid_argument("data-parallel step: the fabric has fewer accelerators than the job");
  }
}

// One rank's iteration as events: a compute stream (forward, then backward layer by layer)
// and a communication stream that all-reduces gradient buckets in the order they fill.
class StepReplay {
 public:
  explicit StepReplay(const DataParallelConfig& c)
      : config_(c),
        routing_(*c.topology),
        flows_(engine_, *c.topology),
        collectives_(engine_, flows_, routing_, *c.topology) {
    const auto& accelerators = c.topology->accelerators();
    ranks_.assign(accelerators.begin(), accelerators.begin() + c.nodes * c.accelerators_per_node);
    const auto& layers = c.model->layers;
    times_.reserve(layers.size());
    for (const Layer& layer : layers) {
      times_.push_back(layer_time(layer, c.per_device_batch, c.precision, c.device, c.profile));
    }
  }

  StepBreakdown run() {
    for (const LayerTime& t : times_) result_.forward_s += t.forward_s;
    next_backward_ = static_cast<int>(times_.size()) - 1;
    engine_.schedule_in(sim::Time::from_seconds(result_.forward_s), [this] { backward_next(); });
    engine_.run();
    result_.ranks = static_cast<int>(ranks_.size());
    result_.iteration_s = engine_.now().seconds();
    result_.exposed_comm_s = std::max(
        0.0, result_.iteration_s - result_.forward_s - result_.backward_s - result_.optimizer_s);
    result_.samples_per_s = config_.per_device_batch * double(result_.ranks) / result_.iteration_s;
    return result_;
  }

 private:
  // Called when the layer after next_backward_ has finished its backward pass (or forward ends).
  void backward_next() {
    if (next_backward_ < 0) {
      backward_done_ = true;
      close_bucket();
      try_start_allreduce();
      maybe_finish();
      return;
    }
    const double duration = times_[next_backward_].backward_s;
    result_.backward_s += duration;
    engine_.schedule_in(sim::Time::from_seconds(duration), [this, index = next_backward_] {
      gradients_ready(index);
    });
    --next_backward_;
  }

  void gradients_ready(int layer_index) {
    const double params = config_.model->layers[layer_index].parameters;
    open_bucket_bytes_ += params * bytes_per_element(config_.gradient_precision);
    if (open_bucket_bytes_ >= config_.bucket_bytes) close_bucket();
    try_start_allreduce();
    backward_next();
  }

  void close_bucket() {
    if (open_bucket_bytes_ <= 0) return;
    ready_buckets_.push_back(open_bucket_bytes_);
    open_bucket_bytes_ = 0;
    ++result_.buckets;
  }

  // One bucket at a time on the communication stream, in the order the buckets filled.
  void try_start_allreduce() {
    if (comm_busy_ || ready_buckets_.empty()) return;
    if (!config_.overlap && !backward_done_) return;
    network::CollectiveSpec spec;
    spec.kind = network::CollectiveKind::all_reduce;
    spec.algorithm = config_.all_reduce;
    spec.bytes = ready_buckets_.front();
    spec.ranks = ranks_;
    ready_buckets_.pop_front();
    comm_started_ = engine_.now();
    comm_busy_ = true;
    collectives_.start(spec, [this](const network::CollectiveResult& r) {
      comm_busy_ = false;
      result_.all_reduce = r.algorithm;
      result_.allreduce_busy_s += (engine_.now() - comm_started_).seconds();
      try_start_allreduce();
      maybe_finish();
    });
  }

  void maybe_finish() {
    if (!backward_done_ || comm_busy_ || !ready_buckets_.empty() || finished_) return;
    finished_ = true;
    const double params = config_.model->parameters();
    result_.optimizer_s = params * optimizer_bytes_per_parameter(config_.optimizer) /
                              (config_.device.memory_bandwidth * config_.profile.memory_efficiency) +
                          config_.profile.kernel_launch_overhead_s;
    engine_.schedule_in(sim::Time::from_seconds(result_.optimizer_s), [] {});
  }

  const DataParallelConfig& config_;
  sim::Engine engine_;
  network::Routing routing_;
  network::FlowNetwork flows_;
  network::Collectives collectives_;
  std::vector<network::VertexId> ranks_;
  bool comm_busy_ = false;
  std::vector<LayerTime> times_;
  std::deque<double> ready_buckets_;
  double open_bucket_bytes_ = 0;
  int next_backward_ = 0;
  bool backward_done_ = false;
  bool finished_ = false;
  sim::Time comm_started_;
  StepBreakdown result_;
};

}  // namespace

StepBreakdown simulate_data_parallel_step(const DataParallelConfig& config) {
  validate(config);
  StepReplay replay(config);
  return replay.run();
}

}  // namespace dlsim::models
