// The variants of a sweep as a scenario's `sweep` section describes them (what `dlsim sweep`
// runs): a grid (cartesian product), zipped lists (taken together, i-th with i-th), and random
// samples, each over any key paths; variants are every grid point x every zip position x every
// sample. Each variant is a list of --set overrides ("key=value") of the scenario, so it passes
// the scenario's own validation. These keys of `sweep` coexist with `sweep.nodes` and
// `sweep.plan` (training) and a cluster scenario's `sweep: {key.path: [...]}` variants, which
// stay inside each run.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "experiment/sweep_axis.hpp"
#include "experiment/yaml_reader.hpp"

namespace dlsim::experiment {

constexpr std::size_t kMaxSweepVariants = 1'000'000;

// True for the keys of `sweep` that describe variants (grid, zip, random).
bool is_variant_sweep_key(const std::string& key);

// Reads sweep.grid / sweep.zip / sweep.random (the rest of `sweep` is read elsewhere). Throws
// ConfigError at the offending value.
VariantSweep read_variant_sweep(const YAML::Node& sweep, const Source& source, std::uint64_t scenario_seed);

// Every variant's overrides, in order: grid points (first key slowest), then zip positions,
// then random samples (drawn once, in order, from random_seed: the same on every machine).
std::vector<std::vector<std::string>> expand(const VariantSweep& sweep);

}  // namespace dlsim::experiment
