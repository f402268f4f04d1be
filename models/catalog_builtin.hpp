// Internal to models/: fills a Catalog with the built-in devices (catalog_devices.cpp) and
// cloud instance types (catalog_instances.cpp). Callers use Catalog::builtin() instead.
#pragma once

namespace dlsim::models {

class Catalog;

void add_builtin_devices(Catalog& catalog);    // DeviceSpec + default DeviceProfile per device
void add_builtin_instances(Catalog& catalog);  // needs the devices they name

}  // namespace dlsim::models
