// The input pipeline beside the step (models/input_pipeline.hpp): the overlap algebra.
#include <gtest/gtest.h>

#include <stdexcept>

#include "models/catalog.hpp"
#include "models/input_pipeline.hpp"

namespace dlsim::models {
namespace {

InputPipeline loader(double rate, int workers, int prefetch) {
  InputPipeline p;
  p.loader = Loader::custom;
  p.samples_per_worker_s = rate;
  p.workers = workers;
  p.prefetch = prefetch;
  return p;
}

TEST(InputPipeline, WithPrefetchTheSlowerStageSetsThePaceWithoutItTheyAdd) {
  // 512 samples at 100 per second per worker on 4 workers: 1.28 s of loading per iteration.
  const InputStep slow_step = with_input(2.0, 512, loader(100, 4, 2));
  EXPECT_DOUBLE_EQ(slow_step.input_s, 1.28);
  EXPECT_DOUBLE_EQ(slow_step.iteration_s, 2.0) << "the loader is hidden behind a 2 s step";
  EXPECT_DOUBLE_EQ(slow_step.stall_s, 0);
  EXPECT_FALSE(slow_step.input_bound);
  const InputStep fast_step = with_input(0.5, 512, loader(100, 4, 1));
  EXPECT_DOUBLE_EQ(fast_step.iteration_s, 1.28) << "a 0.5 s step waits for its input";
  EXPECT_DOUBLE_EQ(fast_step.stall_s, 0.78);
  EXPECT_TRUE(fast_step.input_bound);
  const InputStep serial = with_input(0.5, 512, loader(100, 4, 0));
  EXPECT_DOUBLE_EQ(serial.iteration_s, 0.5 + 1.28) << "without prefetching, load then step";
  // Twice the workers, half the loading.
  EXPECT_DOUBLE_EQ(with_input(0.5, 512, loader(100, 8, 2)).input_s, 0.64);
  // No loader: the step alone.
  const InputStep none = with_input(0.5, 512, InputPipeline{});
  EXPECT_DOUBLE_EQ(none.iteration_s, 0.5);
  EXPECT_DOUBLE_EQ(none.input_s, 0);
  EXPECT_THROW(with_input(0.5, 512, loader(0, 4, 2)), std::invalid_argument);
  EXPECT_THROW(with_input(0.5, 512, loader(100, 0, 2)), std::invalid_argument);
}

TEST(InputPipeline, WorkersBeyondTheVcpusDecodeNoFasterButOverlapTheirReads) {
  // 512 samples at 100 per second per worker: 8 workers on 4 vCPUs decode at 400/s, as 4 do.
  InputPipeline p = loader(100, 8, 2);
  p.vcpus = 4;
  EXPECT_DOUBLE_EQ(with_input(0.5, 512, p).input_s, 512.0 / 400);
  p.vcpus = 0;  // not known: the workers as given
  EXPECT_DOUBLE_EQ(with_input(0.5, 512, p).input_s, 512.0 / 800);
  // A 10 ms read before each 10 ms decode: a worker manages 50/s. 8 workers on 4 vCPUs: 400/s
  // either way; 16 workers overlap their reads but 4 vCPUs still decode only 400/s, and it is
  // the CPU, not the storage, that binds. With 8 vCPUs the 16 workers reach 800/s.
  p.read_s_per_sample = 0.01;
  p.vcpus = 4;
  EXPECT_DOUBLE_EQ(with_input(0.5, 512, p).input_s, 512.0 / 400);
  EXPECT_TRUE(with_input(0.5, 512, p).input_bound);
  p.workers = 16;
  const InputStep cpu = with_input(0.5, 512, p);
  EXPECT_DOUBLE_EQ(cpu.input_s, 512.0 / 400);
  EXPECT_FALSE(cpu.storage_bound);
  p.vcpus = 8;
  EXPECT_DOUBLE_EQ(with_input(0.5, 512, p).input_s, 512.0 / 800);
  // Reading slower than decoding, vCPUs to spare: the storage binds.
  p.read_s_per_sample = 0.02;
  p.vcpus = 64;
  const InputStep reads = with_input(0.5, 512, p);
  EXPECT_DOUBLE_EQ(reads.input_s, 512.0 / (16 / 0.03));
  EXPECT_TRUE(reads.storage_bound);
}

TEST(InputPipeline, BuiltInLoadersHaveTheirMeasuredRatesAndInstancesTheirVcpus) {
  EXPECT_EQ(loader_samples_per_worker_s(Loader::pytorch), 117);
  EXPECT_EQ(loader_samples_per_worker_s(Loader::dali_cpu), 171);
  EXPECT_GT(loader_samples_per_worker_s(Loader::dali_cpu), loader_samples_per_worker_s(Loader::pytorch));
  const Catalog c = Catalog::builtin();
  EXPECT_EQ(c.find_instance("aws/g5.xlarge")->vcpus, 4);
  EXPECT_EQ(c.find_instance("aws/g5.2xlarge")->vcpus, 8);
  EXPECT_EQ(c.find_instance("aws/p4d.24xlarge")->vcpus, 96);
  EXPECT_EQ(c.find_instance("aws/p5.48xlarge")->vcpus, 192);
  EXPECT_EQ(c.find_instance("aws/p2.xlarge")->vcpus, 4);
  // NVIDIA's DGX datasheets, in hardware threads: 2 x 20-core E5-2698 v4, 2 x 64-core EPYC 7742,
  // 2 x 56-core Xeon 8480C.
  EXPECT_EQ(c.find_instance("nvidia/dgx-1v")->vcpus, 80);
  EXPECT_EQ(c.find_instance("nvidia/dgx-a100")->vcpus, 256);
  EXPECT_EQ(c.find_instance("nvidia/dgx-h100")->vcpus, 224);
  EXPECT_EQ(c.find_instance("gcp/tpu-v4-8")->vcpus, 0) << "not recorded";
}

}  // namespace
}  // namespace dlsim::models
