// Catalog: the devices and cloud instance types a scenario can name.
// builtin() holds datasheet and price-list figures (sources in catalog_*.cpp);
// a scenario may add or override entries. Lookups by exact name.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "models/device.hpp"
#include "models/instance_type.hpp"

namespace dlsim::models {

class Catalog {
 public:
  static Catalog builtin();

  void add_device(DeviceSpec d, DeviceProfile p = {});   // replaces one of the same name
  void add_instance(InstanceType t);                     // replaces one of the same name

  const DeviceSpec* find_device(const std::string& name) const;     // nullptr if unknown
  const DeviceProfile* find_profile(const std::string& device) const;
  const InstanceType* find_instance(const std::string& name) const;  // nullptr if unknown

  std::vector<std::string> device_names() const;    // sorted
  std::vector<std::string> instance_names() const;  // sorted
  const std::map<std::string, DeviceSpec>& devices() const { return devices_; }
  const std::map<std::string, InstanceType>& instances() const { return instances_; }

 private:
  std::map<std::string, DeviceSpec> devices_;
  std::map<std::string, DeviceProfile> profiles_;
  std::map<std::string, InstanceType> instances_;
};

}  // namespace dlsim::models
