// The sweep journal: every finished variant's result table appended to a file as it ends, so
// that a sweep killed at any moment loses nothing finished, and `--resume` runs only the rest.
// It sits beside the HDF5 store (<store>.journal), which is rewritten from it.
//
// Format (little-endian, as the machines that run dlsim are): a header "DLSIMSWJ" + version
// u32 + the sweep's fingerprint u64 + its variant count u64; then records "VREC" + variant u64
// + payload size u64 + payload (serialize_table) + FNV-1a checksum u64 of the payload. A record
// cut short by a kill, or whose checksum fails, ends the journal: it and what follows are
// dropped on resume (and overwritten).
#pragma once
#include <cstdint>
#include <fstream>
#include <map>
#include <string>

#include "experiment/table.hpp"

namespace dlsim::experiment {

// A table as bytes (names, units, descriptions, types, values bit for bit), and back; MPI
// messages use the same. deserialize_table throws std::runtime_error on malformed bytes.
std::string serialize_table(const Table& table);
Table deserialize_table(const std::string& bytes);

std::uint64_t fnv1a(const std::string& bytes, std::uint64_t hash = 14695981039346656037ull);

class SweepJournal {
 public:
  // Creates `path` afresh, or with `resume` reads the finished variants of an existing journal
  // of the same sweep (same fingerprint and count; else std::runtime_error saying so). A resume
  // without a journal starts afresh.
  SweepJournal(std::string path, std::uint64_t fingerprint, std::uint64_t variants, bool resume);

  const std::map<std::uint64_t, Table>& finished() const { return finished_; }
  // Appends the variant's table and flushes it to the operating system (a killed process
  // loses nothing written); keeps it in finished().
  void append(std::uint64_t variant, Table table);
  const std::string& path() const { return path_; }
  // Closes and deletes the file: once the store holds every variant, the journal has no more use.
  void remove();

 private:
  void read_existing(std::uint64_t fingerprint, std::uint64_t variants);
  void write_header(std::uint64_t fingerprint, std::uint64_t variants);

  std::string path_;
  std::ofstream out_;
  std::map<std::uint64_t, Table> finished_;
};

}  // namespace dlsim::experiment
