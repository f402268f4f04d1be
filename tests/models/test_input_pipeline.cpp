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

TEST(InputPipeline, BuiltInLoadersHaveTheirMeasuredRatesAndInstancesTheirVcpus) {
  EXPECT_EQ(loader_samples_per_worker_s(Loader::pytorch), 117);
  EXPECT_EQ(loader_samples_per_worker_s(Loader::dali_cpu), 171);
  EXPECT_GT(loader_samples_per_worker_s(Loader::dali_cpu), loader_samples_per_worker_s(Loader::pytorch));
  const Catalog c = Catalog::builtin();
  EXPECT_EQ(c.find_instance("aws/g5.xlarge")->vcpus, 4);
  EXPECT_EQ(c.find_instance("aws/g5.2xlarge")->vcpus, 8);
  EXPECT_EQ(c.find_instance("aws/p4d.24xlarge")->vcpus, 96);
  EXPECT_EQ(c.find_instance("aws/p5.48xlarge")->vcpus, 192);
  EXPECT_EQ(c.find_instance("aws/p2.xlarge")->vcpus, 0) << "not recorded";
}

}  // namespace
}  // namespace dlsim::models
