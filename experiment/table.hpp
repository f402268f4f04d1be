// Table: results as typed columns, what the CSV and HDF5 writers write. Each kind of scenario
// lists its columns once (columns.cpp) and turns its rows into a Table there.
#pragma once
#include <string>
#include <vector>

namespace dlsim::experiment {

struct TableColumn {
  enum class Type { real, integer, text };
  std::string name;           // snake_case: CSV header and HDF5 dataset name
  std::string unit;           // "s", "samples/s", "USD", "1" for ratios, "" for counts and text
  std::string description;
  Type type = Type::real;
  std::vector<double> numbers;      // real and integer columns (NaN: does not apply)
  std::vector<std::string> texts;   // text columns
};

struct Table {
  std::vector<TableColumn> columns;
  std::size_t rows() const {
    if (columns.empty()) return 0;
    const auto& c = columns.front();
    return c.type == TableColumn::Type::text ? c.texts.size() : c.numbers.size();
  }
};

}  // namespace dlsim::experiment
