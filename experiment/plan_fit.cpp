// Memory-driven plan changes (see plan_fit.hpp).
#include "experiment/plan_fit.hpp"

#include <functional>
#include <stdexcept>

#include "experiment/units.hpp"
#include "models/memory_model.hpp"

namespace dlsim::experiment {
namespace {

// Peak memory of a plan, or -1 when the plan is not valid for the model.
double peak_bytes(const models::ModelGraph& model, const models::ParallelPlan& plan) {
  try {
    models::validate_plan(plan, model, plan.devices());
  } catch (const std::invalid_argument&) {
    return -1;
  }
  return models::peak_memory(model, plan).total();
}

struct Change {
  std::string label;
  std::function<bool(models::ParallelPlan&)> apply;  // false: does not apply to this plan
};

// The changes in the order a practitioner tries them (cheapest in throughput first).
std::vector<Change> candidate_changes(const models::ModelGraph& model, const models::ParallelPlan& plan, double memory_bytes) {
  std::vector<Change> out;
  using models::Recompute;
  out.push_back({"recompute: selective", [](models::ParallelPlan& p) {
                   if (p.recompute != Recompute::none) return false;
                   p.recompute = Recompute::selective;
                   return true;
                 }});
  out.push_back({"recompute: full", [](models::ParallelPlan& p) {
                   if (p.recompute == Recompute::full) return false;
                   p.recompute = Recompute::full;
                   return true;
                 }});
  if (plan.micro_batch_size > 1) {
    const int batch = plan.micro_batch_size * plan.micro_batches;
    models::ParallelPlan smaller = plan;
    const int size = largest_fitting_micro_batch(model, smaller, batch, memory_bytes);
    if (size < plan.micro_batch_size) {
      out.push_back({"micro_batch_size: " + std::to_string(size), [size, batch](models::ParallelPlan& p) {
                       if (batch % size != 0 || size >= p.micro_batch_size) return false;
                       p.micro_batch_size = size;
                       p.micro_batches = batch / size;
                       return true;
                     }});
    }
  }
  out.push_back({"sequence_parallel: true", [](models::ParallelPlan& p) {
                   if (p.sequence_parallel || p.tensor < 2) return false;
                   p.sequence_parallel = true;
                   return true;
                 }});
  for (int stage = 1; stage <= 3; ++stage) {
    out.push_back({"zero_stage: " + std::to_string(stage), [stage](models::ParallelPlan& p) {
                     if (p.zero_stage >= stage || p.data < 2) return false;
                     p.zero_stage = stage;
                     return true;
                   }});
  }
  return out;
}

}  // namespace

int largest_fitting_micro_batch(const models::ModelGraph& model, models::ParallelPlan plan, int replica_batch,
                                double memory_bytes) {
  for (int size = replica_batch; size >= 1; --size) {
    if (replica_batch % size != 0) continue;
    plan.micro_batch_size = size;
    plan.micro_batches = replica_batch / size;
    const double bytes = peak_bytes(model, plan);
    if (bytes >= 0 && bytes <= memory_bytes) return size;
  }
  return 1;
}

std::vector<FitChange> changes_that_fit(const models::ModelGraph& model, const models::ParallelPlan& plan, double memory_bytes,
                                        std::size_t most) {
  const std::vector<Change> changes = candidate_changes(model, plan, memory_bytes);
  std::vector<FitChange> fits;
  const auto try_plan = [&](const std::vector<const Change*>& picked) {
    models::ParallelPlan p = plan;
    std::string label;
    for (const Change* c : picked) {
      if (!c->apply(p)) return;
      label += (label.empty() ? "" : " and ") + c->label;
    }
    const double bytes = peak_bytes(model, p);
    if (bytes >= 0 && bytes <= memory_bytes) fits.push_back({label, bytes});
  };
  for (const Change& c : changes) {
    if (fits.size() < most) try_plan({&c});
  }
  if (!fits.empty()) return fits;
  for (std::size_t i = 0; i < changes.size(); ++i) {
    for (std::size_t j = i + 1; j < changes.size() && fits.size() < most; ++j) try_plan({&changes[i], &changes[j]});
  }
  return fits;
}

std::string describe_fits(const std::vector<FitChange>& changes) {
  std::string out;
  for (const FitChange& c : changes) {
    out += (out.empty() ? "; it fits with " : ", or ") + c.change + " (" + format_size(c.bytes) + ")";
  }
  return out;
}

}  // namespace dlsim::experiment
