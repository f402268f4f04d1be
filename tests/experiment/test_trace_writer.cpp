// The Chrome/Perfetto trace writer: the file is checked by Python's json module against the
// Trace Event Format (metadata names every process and thread, complete events carry name, cat,
// ts, dur, pid, tid), times are exact microseconds, strings are escaped, output is deterministic.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

#include "experiment/trace_writer.hpp"

namespace dlsim::experiment {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPython = "/usr/bin/python3";

// Validates argv[1] (a trace) against argv[2] (expected X events, one per line, tab-separated:
// process, thread, name, cat, start ns, duration ns, in trace order). Exit 0 when valid.
constexpr const char* kChecker = R"PY(import json, sys

errors = []
def fail(message):
    errors.append(message)

def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)

with open(sys.argv[1], "rb") as f:
    doc = json.loads(f.read().decode("utf-8"))
if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
    sys.exit("top level is not an object with a traceEvents list")
if doc.get("displayTimeUnit") != "ns":
    fail("displayTimeUnit is not 'ns'")

processes, threads, xs = {}, {}, []
for i, e in enumerate(doc["traceEvents"]):
    if not isinstance(e, dict) or not isinstance(e.get("ph"), str):
        fail("event %d has no ph" % i)
        continue
    if e["ph"] == "M":
        args = e.get("args")
        if not is_int(e.get("pid")) or not isinstance(args, dict):
            fail("metadata event %d lacks an integer pid or args" % i)
            continue
        if e.get("name") == "process_name":
            if e["pid"] in processes:
                fail("pid %d is named twice" % e["pid"])
            processes[e["pid"]] = args.get("name")
        elif e.get("name") == "thread_name":
            if not is_int(e.get("tid")):
                fail("thread_name event %d has no integer tid" % i)
            threads[(e["pid"], e.get("tid"))] = args.get("name")
        elif e.get("name") in ("process_sort_index", "thread_sort_index"):
            if not is_int(args.get("sort_index")):
                fail("sort index event %d has no integer sort_index" % i)
        else:
            fail("unexpected metadata event %r" % e.get("name"))
    elif e["ph"] == "X":
        xs.append(e)
    else:
        fail("unexpected phase %r" % e["ph"])

for i, e in enumerate(xs):
    for key in ("name", "cat"):
        if not isinstance(e.get(key), str):
            fail("X event %d: %s is not a string" % (i, key))
    for key in ("ts", "dur"):
        v = e.get(key)
        if not isinstance(v, (int, float)) or isinstance(v, bool) or v < 0:
            fail("X event %d: %s is not a number >= 0: %r" % (i, key, v))
    if not is_int(e.get("pid")) or not is_int(e.get("tid")):
        fail("X event %d: pid and tid must be integers" % i)
        continue
    if e["pid"] not in processes:
        fail("X event %d: pid %d has no process_name" % (i, e["pid"]))
    if (e["pid"], e["tid"]) not in threads:
        fail("X event %d: (pid %d, tid %d) has no thread_name" % (i, e["pid"], e["tid"]))

with open(sys.argv[2], encoding="utf-8") as f:
    expected = [line.rstrip("\n").split("\t") for line in f if line.strip()]
if len(expected) != len(xs):
    fail("%d X events, expected %d" % (len(xs), len(expected)))
for i, (want, e) in enumerate(zip(expected, xs)):
    process, thread, name, cat, start_ns, duration_ns = want
    got = (processes.get(e.get("pid")), threads.get((e.get("pid"), e.get("tid"))), e.get("name"), e.get("cat"))
    if got != (process, thread, name, cat):
        fail("X event %d is %r, expected %r" % (i, got, (process, thread, name, cat)))
    # Both sides are correctly rounded decimal -> double conversions: equal exactly.
    if e.get("ts") != int(start_ns) / 1000 or e.get("dur") != int(duration_ns) / 1000:
        fail("X event %d: ts %r dur %r, expected %s ns and %s ns" % (i, e.get("ts"), e.get("dur"), start_ns, duration_ns))

if errors:
    sys.exit("\n".join(errors))
print("ok: %d processes, %d threads, %d complete events" % (len(processes), len(threads), len(xs)))
)PY";

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A folder of this test and process alone.
fs::path fresh_folder() {
  const auto dir = fs::path(::testing::TempDir()) / "dlsim_test_trace_writer" /
                   (std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "-" +
                    std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Lanes of two processes, interleaved, so that pids follow first appearance, not lane order.
models::IterationTrace sample_trace() {
  models::IterationTrace t;
  t.lanes = {{"stage 0 (ranks 0-7)", "compute"},
             {"stage 0 (ranks 0-7)", "tensor-parallel"},
             {"stage 1 (ranks 8-15)", "compute"},
             {"stage 0 (ranks 0-7)", "data-parallel"}};
  t.spans = {{0, "F mb0", "compute", 0, 1234},
             {1, "all-reduce 96 MiB", "communication", 1234, 500},
             {2, "F mb0", "compute", 1734, 1'000'000},
             {3, "all-reduce \"grads\"", "communication", 123'456'789'012, 7},
             {0, "idle", "idle", 5, 0}};
  return t;
}

// The expectation file of kChecker for `t`.
std::string expectations(const models::IterationTrace& t) {
  std::string out;
  for (const auto& s : t.spans) {
    const auto& lane = t.lanes[static_cast<std::size_t>(s.lane)];
    out += lane.process + "\t" + lane.thread + "\t" + s.name + "\t" + s.category + "\t" + std::to_string(s.start_ns) +
           "\t" + std::to_string(s.duration_ns) + "\n";
  }
  return out;
}

struct CheckResult {
  int exit_code = -1;
  std::string output;
};

// Runs kChecker on `trace_file`; the caller has checked that Python exists.
CheckResult run_checker(const fs::path& dir, const fs::path& trace_file, const models::IterationTrace& t) {
  std::ofstream(dir / "check_trace.py") << kChecker;
  std::ofstream(dir / "expected.tsv") << expectations(t);
  const std::string command = std::string("'") + kPython + "' '" + (dir / "check_trace.py").string() + "' '" +
                              trace_file.string() + "' '" + (dir / "expected.tsv").string() + "' >'" +
                              (dir / "checker.txt").string() + "' 2>&1";
  const int status = std::system(command.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(dir / "checker.txt")};
}

TEST(TraceWriter, PythonJsonValidatesTheFile) {
  if (!fs::exists(kPython)) GTEST_SKIP() << kPython << " is absent: the trace file cannot be validated by Python";
  const fs::path dir = fresh_folder();
  const models::IterationTrace t = sample_trace();
  const fs::path file = dir / "out" / "trace.json";  // the parent folder does not exist yet
  write_chrome_trace(t, file.string());
  const CheckResult r = run_checker(dir, file, t);
  EXPECT_EQ(r.exit_code, 0) << r.output << "\n--- trace:\n" << slurp(file);
  EXPECT_NE(r.output.find("ok: 2 processes, 4 threads, 5 complete events"), std::string::npos) << r.output;
}

// The checker must be able to fail: a thread without its thread_name is reported.
TEST(TraceWriter, PythonCheckerRejectsAThreadWithoutName) {
  if (!fs::exists(kPython)) GTEST_SKIP() << kPython << " is absent: the trace file cannot be validated by Python";
  const fs::path dir = fresh_folder();
  const models::IterationTrace t = sample_trace();
  std::string text = chrome_trace_json(t);
  const std::string line = "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":2,\"tid\":3,\"args\":{\"name\":\"compute\"}},\n";
  const auto at = text.find(line);
  ASSERT_NE(at, std::string::npos) << text;
  text.erase(at, line.size());
  std::ofstream(dir / "broken.json") << text;
  const CheckResult r = run_checker(dir, dir / "broken.json", t);
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("(pid 2, tid 3) has no thread_name"), std::string::npos) << r.output;
}

TEST(TraceWriter, EmptyTraceIsValidJson) {
  const std::string text = chrome_trace_json({});
  EXPECT_EQ(text, "{\"traceEvents\":[\n],\n\"displayTimeUnit\":\"ns\"}\n");
  if (!fs::exists(kPython)) GTEST_SKIP() << kPython << " is absent: the trace file cannot be validated by Python";
  const fs::path dir = fresh_folder();
  write_chrome_trace({}, (dir / "empty.json").string());
  const CheckResult r = run_checker(dir, dir / "empty.json", {});
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST(TraceWriter, TimesAreExactMicroseconds) {
  const std::string text = chrome_trace_json(sample_trace());
  for (const char* want : {"\"ts\":0.000,\"dur\":1.234,", "\"ts\":1.234,\"dur\":0.500,", "\"ts\":1.734,\"dur\":1000.000,",
                           "\"ts\":123456789.012,\"dur\":0.007,", "\"ts\":0.005,\"dur\":0.000,"}) {
    EXPECT_NE(text.find(want), std::string::npos) << want << " not in\n" << text;
  }
}

TEST(TraceWriter, PidsFollowFirstAppearanceAndTidsAreLanes) {
  const std::string text = chrome_trace_json(sample_trace());
  for (const char* want :
       {"{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"args\":{\"name\":\"stage 0 (ranks 0-7)\"}}",
        "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":2,\"args\":{\"name\":\"stage 1 (ranks 8-15)\"}}",
        "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":2,\"args\":{\"sort_index\":1}}",
        "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":4,\"args\":{\"name\":\"data-parallel\"}}",
        // data-parallel is the third lane of stage 0, whatever lanes of stage 1 come between.
        "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":1,\"tid\":4,\"args\":{\"sort_index\":2}}",
        "\"pid\":2,\"tid\":3}"}) {
    EXPECT_NE(text.find(want), std::string::npos) << want << " not in\n" << text;
  }
}

TEST(TraceWriter, StringsAreEscaped) {
  models::IterationTrace t;
  t.lanes = {{"rank \"0\"", "tab\there"}};
  // A quote, a backslash, a newline, a control byte, valid UTF-8 (é) and a stray byte.
  t.spans = {{0, "a\"b\\c\nd\x01 caf\xc3\xa9 \xff!", "cat\r", 0, 1}};
  const std::string text = chrome_trace_json(t);
  EXPECT_NE(text.find("\"name\":\"a\\\"b\\\\c\\nd\\u0001 caf\xc3\xa9 \\ufffd!\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"cat\":\"cat\\r\""), std::string::npos) << text;
  EXPECT_NE(text.find("{\"name\":\"rank \\\"0\\\"\"}"), std::string::npos) << text;
  EXPECT_NE(text.find("{\"name\":\"tab\\there\"}"), std::string::npos) << text;
  // No raw control character survives anywhere (the layout's own newlines excepted).
  for (char c : text) EXPECT_TRUE(c == '\n' || static_cast<unsigned char>(c) >= 0x20) << int(c);
}

TEST(TraceWriter, SameTraceSameBytes) {
  const fs::path dir = fresh_folder();
  const std::string first = chrome_trace_json(sample_trace());
  EXPECT_EQ(chrome_trace_json(sample_trace()), first);
  write_chrome_trace(sample_trace(), (dir / "a.json").string());
  write_chrome_trace(sample_trace(), (dir / "a.json").string());  // over an existing file
  write_chrome_trace(sample_trace(), (dir / "b.json").string());
  EXPECT_EQ(slurp(dir / "a.json"), first);
  EXPECT_EQ(slurp(dir / "b.json"), first);
  // Nothing but the two targets is left in the folder (no temporary files).
  int files = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 2);
}

TEST(TraceWriter, BadSpansAreRejectedAndNothingIsWritten) {
  const fs::path dir = fresh_folder();
  models::IterationTrace bad_lane = sample_trace();
  bad_lane.spans.push_back({4, "lost", "compute", 0, 1});
  EXPECT_THROW(chrome_trace_json(bad_lane), std::invalid_argument);
  EXPECT_THROW(write_chrome_trace(bad_lane, (dir / "t.json").string()), std::invalid_argument);
  models::IterationTrace negative = sample_trace();
  negative.spans[1].duration_ns = -1;
  EXPECT_THROW(chrome_trace_json(negative), std::invalid_argument);
  models::IterationTrace early = sample_trace();
  early.spans[0].start_ns = -5;
  EXPECT_THROW(chrome_trace_json(early), std::invalid_argument);
  EXPECT_TRUE(fs::is_empty(dir));
}

}  // namespace
}  // namespace dlsim::experiment
