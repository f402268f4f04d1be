#include "experiment/catalog_yaml.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "experiment/nearest_name.hpp"
#include "network/ici.hpp"
#include "network/link_tech.hpp"
#include "network/topology_builders.hpp"

namespace dlsim::experiment {
namespace {

// Bounds that reject typos and unit slips without forbidding any real or near-future machine.
constexpr double kMaxBandwidth = 1e15;      // 1 PB/s
constexpr double kMaxLatency = 1.0;         // 1 s
constexpr double kMaxMemory = 1e15;         // 1 PB per accelerator
constexpr double kMaxFlops = 1e18;          // 1 EFLOP/s per accelerator
constexpr double kMaxPricePerHour = 1e5;    // USD per node-hour

const char* const kPrecisionKeys[] = {"fp64", "fp32", "tf32", "fp16", "bf16", "fp8"};

models::DeviceSpec read_device(MapReader& r, models::DeviceProfile& profile, const models::Catalog& catalog) {
  models::DeviceSpec d;
  d.name = r.text("name");
  // `base` copies an existing device so that a file can change one figure of it.
  if (auto base = r.optional_text("base")) {
    const models::DeviceSpec* b = catalog.find_device(*base);
    if (b == nullptr) r.fail("base", "unknown device '" + *base + "'" + did_you_mean(*base, catalog.device_names()));
    const std::string name = d.name;
    d = *b;
    d.name = name;
    profile = *catalog.find_profile(*base);
  }
  const bool has_base = r.has("base");
  d.description = r.optional_text("description").value_or(d.description);
  // A device of its own needs every figure; one with a base replaces only those it names.
  if (r.has("peak") || !has_base) {
    if (!r.has("peak")) r.fail_missing("peak", "peak FLOP/s per precision, e.g. {fp32: 19.5TFLOP/s, fp16: 312TFLOP/s}");
    MapReader peak(r.node("peak"), r.path_of("peak"), r.source());
    for (int i = 0; i < 6; ++i) {
      d.peak_flops[i] = peak.quantity(kPrecisionKeys[i], Dimension::flop_rate, 0, kMaxFlops, d.peak_flops[i]);
    }
    peak.finish();
    bool any = false;
    for (double f : d.peak_flops) any = any || f > 0;
    if (!any) r.fail("peak", "a device needs at least one nonzero peak (fp32, fp16, ...)");
  }
  const auto keep = [&](double v) { return has_base ? std::optional<double>(v) : std::nullopt; };
  d.memory_bytes = r.quantity("memory", Dimension::size, 1, kMaxMemory, keep(d.memory_bytes));
  d.memory_bandwidth = r.quantity("memory_bandwidth", Dimension::bandwidth, 1, kMaxBandwidth, keep(d.memory_bandwidth));
  // PCIe Gen3 x16 per direction when not given: the slowest link a data-center GPU has.
  d.intra_node_link_bandwidth = r.quantity("intra_node_link_bandwidth", Dimension::bandwidth, 1, kMaxBandwidth,
                                           d.intra_node_link_bandwidth > 0 ? d.intra_node_link_bandwidth : 16e9);
  d.pcie_bandwidth = r.quantity("pcie_bandwidth", Dimension::bandwidth, 1, kMaxBandwidth, d.pcie_bandwidth);
  if (r.has("efficiency")) {
    // Stated efficiencies are the roofline's: they replace the base's kernel model, which would
    // otherwise ignore them.
    profile.kernels = models::KernelProfile{};
    MapReader e(r.node("efficiency"), r.path_of("efficiency"), r.source());
    profile.matmul_efficiency = e.number("matmul", 1e-3, 1, profile.matmul_efficiency);
    profile.memory_efficiency = e.number("memory", 1e-3, 1, profile.memory_efficiency);
    profile.kernel_launch_overhead_s = e.quantity("kernel_launch", Dimension::duration, 0, 1e-2, profile.kernel_launch_overhead_s);
    e.finish();
  }
  d.source = r.optional_text("source").value_or("user catalog file " + r.source().file);
  return d;
}

}  // namespace

models::InstanceType read_instance_fields(MapReader& r, const std::string& name, const models::Catalog& catalog) {
  models::InstanceType t;
  t.name = name;
  t.provider = r.optional_text("provider").value_or("custom");
  t.device = r.text("accelerator");
  const models::DeviceSpec* device = catalog.find_device(t.device);
  if (device == nullptr) {
    r.fail("accelerator", "unknown accelerator '" + t.device + "'" + did_you_mean(t.device, catalog.device_names()) +
                              "; run 'dlsim catalog devices' for the list");
  }
  t.accelerators_per_node = static_cast<int>(r.integer("accelerators_per_node", 1, network::kMaxAcceleratorsPerNode));
  t.network_bandwidth = r.quantity("network_bandwidth", Dimension::bandwidth, 1, kMaxBandwidth);
  t.network_latency_s = r.quantity("network_latency", Dimension::duration, 0, kMaxLatency, 25e-6);
  t.intra_node_bandwidth = r.quantity("intra_node_bandwidth", Dimension::bandwidth, 1, kMaxBandwidth,
                                      device->intra_node_link_bandwidth);
  t.intra_node_latency_s = r.quantity("intra_node_latency", Dimension::duration, 0, kMaxLatency, 2e-6);
  t.nic_tech = *network::link_tech_from_string(r.choice("nic_tech", network::link_tech_names(), "generic"));
  // TPU hosts: the chips' ICI generation makes the node a TPU board (network/ici.hpp); by
  // default the one a TPU device's name carries ("TPU-v6e" -> v6e).
  std::vector<std::string> ici_names = network::ici_generation_names();
  ici_names.insert(ici_names.begin(), "none");
  const std::string named = device->generation == models::Generation::tpu && device->name.rfind("TPU-", 0) == 0
                                ? device->name.substr(4) : "none";
  const auto fallback = network::ici_generation_from_string(named);
  t.ici = *network::ici_generation_from_string(r.choice("ici", ici_names, fallback ? named : "none"));
  if (t.ici != network::IciGeneration::none) {
    const int per_host = network::ici_spec(t.ici).chips_per_host();
    if (t.accelerators_per_node != per_host) {
      r.fail("accelerators_per_node", "a " + network::to_string(t.ici) + " host has " + std::to_string(per_host) +
                                          " chips (network/ici.hpp); got " + std::to_string(t.accelerators_per_node));
    }
    t.node_kind = network::NodeKind::tpu_board;
  }
  t.transport = r.choice("transport", {"rdma", "tcp"}, "rdma") == "tcp" ? network::Transport::tcp : network::Transport::rdma;
  t.vcpus = static_cast<int>(r.integer("vcpus", 0, 1'000'000, 0));  // the input pipeline's decoders share them; 0: not known
  t.price_per_hour = r.quantity("price", Dimension::price_rate, 0, kMaxPricePerHour);
  t.spot_price_per_hour = r.quantity("spot_price", Dimension::price_rate, 0, kMaxPricePerHour, 0.0);
  t.price_date = r.optional_text("price_date").value_or("");
  t.source = r.optional_text("source").value_or("user input " + r.source().file);
  return t;
}

void load_catalog_file(const std::string& path, const Source& referenced_from, const std::string& key_path,
                       const YAML::Node& key_node, models::Catalog& catalog) {
  std::ifstream in(path);
  if (!std::filesystem::is_regular_file(path) || !in) {
    throw ConfigError(referenced_from.locate(key_node, key_path), key_path,
                      "cannot read catalog file '" + path + "' (missing, unreadable or not a file)");
  }
  std::stringstream text;
  text << in.rdbuf();
  Source source{path, {}};
  YAML::Node root;
  try {
    root = YAML::Load(text.str());
  } catch (const YAML::Exception& e) {
    throw ConfigError({path, e.mark.line + 1, e.mark.column + 1}, "", "invalid YAML: " + e.msg);
  }
  MapReader top(root, "", source);
  const YAML::Node devices = top.node("devices");
  if (devices.IsDefined() && !devices.IsNull()) {
    if (!devices.IsSequence()) top.fail("devices", "expected a list of devices");
    for (std::size_t i = 0; i < devices.size(); ++i) {
      MapReader r(devices[i], "devices[" + std::to_string(i) + "]", source);
      models::DeviceProfile profile;
      models::DeviceSpec d = read_device(r, profile, catalog);
      r.finish();
      catalog.add_device(std::move(d), profile);
    }
  }
  const YAML::Node instances = top.node("instances");
  if (instances.IsDefined() && !instances.IsNull()) {
    if (!instances.IsSequence()) top.fail("instances", "expected a list of instance types");
    for (std::size_t i = 0; i < instances.size(); ++i) {
      MapReader r(instances[i], "instances[" + std::to_string(i) + "]", source);
      const std::string name = r.text("name");
      models::InstanceType t = read_instance_fields(r, name, catalog);
      r.finish();
      catalog.add_instance(std::move(t));
    }
  }
  top.finish();
}

}  // namespace dlsim::experiment
