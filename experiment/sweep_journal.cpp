#include "experiment/sweep_journal.hpp"

#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace dlsim::experiment {
namespace {

constexpr char kMagic[8] = {'D', 'L', 'S', 'I', 'M', 'S', 'W', 'J'};
constexpr char kRecord[4] = {'V', 'R', 'E', 'C'};
constexpr std::uint32_t kVersion = 1;

void put_u64(std::string& out, std::uint64_t v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); }
void put_text(std::string& out, const std::string& t) {
  put_u64(out, t.size());
  out += t;
}

// Reads from a byte string, throwing when it runs out.
class Reader {
 public:
  explicit Reader(const std::string& bytes) : bytes_(bytes) {}
  std::uint64_t u64() {
    std::uint64_t v = 0;
    std::memcpy(&v, take(sizeof v), sizeof v);
    return v;
  }
  std::string text() {
    const std::uint64_t n = u64();
    if (n > bytes_.size()) throw std::runtime_error("malformed table bytes");
    return std::string(take(static_cast<std::size_t>(n)), static_cast<std::size_t>(n));
  }
  const char* take(std::size_t n) {
    if (at_ + n > bytes_.size()) throw std::runtime_error("malformed table bytes");
    const char* p = bytes_.data() + at_;
    at_ += n;
    return p;
  }
  bool done() const { return at_ == bytes_.size(); }

 private:
  const std::string& bytes_;
  std::size_t at_ = 0;
};

}  // namespace

std::uint64_t fnv1a(const std::string& bytes, std::uint64_t hash) {
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

std::string serialize_table(const Table& table) {
  std::string out;
  put_u64(out, table.columns.size());
  for (const TableColumn& c : table.columns) {
    put_text(out, c.name);
    put_text(out, c.unit);
    put_text(out, c.description);
    put_u64(out, static_cast<std::uint64_t>(c.type));
    if (c.type == TableColumn::Type::text) {
      put_u64(out, c.texts.size());
      for (const std::string& t : c.texts) put_text(out, t);
    } else {
      put_u64(out, c.numbers.size());
      out.append(reinterpret_cast<const char*>(c.numbers.data()), c.numbers.size() * sizeof(double));
    }
  }
  return out;
}

Table deserialize_table(const std::string& bytes) {
  Reader r(bytes);
  Table table;
  const std::uint64_t columns = r.u64();
  if (columns > bytes.size()) throw std::runtime_error("malformed table bytes");
  for (std::uint64_t i = 0; i < columns; ++i) {
    TableColumn c;
    c.name = r.text();
    c.unit = r.text();
    c.description = r.text();
    const std::uint64_t type = r.u64();
    if (type > static_cast<std::uint64_t>(TableColumn::Type::text)) throw std::runtime_error("malformed table bytes");
    c.type = static_cast<TableColumn::Type>(type);
    const std::uint64_t n = r.u64();
    if (n > bytes.size()) throw std::runtime_error("malformed table bytes");
    if (c.type == TableColumn::Type::text) {
      for (std::uint64_t k = 0; k < n; ++k) c.texts.push_back(r.text());
    } else {
      c.numbers.resize(static_cast<std::size_t>(n));
      std::memcpy(c.numbers.data(), r.take(static_cast<std::size_t>(n) * sizeof(double)), static_cast<std::size_t>(n) * sizeof(double));
    }
    table.columns.push_back(std::move(c));
  }
  if (!r.done()) throw std::runtime_error("malformed table bytes");
  return table;
}

SweepJournal::SweepJournal(std::string path, std::uint64_t fingerprint, std::uint64_t variants, bool resume)
    : path_(std::move(path)) {
  if (resume && std::filesystem::exists(path_)) {
    read_existing(fingerprint, variants);
    return;
  }
  if (const auto dir = std::filesystem::path(path_).parent_path(); !dir.empty()) std::filesystem::create_directories(dir);
  out_.open(path_, std::ios::binary | std::ios::trunc);
  if (!out_) throw std::runtime_error("cannot write the sweep journal '" + path_ + "'");
  write_header(fingerprint, variants);
}

void SweepJournal::write_header(std::uint64_t fingerprint, std::uint64_t variants) {
  std::string header(kMagic, sizeof kMagic);
  header.append(reinterpret_cast<const char*>(&kVersion), sizeof kVersion);
  put_u64(header, fingerprint);
  put_u64(header, variants);
  out_.write(header.data(), static_cast<std::streamsize>(header.size()));
  out_.flush();
}

void SweepJournal::read_existing(std::uint64_t fingerprint, std::uint64_t variants) {
  std::ifstream in(path_, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t header = sizeof kMagic + sizeof kVersion + 16;
  if (bytes.size() < header || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) {
    throw std::runtime_error("'" + path_ + "' is not a dlsim sweep journal");
  }
  std::uint32_t version = 0;
  std::uint64_t their_fingerprint = 0, their_variants = 0;
  std::memcpy(&version, bytes.data() + sizeof kMagic, sizeof version);
  std::memcpy(&their_fingerprint, bytes.data() + sizeof kMagic + sizeof version, 8);
  std::memcpy(&their_variants, bytes.data() + sizeof kMagic + sizeof version + 8, 8);
  if (version != kVersion) throw std::runtime_error("'" + path_ + "' is a journal of another dlsim version");
  if (their_fingerprint != fingerprint || their_variants != variants) {
    throw std::runtime_error("'" + path_ + "' is the journal of another sweep (scenario, overrides or variants differ): "
                             "resume the sweep it belongs to, or remove it and the store to start afresh");
  }
  std::size_t at = header;
  std::size_t good = header;  // end of the last whole record
  while (at + sizeof kRecord + 16 <= bytes.size() && std::memcmp(bytes.data() + at, kRecord, sizeof kRecord) == 0) {
    std::uint64_t variant = 0, size = 0, checksum = 0;
    std::memcpy(&variant, bytes.data() + at + 4, 8);
    std::memcpy(&size, bytes.data() + at + 12, 8);
    const std::size_t payload = at + 20;
    if (size > bytes.size() || payload + size + 8 > bytes.size() || variant >= variants) break;
    const std::string body = bytes.substr(payload, static_cast<std::size_t>(size));
    std::memcpy(&checksum, bytes.data() + payload + size, 8);
    if (checksum != fnv1a(body)) break;
    finished_[variant] = deserialize_table(body);
    at = payload + static_cast<std::size_t>(size) + 8;
    good = at;
  }
  // Drop a torn tail, then append after the last whole record.
  std::filesystem::resize_file(path_, good);
  out_.open(path_, std::ios::binary | std::ios::app);
  if (!out_) throw std::runtime_error("cannot append to the sweep journal '" + path_ + "'");
}

void SweepJournal::remove() {
  out_.close();
  std::error_code ec;  // a journal already gone is no failure: the store is complete either way
  std::filesystem::remove(path_, ec);
}

void SweepJournal::append(std::uint64_t variant, Table table) {
  const std::string body = serialize_table(table);
  std::string record(kRecord, sizeof kRecord);
  put_u64(record, variant);
  put_u64(record, body.size());
  record += body;
  put_u64(record, fnv1a(body));
  out_.write(record.data(), static_cast<std::streamsize>(record.size()));
  out_.flush();
  if (!out_) throw std::runtime_error("cannot write the sweep journal '" + path_ + "'");
  finished_[variant] = std::move(table);
}

}  // namespace dlsim::experiment
