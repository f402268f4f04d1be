// Catalog lookups and overrides (see catalog.hpp). The built-in figures live in
// catalog_devices.cpp and catalog_instances.cpp, each entry next to its source.
// Profiles: every built-in device gets one in catalog_devices.cpp (measured ratios from the
// azure-* records of /work/shared/reference/hardware-and-cloud.yaml where they exist, their mean
// elsewhere). A device added without one (add_device's default argument, or a scenario catalog
// device with no base) gets DeviceProfile{} from models/device.hpp: 0.8 / 0.8 / 5 us, round
// figures not taken from any reference record.
#include "models/catalog.hpp"

#include <utility>

#include "models/catalog_builtin.hpp"

namespace dlsim::models {
namespace {

template <typename Map>
const typename Map::mapped_type* find_in(const Map& map, const std::string& key) {
  auto it = map.find(key);
  return it == map.end() ? nullptr : &it->second;
}

template <typename Map>
std::vector<std::string> keys_of(const Map& map) {
  std::vector<std::string> keys;
  keys.reserve(map.size());
  for (const auto& entry : map) keys.push_back(entry.first);  // std::map: already sorted
  return keys;
}

}  // namespace

Catalog Catalog::builtin() {
  Catalog catalog;
  add_builtin_devices(catalog);
  add_builtin_instances(catalog);
  return catalog;
}

void Catalog::add_device(DeviceSpec d, DeviceProfile p) {
  std::string key = d.name;
  profiles_.insert_or_assign(key, p);
  devices_.insert_or_assign(std::move(key), std::move(d));
}

void Catalog::add_instance(InstanceType t) {
  std::string key = t.name;
  instances_.insert_or_assign(std::move(key), std::move(t));
}

const DeviceSpec* Catalog::find_device(const std::string& name) const {
  return find_in(devices_, name);
}

const DeviceProfile* Catalog::find_profile(const std::string& device) const {
  return find_in(profiles_, device);
}

const InstanceType* Catalog::find_instance(const std::string& name) const {
  return find_in(instances_, name);
}

std::vector<std::string> Catalog::device_names() const { return keys_of(devices_); }

std::vector<std::string> Catalog::instance_names() const { return keys_of(instances_); }

}  // namespace dlsim::models
