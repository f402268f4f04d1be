// The catalog (devices, instance types with prices) and the model zoo, as lists of dicts.
#include <pybind11/stl.h>

#include "experiment/builtin_profiles.hpp"
#include "bindings/bind_common.hpp"
#include "models/catalog.hpp"
#include "models/precision.hpp"
#include "models/zoo.hpp"
#include "network/link_tech.hpp"

namespace dlsim::bindings {
namespace {

py::dict device_dict(const models::DeviceSpec& d) {
  py::dict out;
  out["name"] = d.name;
  out["description"] = d.description;
  for (auto p : {models::Precision::fp32, models::Precision::tf32, models::Precision::fp16, models::Precision::bf16,
                 models::Precision::fp8}) {
    out[py::str("peak_" + std::string(models::to_string(p)) + "_flops")] = d.peak(p);
  }
  out["memory_bytes"] = d.memory_bytes;
  out["memory_bandwidth"] = d.memory_bandwidth;
  out["intra_node_link_bandwidth"] = d.intra_node_link_bandwidth;
  out["pcie_bandwidth"] = d.pcie_bandwidth;
  out["generation"] = std::string(models::to_string(d.generation));  // kepler ... blackwell, cdna3, tpu, trainium
  out["compute_units"] = d.compute_units;                             // SMs, MXUs or NeuronCores
  out["source"] = d.source;
  return out;
}

py::dict instance_dict(const models::InstanceType& t) {
  py::dict out;
  out["name"] = t.name;
  out["provider"] = t.provider;
  out["device"] = t.device;
  out["accelerators_per_node"] = t.accelerators_per_node;
  out["network_bandwidth"] = t.network_bandwidth;
  out["network_latency_s"] = t.network_latency_s;
  out["intra_node_bandwidth"] = t.intra_node_bandwidth;
  out["nics"] = t.nics;
  out["nic_tech"] = network::to_string(t.nic_tech);
  out["transport"] = network::to_string(t.transport);
  out["vcpus"] = t.vcpus;  // 0: not known
  out["price_per_hour"] = t.price_per_hour;
  out["spot_price_per_hour"] = t.spot_price_per_hour;  // 0: no public figure
  out["price_date"] = t.price_date;
  out["source"] = t.source;
  return out;
}

py::dict model_dict(const std::string& name, int sequence_length) {
  const models::ModelGraph g = models::zoo_model(name, sequence_length);
  py::dict out;
  out["name"] = name;
  out["parameters"] = g.parameters();
  out["forward_flops_per_sample"] = g.forward_flops_per_sample();
  out["training_flops_per_sample"] = g.training_flops_per_sample();
  out["sample_unit"] = g.sample_unit;
  out["tokens_per_sample"] = g.tokens_per_sample;
  out["has_sequence"] = models::zoo_model_has_sequence(name);
  return out;
}

}  // namespace

void bind_models(py::module_& m) {
  m.def("devices", [] {
    py::list out;
    const models::Catalog catalog = experiment::builtin_catalog();  // kept alive for the loop
    for (const auto& [name, d] : catalog.devices()) out.append(device_dict(d));
    return out;
  }, "The built-in devices: peak dense FLOP/s per precision, memory (bytes), bandwidths (bytes/s), source.");
  m.def("instances", [] {
    py::list out;
    const models::Catalog catalog = experiment::builtin_catalog();
    for (const auto& [name, t] : catalog.instances()) out.append(instance_dict(t));
    return out;
  }, "The built-in instance types: accelerators, network (bytes/s), on-demand USD per node-hour, source.");
  m.def("model_names", &models::zoo_model_names, "The names of the model zoo, sorted.");
  m.def("model", &model_dict, py::arg("name"), py::arg("sequence_length") = 0,
        "One zoo model: parameters, FLOPs per sample; IndexError for an unknown name.");
}

}  // namespace dlsim::bindings
