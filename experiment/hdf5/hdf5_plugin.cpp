// HDF5 layout (also in scenarios/README.md):
//   /                      attributes: dlsim_version, seed, scenario_source, format ("dlsim-results-1"),
//                          kind ("training", "collective" or "cluster")
//   /scenario              string: the scenario YAML as given (after --set overrides)
//   /scenario_resolved     string: the scenario with defaults, catalog figures and SI units
//   /results               group; attribute "columns": the column names in order
//   /results/<column>      1-D dataset, one value per row: float64, int64 for counts, or
//                          fixed-length strings for names;
//                          attributes "unit" and "description"
// This file is the plugin dlsim-hdf5.so (hdf5_plugin_abi.hpp): the only object that links
// HDF5 (and, through it, libcurl, OpenSSL, Kerberos and LDAP), loaded by write_hdf5() when a
// command writes a results file, so that other commands start without them.
#include <hdf5.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "experiment/hdf5_plugin_abi.hpp"
#include "experiment/results.hpp"

namespace dlsim::experiment {
namespace {

// Owns one HDF5 identifier; closes it with the matching function.
class Handle {
 public:
  Handle(hid_t id, herr_t (*close)(hid_t), const std::string& what) : id_(id), close_(close) {
    if (id_ < 0) throw std::runtime_error("HDF5: cannot " + what);
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = -1; }
  ~Handle() {
    if (id_ >= 0) close_(id_);
  }
  operator hid_t() const { return id_; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

void check(herr_t status, const std::string& what) {
  if (status < 0) throw std::runtime_error("HDF5: cannot " + what);
}

Handle string_type(const std::string& text) {
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose, "create a string type");
  check(H5Tset_size(type, text.empty() ? 1 : text.size()), "size a string type");
  check(H5Tset_cset(type, H5T_CSET_UTF8), "set UTF-8");
  return type;
}

void write_string_attribute(hid_t owner, const std::string& name, const std::string& text) {
  Handle type = string_type(text);
  Handle space(H5Screate(H5S_SCALAR), H5Sclose, "create a scalar space");
  Handle attribute(H5Acreate2(owner, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
                   "create attribute " + name);
  check(H5Awrite(attribute, type, text.empty() ? "" : text.c_str()), "write attribute " + name);
}

void write_u64_attribute(hid_t owner, const std::string& name, std::uint64_t value) {
  Handle space(H5Screate(H5S_SCALAR), H5Sclose, "create a scalar space");
  Handle attribute(H5Acreate2(owner, name.c_str(), H5T_STD_U64LE, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
                   "create attribute " + name);
  check(H5Awrite(attribute, H5T_NATIVE_UINT64, &value), "write attribute " + name);
}

// Object creation properties without modification times, so that the same results give the
// same file, byte for byte.
Handle untimed_creation(hid_t property_class) {
  Handle properties(H5Pcreate(property_class), H5Pclose, "create a property list");
  check(H5Pset_obj_track_times(properties, false), "turn off time tracking");
  return properties;
}

void write_string_dataset(hid_t owner, const std::string& name, const std::string& text) {
  Handle type = string_type(text);
  Handle space(H5Screate(H5S_SCALAR), H5Sclose, "create a scalar space");
  Handle creation = untimed_creation(H5P_DATASET_CREATE);
  Handle dataset(H5Dcreate2(owner, name.c_str(), type, space, H5P_DEFAULT, creation, H5P_DEFAULT), H5Dclose,
                 "create dataset " + name);
  check(H5Dwrite(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, text.empty() ? "" : text.c_str()),
        "write dataset " + name);
}

void write_column(hid_t group, const TableColumn& column) {
  const hsize_t n = column.type == TableColumn::Type::text ? column.texts.size() : column.numbers.size();
  Handle space(H5Screate_simple(1, &n, nullptr), H5Sclose, "create a data space");
  Handle creation = untimed_creation(H5P_DATASET_CREATE);
  if (column.type == TableColumn::Type::text) {
    // Fixed-length strings as wide as the longest, so h5py and pandas read plain bytes.
    std::size_t width = 1;
    for (const auto& t : column.texts) width = std::max(width, t.size());
    std::string packed(width * column.texts.size(), '\0');
    for (std::size_t i = 0; i < column.texts.size(); ++i) packed.replace(i * width, column.texts[i].size(), column.texts[i]);
    Handle type = string_type(std::string(width, ' '));
    Handle dataset(H5Dcreate2(group, column.name.c_str(), type, space, H5P_DEFAULT, creation, H5P_DEFAULT),
                   H5Dclose, "create dataset " + column.name);
    check(H5Dwrite(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, packed.data()), "write " + column.name);
    write_string_attribute(dataset, "unit", column.unit);
    write_string_attribute(dataset, "description", column.description);
    return;
  }
  const bool integer = column.type == TableColumn::Type::integer;
  Handle dataset(H5Dcreate2(group, column.name.c_str(), integer ? H5T_STD_I64LE : H5T_IEEE_F64LE, space, H5P_DEFAULT,
                            creation, H5P_DEFAULT),
                 H5Dclose, "create dataset " + column.name);
  if (integer) {
    std::vector<std::int64_t> values;
    for (double v : column.numbers) values.push_back(static_cast<std::int64_t>(v));
    check(H5Dwrite(dataset, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), "write " + column.name);
  } else {
    check(H5Dwrite(dataset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, column.numbers.data()),
          "write " + column.name);
  }
  write_string_attribute(dataset, "unit", column.unit);
  write_string_attribute(dataset, "description", column.description);
}

}  // namespace

// Writes `results` to the file `temporary` (write_hdf5 renames it into place).
void write_file(const std::string& temporary, const Results& results) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // errors become exceptions, not stderr dumps
  Handle file(H5Fcreate(temporary.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose,
              "create '" + temporary + "'");
  write_string_attribute(file, "format", "dlsim-results-1");
  write_string_attribute(file, "kind", results.kind);
  write_string_attribute(file, "dlsim_version", results.dlsim_version);
  write_u64_attribute(file, "seed", results.seed);
  write_string_attribute(file, "scenario_source", results.scenario_source);
  write_string_dataset(file, "scenario", results.scenario_yaml);
  write_string_dataset(file, "scenario_resolved", results.resolved_yaml);
  Handle group_creation = untimed_creation(H5P_GROUP_CREATE);
  Handle group(H5Gcreate2(file, "results", H5P_DEFAULT, group_creation, H5P_DEFAULT), H5Gclose,
               "create group results");
  std::string names;
  for (const TableColumn& c : results.table.columns) {
    write_column(group, c);
    names += (names.empty() ? "" : ",") + c.name;
  }
  write_string_attribute(group, "columns", names);
  // Further tables (cluster scenarios: jobs, time series per variant), each in its group.
  Handle link_creation(H5Pcreate(H5P_LINK_CREATE), H5Pclose, "create a link property list");
  check(H5Pset_create_intermediate_group(link_creation, 1), "allow intermediate groups");
  for (const auto& [path, table] : results.extra_tables) {
    Handle extra(H5Gcreate2(file, path.c_str(), link_creation, group_creation, H5P_DEFAULT), H5Gclose, "create group " + path);
    std::string extra_names;
    for (const TableColumn& c : table.columns) {
      write_column(extra, c);
      extra_names += (extra_names.empty() ? "" : ",") + c.name;
    }
    write_string_attribute(extra, "columns", extra_names);
  }
  check(H5Fflush(file, H5F_SCOPE_GLOBAL), "flush '" + temporary + "'");
}

}  // namespace dlsim::experiment

extern "C" void dlsim_write_hdf5(const char* path, const dlsim::experiment::Results* results) {
  dlsim::experiment::write_file(path, *results);
}
