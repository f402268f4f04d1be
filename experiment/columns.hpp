// The result columns of each kind of scenario, listed once: name, unit, meaning and how to read
// each from a row. The CSV and HDF5 writers write the Table built from these lists.
#pragma once
#include <string>
#include <vector>

#include "experiment/results.hpp"
#include "experiment/table.hpp"

namespace dlsim::experiment {

template <class Row>
struct Column {
  std::string name;
  std::string unit;
  std::string description;
  TableColumn::Type type;
  double (*number)(const Row&);              // real and integer columns
  std::string (*text)(const Row&) = nullptr; // text columns
};

const std::vector<Column<ResultRow>>& training_columns();
const std::vector<Column<CollectiveRow>>& collective_columns();
const std::vector<Column<ClusterRow>>& cluster_columns();
const std::vector<Column<JobRow>>& job_columns();
const std::vector<Column<PoolRow>>& pool_columns();
const std::vector<Column<JobSpanRow>>& job_span_columns();
const std::vector<Column<PreemptionRow>>& preemption_columns();

template <class Row>
Table make_table(const std::vector<Column<Row>>& columns, const std::vector<Row>& rows) {
  Table table;
  for (const auto& c : columns) {
    TableColumn out{c.name, c.unit, c.description, c.type, {}, {}};
    for (const Row& r : rows) {
      if (c.type == TableColumn::Type::text) {
        out.texts.push_back(c.text(r));
      } else {
        out.numbers.push_back(c.number(r));
      }
    }
    table.columns.push_back(std::move(out));
  }
  return table;
}

}  // namespace dlsim::experiment
