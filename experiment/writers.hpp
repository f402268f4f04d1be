// Output of Results: a printed table, a CSV file, an HDF5 file (layout in scenarios/README.md).
// Writers only read Results; file writers go through write_atomically.
#pragma once
#include <ostream>
#include <string>

#include "experiment/results.hpp"

namespace dlsim::experiment {

void print_table(std::ostream& out, const Results& results);
void print_cluster_table(std::ostream& out, const Results& results);
void print_cost_breakdown(std::ostream& out, const Results& results);  // cost_printer.cpp
void write_csv(const std::string& path, const Results& results);
void write_table_csv(const std::string& path, const Table& table);
void write_hdf5(const std::string& path, const Results& results);
// Starts loading the HDF5 writer plugin (and the HDF5 library behind it) on another thread, so
// that a command that will write a results file does not wait for the dynamic loader at the end.
// Optional: write_hdf5 loads it itself; a load that fails reports when write_hdf5 is called.
void preload_hdf5_writer();

}  // namespace dlsim::experiment
