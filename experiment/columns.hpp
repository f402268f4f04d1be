// The result columns, listed once: name, unit, meaning and how to read each from a row. The
// table printer, the CSV writer and the HDF5 writer all iterate this list, so the three stay
// the same.
#pragma once
#include <string>
#include <vector>

#include "experiment/results.hpp"

namespace dlsim::experiment {

struct Column {
  std::string name;         // snake_case, used as CSV header and HDF5 dataset name
  std::string unit;         // "s", "samples/s", "USD", "USD/h", "1" for ratios, "" for counts
  std::string description;
  bool integer;             // written as int64 in HDF5
  double (*value)(const ResultRow&);
};

const std::vector<Column>& result_columns();

}  // namespace dlsim::experiment
