// A scenario file's one YAML document (yaml_document.hpp).
#include "experiment/yaml_document.hpp"

#include <sstream>

#include <yaml-cpp/eventhandler.h>

#include "experiment/config_error.hpp"

namespace dlsim::experiment {
namespace {

// Where a document starts and whether it holds anything but a null.
struct DocumentProbe : YAML::EventHandler {
  YAML::Mark start;          // the document's first event
  YAML::Mark first_content;  // its first node that is not a null
  bool started = false;
  bool content = false;
  void note(const YAML::Mark& m) {
    if (!started) start = m;
    started = true;
  }
  void found(const YAML::Mark& m) {
    note(m);
    if (!content) first_content = m;
    content = true;
  }
  void OnDocumentStart(const YAML::Mark& m) override { note(m); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& m, YAML::anchor_t) override { note(m); }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { found(m); }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t, const std::string&) override { found(m); }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    found(m);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    found(m);
  }
  void OnMapEnd() override {}
};

bool same_place(const YAML::Mark& a, const YAML::Mark& b) { return a.pos == b.pos && a.line == b.line && a.column == b.column; }

}  // namespace

YAML::Node load_one_document(const std::string& text, const std::string& name) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  YAML::Mark previous;
  for (int document = 0;; ++document) {
    DocumentProbe probe;
    if (!parser.HandleNextDocument(probe)) break;
    if (document > 0 && same_place(probe.start, previous)) {
      throw ConfigError({name, probe.start.line + 1, probe.start.column + 1}, "",
                        "invalid YAML: no node can start here (a ',' outside a [...] or {...} list?)");
    }
    if (document > 0 && probe.content) {
      const YAML::Mark& m = probe.first_content;
      // yaml-cpp also starts a document after one it could not continue (no '---' there).
      const bool marker = probe.start.pos >= 0 && static_cast<std::size_t>(probe.start.pos) < text.size() &&
                          text.compare(static_cast<std::size_t>(probe.start.pos), 3, "---") == 0;
      throw ConfigError({name, m.line + 1, m.column + 1}, "",
                        marker ? "a second YAML document (after '---'): a scenario file holds one document; merge them or split the file"
                               : "invalid YAML: this line is outside the mapping above it (check its indentation)");
    }
    previous = probe.start;
  }
  return YAML::Load(text);
}

}  // namespace dlsim::experiment
