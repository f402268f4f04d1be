#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "experiment/atomic_file.hpp"
#include "experiment/writers.hpp"

namespace dlsim::experiment {

void write_csv(const std::string& path, const Results& results) {
  write_atomically(path, [&](const std::string& temporary) {
    std::ofstream out(temporary);
    if (!out) throw std::runtime_error("cannot write '" + temporary + "'");
    const auto& columns = results.table.columns;
    for (std::size_t c = 0; c < columns.size(); ++c) out << (c ? "," : "") << columns[c].name;
    out << "\n";
    char buf[64];
    for (std::size_t row = 0; row < results.table.rows(); ++row) {
      for (std::size_t c = 0; c < columns.size(); ++c) {
        out << (c ? "," : "");
        if (columns[c].type == TableColumn::Type::text) {
          out << columns[c].texts[row];  // names only: no commas or quotes to escape
          continue;
        }
        const double v = columns[c].numbers[row];
        if (std::isnan(v)) {
          buf[0] = '\0';  // empty cell: pandas reads it as NaN
        } else if (columns[c].type == TableColumn::Type::integer) {
          std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
        } else {
          std::snprintf(buf, sizeof buf, "%.17g", v);  // round-trips a double exactly
        }
        out << buf;
      }
      out << "\n";
    }
    out.close();
    if (!out) throw std::runtime_error("error writing '" + temporary + "'");
  });
}

}  // namespace dlsim::experiment
