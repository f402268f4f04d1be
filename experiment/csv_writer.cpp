#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "experiment/atomic_file.hpp"
#include "experiment/writers.hpp"

namespace dlsim::experiment {

namespace {

// RFC 4180: a field holding a comma, quote or line break is quoted, quotes doubled.
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

void write_csv(const std::string& path, const Results& results) { write_table_csv(path, results.table); }

void write_table_csv(const std::string& path, const Table& table) {
  write_atomically(path, [&](const std::string& temporary) {
    std::ofstream out(temporary);
    if (!out) throw std::runtime_error("cannot write '" + temporary + "'");
    const auto& columns = table.columns;
    for (std::size_t c = 0; c < columns.size(); ++c) out << (c ? "," : "") << columns[c].name;
    out << "\n";
    char buf[64];
    for (std::size_t row = 0; row < table.rows(); ++row) {
      for (std::size_t c = 0; c < columns.size(); ++c) {
        out << (c ? "," : "");
        if (columns[c].type == TableColumn::Type::text) {
          out << csv_field(columns[c].texts[row]);
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
