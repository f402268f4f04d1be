// The input pipeline of a training job as a stage that overlaps compute (issue 22): on every
// node a data loader reads each sample, decodes and augments it on the host's vCPUs and copies it
// to the device, `prefetch` batches ahead of the step. With a prefetch of at least one batch the
// loader and the step run side by side and an iteration takes the longer of the two; without, the
// step waits for each batch (their sum).
//
// A loader's speed is samples per second per worker (a process or thread on one vCPU). Measured
// rates for ImageNet ResNet-50 training preprocessing (JPEG decode, random resized crop to 224,
// flip, normalize):
// - pytorch: torchvision's ImageFolder with PIL in a DataLoader: 117 images/s per worker, from
//   milabench (mila-iqia/milabench PR 110: 487 images/s with 4 workers and 902 with 8 on
//   ResNet-50, loader-bound: DALI reached 1,497 on the same machine).
// - dali-cpu: NVIDIA DALI on the CPU: 171 images/s per vCPU, from Mohan et al. (VLDB 2021,
//   "Analyzing and Mitigating Data Stalls in DNN Training"): ResNet-50 needs 3-4 physical cores
//   per V100 to run stall-free, at the 1,200 images/s a V100 trains it with AMP (NVIDIA
//   DeepLearningExamples), i.e. 3.5 cores or 7 vCPUs (2 hardware threads per core).
// Tokenized text costs next to nothing (loader none).
//
// Reading the samples from a storage (storage.hpp) adds to each worker's time per sample (it reads,
// then decodes) and caps the node's rate at its share of what the storage serves.
//
// Decoding is CPU work: workers beyond the node's vCPUs share them (DALI's threads and PyTorch's
// worker processes alike), so the node decodes at most vCPUs x the per-worker rate, however many
// workers it runs; more workers than vCPUs still help while they wait on reads (each waits
// without a vCPU). Where the catalog does not know the vCPUs (0), the workers are taken as given.
#pragma once
#include <limits>
#include <string_view>

namespace dlsim::models {

enum class Loader { none, pytorch, dali_cpu, custom };

struct InputPipeline {
  Loader loader = Loader::none;
  double samples_per_worker_s = 0;   // the loader's rate per worker (custom: given)
  int workers = 0;                   // per node (default: the node's vCPUs)
  int vcpus = 0;                     // the node's vCPUs, which the decoding shares (0: not known)
  int prefetch = 2;                  // batches loaded ahead (PyTorch's default prefetch_factor)
  // Reading from a storage (storage.hpp's ReadCost): 0 and infinity when samples cost no read.
  double read_s_per_sample = 0;      // a worker's time reading one sample, before it decodes it
  double node_read_samples_per_s = std::numeric_limits<double>::infinity();
};

// The measured rate of a built-in loader (0 for none and custom).
double loader_samples_per_worker_s(Loader loader);
std::string_view to_string(Loader loader);

// One iteration with its input: `samples_per_node` samples loaded per iteration on a node.
struct InputStep {
  double input_s = 0;       // the loader's time for one iteration's samples
  double iteration_s = 0;   // compute and input together
  double stall_s = 0;       // iteration_s - compute: the step waiting for its input
  bool input_bound = false; // the loader is slower than the step
  bool storage_bound = false;  // ... and reading is its slower part (the storage's cap binds, or a
                               // worker waits longer for a sample than it decodes one)
};
InputStep with_input(double compute_iteration_s, double samples_per_node, const InputPipeline& input);

}  // namespace dlsim::models
