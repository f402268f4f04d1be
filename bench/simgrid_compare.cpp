// Side by side: dlsim's fluid max-min FlowNetwork and SimGrid's CM02 flow model (SimGrid 3.32,
// s4u API) on the same topology and the same flows. Built only when SimGrid is installed
// (bench/CMakeLists.txt); SimGrid is a benchmark dependency, never a dependency of dlsim.
//
// Setup: a two-tier leaf-spine of 64 hosts (build_cluster: 1 accelerator and 1 NIC per node,
// 16 nodes per leaf, oversubscription 2), or (--topology fat-tree) the k = 16 fat-tree of 1,024
// hosts of bench/flow_solver.cpp (12.5 GB/s links). SimGrid gets the same platform, built with
// the s4u NetZone API: one host per accelerator, one SHARED SimGrid link per directed dlsim link
// (so full duplex: the two directions never compete), and one route per ordered host pair that a
// flow uses, exactly dlsim's Routing path (flow key 0), so both simulators use identical paths.
// N flows (default 2,000) between random host pairs, sizes exponential (mean 10 MB, whole
// bytes), start times uniform in [0, window) on whole nanoseconds (default 50 ms), all from a
// fixed seed. A short window on the fat-tree gives the flow solver's case: --flows 10000
// --window-ms 1 starts 10,000 flows within a millisecond, about 10 per host, which then end one
// by one (each completion changes the rates of the flows it shared links with).
// SimGrid config: network/model:CM02, latency-factor 1, bandwidth-factor 1, weight-S 0,
// TCP-gamma 0 (no window bound), crosstraffic 0.
//
// Known modelling differences, and what is done about them:
// - Latency. Both pay the whole path latency first, without using bandwidth, then transfer
//   (SimGrid: the action's LMM variable has penalty 0 until its "latency" heap event fires; dlsim:
//   begin_transfer after the latency). So completion = start + latency + transfer in both.
// - Sharing weights. CM02 gives each flow the sharing penalty "route latency" (plus weight-S /
//   bandwidth per link when weight-S > 0), so its max-min is WEIGHTED by 1 / latency (an RTT
//   unfairness proxy); weight-S = 0 removes only the second term. dlsim's max-min is unweighted.
//   No configuration removes the first term while links have latency, so the "matched" run gives
//   SimGrid zero-latency links and starts each SimGrid flow at start + path latency (rounded to
//   the nanosecond as dlsim does): every flow then has penalty 1 (plain max-min) and the same
//   latency-then-transfer timeline. The "native" run keeps the latencies in SimGrid's links to
//   show the size of the weighting effect (intra-leaf paths: 4 us, inter-leaf: 6 us). Checked
//   on a two-flow case: flows of 2 us and 4 us route latency sharing one 1 GB/s link get
//   2/3 and 1/3 of it in SimGrid, not 1/2 each.
// - TCP-gamma (default 4 MiB) bounds a flow's rate to gamma / (2 * latency); set to 0 (off).
//   Crosstraffic (on by default) also loads the reverse route with 5% of a flow's rate; off.
// - Time. dlsim keeps integer nanoseconds and rounds each completion to the nanosecond at every
//   rate change; SimGrid uses double seconds, merges events within surf/precision (1e-9 s) and
//   compares rates to maxmin/precision (1e-5). Differences of a few ns are expected.
// - Routing. A SimGrid full zone holds one route per host pair, so per-flow ECMP is dropped in
//   both: every flow of a pair takes dlsim's path for flow key 0 (pairs still hash over spines).
// - SimGrid's engine is a process-wide singleton that cannot be re-created, so each SimGrid
//   repetition runs in a forked child that reports through a pipe.
//
// Wall time: the simulation run only (dlsim: engine and FlowNetwork creation, scheduling the
// starts, run(); SimGrid: creating one actor per flow, Engine::run()), median of --reps runs.
// Platform and path building are excluded from both and reported apart.
//
// Usage: bench_simgrid_compare [--topology leaf-spine|fat-tree] [--flows N] [--window-ms W]
//                              [--seed S] [--reps R] [--csv FILE]
#include <simgrid/s4u.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/fat_tree_1024.hpp"
#include "network/flow_network.hpp"
#include "network/topology_builders.hpp"
#include "sim/random_streams.hpp"

namespace {

using namespace dlsim;
namespace sg4 = simgrid::s4u;
using Clock = std::chrono::steady_clock;

struct Options {
  int flows = 2000;
  bool fat_tree = false;                // --topology fat-tree: k = 16, 1,024 hosts
  int hosts = 64;
  std::uint64_t seed = 42;
  int reps = 5;
  std::int64_t window_ns = 50'000'000;  // start times uniform in [0, window)
  double mean_bytes = 10e6;
  std::string csv;                      // per-flow results, when given
};

struct FlowCase {
  int src = 0, dst = 0;                 // accelerator ranks
  std::uint64_t bytes = 0;
  std::int64_t start_ns = 0;
  std::int64_t latency_ns = 0;          // path latency, rounded as dlsim rounds it
  const network::Path* path = nullptr;  // into Scenario::routes
};

struct Scenario {
  network::Topology topology;
  std::vector<network::Path> routes;  // routes[src * hosts + dst], flow key 0
  std::vector<FlowCase> flows;        // sorted by start time
  int hosts = 0;
  double setup_s = 0;                 // topology + paths, wall
};

struct RunResult {
  std::vector<double> finish_s;  // completion time of each flow, simulated seconds
  double wall_s = 0;
  double setup_s = 0;            // SimGrid platform creation, wall
  std::uint64_t solves = 0;      // dlsim max-min solves
};

enum class SimGridLatency { as_start_delay, in_links };

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string key = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument("option " + key + " needs a value");
    const std::string value = argv[++i];
    if (key == "--flows") o.flows = std::stoi(value);
    else if (key == "--topology" && (value == "leaf-spine" || value == "fat-tree")) o.fat_tree = value == "fat-tree";
    else if (key == "--window-ms") o.window_ns = static_cast<std::int64_t>(std::stod(value) * 1e6);
    else if (key == "--seed") o.seed = std::stoull(value);
    else if (key == "--reps") o.reps = std::stoi(value);
    else if (key == "--csv") o.csv = value;
    else throw std::invalid_argument("unknown option " + key + " " + value +
                                     " (allowed: --topology leaf-spine|fat-tree, --flows, --window-ms, --seed, --reps, --csv)");
  }
  if (o.flows < 1 || o.reps < 1 || o.window_ns < 1) throw std::invalid_argument("--flows, --reps and --window-ms must be > 0");
  if (o.fat_tree) o.hosts = 1024;
  return o;
}

network::Topology leaf_spine(int hosts) {
  network::NodeSpec node;
  node.kind = network::NodeKind::nvswitch;
  node.accelerators = 1;
  node.nics = 1;
  network::FabricSpec fabric;
  fabric.kind = network::FabricKind::leaf_spine;
  fabric.nodes = hosts;
  fabric.nodes_per_leaf = 16;
  fabric.oversubscription = 2;
  return network::build_cluster(node, fabric);
}

Scenario make_scenario(const Options& o) {
  const auto t0 = Clock::now();
  Scenario s{o.fat_tree ? bench::fat_tree_1024() : leaf_spine(o.hosts), {}, {}, o.hosts, 0};
  network::Routing routing(s.topology);
  const auto& acc = s.topology.accelerators();
  s.routes.resize(static_cast<std::size_t>(o.hosts) * o.hosts);  // filled for the pairs flows use
  sim::RandomStreams streams(o.seed);
  sim::RandomStream& rng = streams.stream("simgrid_compare");
  for (int i = 0; i < o.flows; ++i) {
    FlowCase f;
    f.src = static_cast<int>(rng.next_u64() % o.hosts);
    f.dst = static_cast<int>((f.src + 1 + rng.next_u64() % (o.hosts - 1)) % o.hosts);
    f.bytes = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::ceil(rng.exponential(o.mean_bytes))));
    f.start_ns = static_cast<std::int64_t>(rng.next_u64() % static_cast<std::uint64_t>(o.window_ns));
    network::Path& route = s.routes[f.src * o.hosts + f.dst];
    if (route.empty()) route = routing.path(acc[f.src], acc[f.dst], 0);
    f.path = &route;
    f.latency_ns = sim::Time::from_seconds(routing.latency(*f.path)).count_ns();
    s.flows.push_back(f);
  }
  std::stable_sort(s.flows.begin(), s.flows.end(),
                   [](const FlowCase& a, const FlowCase& b) { return a.start_ns < b.start_ns; });
  s.setup_s = seconds_since(t0);
  return s;
}

// ---- dlsim ----------------------------------------------------------------------------------

RunResult run_dlsim(const Scenario& s) {
  RunResult r;
  r.finish_s.assign(s.flows.size(), -1);
  const auto t0 = Clock::now();
  sim::Engine engine;
  network::FlowNetwork network(engine, s.topology);
  for (std::size_t i = 0; i < s.flows.size(); ++i) {
    engine.schedule_at(sim::Time::ns(s.flows[i].start_ns), [&s, &r, &engine, &network, i] {
      const FlowCase& f = s.flows[i];
      network.start({*f.path, static_cast<double>(f.bytes)},
                    [&r, &engine, i] { r.finish_s[i] = engine.now().seconds(); });
    });
  }
  engine.run();
  r.wall_s = seconds_since(t0);
  r.solves = network.solves();
  return r;
}

// ---- SimGrid (in a child process) -----------------------------------------------------------

std::vector<sg4::Host*> build_platform(const Scenario& s, SimGridLatency mode) {
  auto* zone = sg4::create_full_zone("dlsim");
  std::vector<sg4::Host*> hosts;
  for (int r = 0; r < s.hosts; ++r) {
    hosts.push_back(zone->create_host(s.topology.vertex(s.topology.accelerators()[r]).name, 1e9)->seal());
  }
  std::vector<sg4::Link*> links;
  for (network::LinkId l = 0; l < s.topology.link_count(); ++l) {
    const auto& info = s.topology.link(l);
    std::string name = "l";
    name += std::to_string(l);
    links.push_back(zone->create_link(name, info.bandwidth)
                        ->set_latency(mode == SimGridLatency::in_links ? info.latency_s : 0.0)
                        ->set_sharing_policy(sg4::Link::SharingPolicy::SHARED)
                        ->seal());
  }
  for (int a = 0; a < s.hosts; ++a) {
    for (int b = 0; b < s.hosts; ++b) {
      if (a == b || s.routes[a * s.hosts + b].empty()) continue;  // a pair no flow uses
      std::vector<sg4::LinkInRoute> route;
      for (network::LinkId l : s.routes[a * s.hosts + b]) route.emplace_back(links[l]);
      zone->add_route(hosts[a]->get_netpoint(), hosts[b]->get_netpoint(), nullptr, nullptr, route, false);
    }
  }
  zone->seal();
  return hosts;
}

// One actor per flow, on its source host: it sleeps until the flow's start, runs a blocking
// host-to-host Comm (no mailbox) and stamps the clock when the Comm returns. (Not the s4u
// Activity completion signal: in 3.32 it fires for a Comm only when an actor waits on it, so
// detached Comms all got the time of the final wait_all.)
RunResult simgrid_child(const Scenario& s, SimGridLatency mode) {
  std::vector<std::string> args = {"bench_simgrid_compare", "--log=root.thres:critical",
                                   "--cfg=network/model:CM02", "--cfg=network/latency-factor:1",
                                   "--cfg=network/bandwidth-factor:1", "--cfg=network/weight-S:0",
                                   "--cfg=network/TCP-gamma:0", "--cfg=network/crosstraffic:0",
                                   "--cfg=contexts/stack-size:64"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  sg4::Engine engine(&argc, argv.data());
  RunResult r;
  r.finish_s.assign(s.flows.size(), -1);
  auto t0 = Clock::now();
  const std::vector<sg4::Host*> hosts = build_platform(s, mode);
  r.setup_s = seconds_since(t0);
  t0 = Clock::now();
  for (std::size_t i = 0; i < s.flows.size(); ++i) {
    const FlowCase& f = s.flows[i];
    const std::int64_t at_ns = f.start_ns + (mode == SimGridLatency::as_start_delay ? f.latency_ns : 0);
    double* slot = &r.finish_s[i];
    sg4::Actor::create("flow" + std::to_string(i), hosts[f.src],
                       [from = hosts[f.src], to = hosts[f.dst], bytes = f.bytes, at = sim::Time::ns(at_ns).seconds(),
                        slot] {
                         sg4::this_actor::sleep_until(at);
                         sg4::Comm::sendto(from, to, bytes);
                         *slot = sg4::Engine::get_clock();
                       });
  }
  engine.run();
  r.wall_s = seconds_since(t0);
  return r;
}

void write_all(int fd, const void* data, std::size_t bytes) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = write(fd, p, bytes);
    if (n <= 0) _exit(3);
    p += n;
    bytes -= static_cast<std::size_t>(n);
  }
}

RunResult run_simgrid(const Scenario& s, SimGridLatency mode) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    close(fds[0]);
    int code = 0;
    try {
      const RunResult r = simgrid_child(s, mode);
      const double times[2] = {r.wall_s, r.setup_s};
      write_all(fds[1], times, sizeof times);
      write_all(fds[1], r.finish_s.data(), r.finish_s.size() * sizeof(double));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "SimGrid run failed: %s\n", e.what());
      code = 2;
    }
    close(fds[1]);
    _exit(code);  // no destructors or atexit handlers of the parent's state in the child
  }
  close(fds[1]);
  std::vector<char> bytes;
  char buffer[65536];
  for (ssize_t n; (n = read(fds[0], buffer, sizeof buffer)) > 0;) bytes.insert(bytes.end(), buffer, buffer + n);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  const std::size_t expected = (2 + s.flows.size()) * sizeof(double);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || bytes.size() != expected) {
    throw std::runtime_error("the SimGrid child process failed (status " + std::to_string(status) + ")");
  }
  RunResult r;
  r.finish_s.resize(s.flows.size());
  std::memcpy(&r.wall_s, bytes.data(), sizeof(double));
  std::memcpy(&r.setup_s, bytes.data() + sizeof(double), sizeof(double));
  std::memcpy(r.finish_s.data(), bytes.data() + 2 * sizeof(double), s.flows.size() * sizeof(double));
  return r;
}

// ---- comparison -----------------------------------------------------------------------------

struct Diff {
  double max_abs_s = 0;
  double max_rel = 0;   // |difference| / dlsim flow duration (completion - start)
  double mean_abs_s = 0;
  std::size_t worst = 0;  // flow with the largest relative difference
  std::size_t missing = 0;  // flows without a completion in either run
};

Diff compare(const Scenario& s, const RunResult& ref, const RunResult& other) {
  Diff d;
  double sum = 0;
  for (std::size_t i = 0; i < s.flows.size(); ++i) {
    if (ref.finish_s[i] < 0 || other.finish_s[i] < 0) {
      ++d.missing;
      continue;
    }
    const double abs = std::abs(other.finish_s[i] - ref.finish_s[i]);
    const double rel = abs / (ref.finish_s[i] - static_cast<double>(s.flows[i].start_ns) * 1e-9);
    sum += abs;
    d.max_abs_s = std::max(d.max_abs_s, abs);
    if (rel > d.max_rel) {
      d.max_rel = rel;
      d.worst = i;
    }
  }
  d.mean_abs_s = sum / static_cast<double>(s.flows.size() - std::min(d.missing, s.flows.size() - 1));
  return d;
}

template <class Run>
std::vector<RunResult> repeat(int reps, Run run) {
  std::vector<RunResult> runs;
  for (int i = 0; i < reps; ++i) runs.push_back(run());
  return runs;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double median_wall(const std::vector<RunResult>& runs) {
  std::vector<double> w;
  for (const auto& r : runs) w.push_back(r.wall_s);
  return median(w);
}

// Every repetition of a simulator must give the same completions; returns how many differ.
std::size_t unstable_flows(const std::vector<RunResult>& runs) {
  std::size_t count = 0;
  for (std::size_t i = 0; i < runs[0].finish_s.size(); ++i) {
    for (const auto& r : runs) count += r.finish_s[i] != runs[0].finish_s[i] ? 1 : 0;
  }
  return count;
}

void print_row(const char* name, const Diff* d, double wall_s, double ref_wall_s) {
  if (d == nullptr) {
    std::printf("| %-32s | %12s | %10s | %12s | %10.2f | %6s |\n", name, "-", "-", "-", wall_s * 1e3, "1.00");
    return;
  }
  std::printf("| %-32s | %12.3e | %10.3e | %12.3e | %10.2f | %6.2f |\n", name, d->max_abs_s, d->max_rel,
              d->mean_abs_s, wall_s * 1e3, wall_s / ref_wall_s);
}

void describe_worst(const char* name, const Scenario& s, const Diff& d, const RunResult& ref, const RunResult& other) {
  const FlowCase& f = s.flows[d.worst];
  std::printf("%s: worst flow #%zu host %d -> %d, %llu B, start %.9f s, path latency %lld ns: dlsim %.12f s, "
              "SimGrid %.12f s\n",
              name, d.worst, f.src, f.dst, static_cast<unsigned long long>(f.bytes), f.start_ns * 1e-9,
              static_cast<long long>(f.latency_ns), ref.finish_s[d.worst], other.finish_s[d.worst]);
  if (d.missing > 0) std::printf("%s: %zu flows without a completion time\n", name, d.missing);
}

void write_csv(const std::string& file, const Scenario& s, const RunResult& dl, const RunResult& matched,
               const RunResult& native) {
  std::ofstream out(file);
  out.precision(12);
  out << "flow,src,dst,bytes,start_s,latency_s,dlsim_s,simgrid_matched_s,simgrid_native_s\n";
  for (std::size_t i = 0; i < s.flows.size(); ++i) {
    const FlowCase& f = s.flows[i];
    out << i << ',' << f.src << ',' << f.dst << ',' << f.bytes << ',' << f.start_ns * 1e-9 << ','
        << f.latency_ns * 1e-9 << ',' << dl.finish_s[i] << ',' << matched.finish_s[i] << ',' << native.finish_s[i]
        << '\n';
  }
}

int run(const Options& o) {
  const Scenario s = make_scenario(o);
  const auto dl = repeat(o.reps, [&] { return run_dlsim(s); });
  const auto matched = repeat(o.reps, [&] { return run_simgrid(s, SimGridLatency::as_start_delay); });
  const auto native = repeat(o.reps, [&] { return run_simgrid(s, SimGridLatency::in_links); });
  const Diff dm = compare(s, dl[0], matched[0]);
  const Diff dn = compare(s, dl[0], native[0]);
  const double ref = median_wall(dl);
  std::printf("%d flows starting within %.3g ms on a %d-host %s (%zu directed links), seed %llu, median of %d runs\n",
              o.flows, o.window_ns * 1e-6, o.hosts, o.fat_tree ? "k = 16 fat-tree" : "leaf-spine", s.topology.link_count(),
              static_cast<unsigned long long>(o.seed), o.reps);
  std::printf("completion-time differences against dlsim; wall = simulation run only\n\n");
  std::printf("| %-32s | %12s | %10s | %12s | %10s | %6s |\n", "simulator", "max |d| (s)", "max rel",
              "mean |d| (s)", "wall (ms)", "ratio");
  std::printf("|%s|%s|%s|%s|%s|%s|\n", std::string(34, '-').c_str(), std::string(14, '-').c_str(),
              std::string(12, '-').c_str(), std::string(14, '-').c_str(), std::string(12, '-').c_str(),
              std::string(8, '-').c_str());
  print_row("dlsim FlowNetwork", nullptr, ref, ref);
  print_row("SimGrid CM02, matched latency", &dm, median_wall(matched), ref);
  print_row("SimGrid CM02, latency in links", &dn, median_wall(native), ref);
  std::printf("\n");
  describe_worst("matched", s, dm, dl[0], matched[0]);
  describe_worst("native ", s, dn, dl[0], native[0]);
  std::printf("setup wall: dlsim topology + paths %.2f ms, SimGrid platform %.2f ms\n", s.setup_s * 1e3,
              matched[0].setup_s * 1e3);
  std::printf("makespan: dlsim %.6f s, %llu max-min solves; repeat-to-repeat changes: dlsim %zu, SimGrid %zu "
              "flow results\n",
              *std::max_element(dl[0].finish_s.begin(), dl[0].finish_s.end()),
              static_cast<unsigned long long>(dl[0].solves), unstable_flows(dl),
              unstable_flows(matched) + unstable_flows(native));
  if (!o.csv.empty()) write_csv(o.csv, s, dl[0], matched[0], native[0]);
  return dm.missing + dn.missing == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse_options(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_simgrid_compare: %s\n", e.what());
    return 2;
  }
}
