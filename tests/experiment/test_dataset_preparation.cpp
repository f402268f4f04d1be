// workload.input.preparation and workload.input.transfer in training scenarios: the one-off CPU
// job and the dataset's move before training, their time and bill added to the run's, the price
// table, and located errors.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "experiment/load.hpp"
#include "experiment/results.hpp"
#include "models/dataset_preparation.hpp"
#include "scenario_text.hpp"

namespace dlsim::experiment {
namespace {

// ResNet-50 on one p3.16xlarge: 2 epochs of a 204,800-image dataset of 110 KB JPEGs in S3.
std::string resnet(const std::string& extra) {
  return test::resnet_on_one_p3(204800, 2,
                                "  input: {loader: dali-cpu, storage: {type: aws/s3, sample_bytes: 110KB, object_bytes: 100MB, "
                                "cached: true}" + extra + "}\n");
}

ResultRow run_text(const std::string& text) { return test::first_row(text); }

TEST(DatasetPreparation, TransferAndPreparationComeBeforeTrainingAndAreBilled) {
  const ResultRow plain = run_text(resnet(""));
  const ResultRow both = run_text(resnet(", transfer: {route: internet, from: gcp, bandwidth: 1Gbps},\n"
                                         "  preparation: {instance: aws/c5.18xlarge, nodes: 2, samples_per_vcpu: 100, startup: 5min}"));
  const double bytes = 204800 * 110e3;
  EXPECT_NEAR(both.transfer_s, bytes / 125e6, 1e-9);                   // 1 Gb/s = 125 MB/s
  EXPECT_NEAR(both.transfer_cost, bytes / 1e9 * 0.12, 1e-9);           // GCP's internet egress
  EXPECT_NEAR(both.preparation_s, 300 + 204800 / (2 * 72 * 100.0), 1e-9);
  // Two c5.18xlarge at 3.06 USD/h, billed per second (rounded up).
  EXPECT_NEAR(both.preparation_cost, 2 * 3.06 * std::ceil(both.preparation_s) / 3600, 1e-9);
  // The training itself is unchanged; the run's time and bill grow by exactly the two.
  EXPECT_EQ(both.iteration_s, plain.iteration_s);
  EXPECT_NEAR(both.time_to_train_s, plain.time_to_train_s + both.transfer_s + both.preparation_s, 1e-6);
  EXPECT_NEAR(both.cost_to_train, plain.cost_to_train + both.transfer_cost + both.preparation_cost, 1e-6);
  EXPECT_EQ(plain.transfer_s, 0);
  EXPECT_EQ(plain.preparation_cost, 0);
}

TEST(DatasetPreparation, AGivenSizeAndAHandWrittenNodeWork) {
  const ResultRow r = run_text(resnet(", bytes: 1TB, transfer: {route: inter-region, bandwidth: 10Gbps},\n"
                                      "  preparation: {vcpus: 16, price: 0.5, samples_per_vcpu: 64}"));
  EXPECT_NEAR(r.transfer_s, 1e12 / 1.25e9, 1e-9);
  EXPECT_NEAR(r.transfer_cost, 1000 * 0.02, 1e-9) << "the cluster's provider (AWS) by default";
  EXPECT_NEAR(r.preparation_s, 204800 / (16 * 64.0), 1e-9) << "one node unless told";
  EXPECT_NEAR(r.preparation_cost, 0.5 * std::ceil(r.preparation_s) / 3600, 1e-9);
}

TEST(DatasetPreparation, PricesPerProviderAndRoute) {
  using models::TransferRoute;
  EXPECT_EQ(models::transfer_usd_per_gb("aws", TransferRoute::inter_zone), 0.02) << "0.01 out and 0.01 in";
  EXPECT_EQ(models::transfer_usd_per_gb("aws", TransferRoute::internet), 0.09);
  EXPECT_EQ(models::transfer_usd_per_gb("gcp", TransferRoute::inter_region), 0.02);
  EXPECT_EQ(models::transfer_usd_per_gb("azure", TransferRoute::inter_zone), 0.0);
  EXPECT_EQ(models::transfer_usd_per_gb("azure", TransferRoute::internet), 0.087);
  EXPECT_THROW(models::transfer_usd_per_gb("oci", TransferRoute::internet), std::invalid_argument);
  ASSERT_NE(models::find_cpu_instance("gcp/n2-standard-80"), nullptr);
  EXPECT_EQ(models::find_cpu_instance("gcp/n2-standard-80")->vcpus, 80);
  EXPECT_EQ(models::find_cpu_instance("aws/p3.16xlarge"), nullptr) << "GPU instances are not preparation nodes";
}

TEST(DatasetPreparation, BadSettingsAreLocated) {
  const auto key_of = [](const std::string& text) { return test::error_loading(text, "s.yaml").key_path(); };
  EXPECT_EQ(key_of(resnet(", preparation: {instance: aws/c5.18xlarge, nodes: 2}")), "workload.input.preparation.samples_per_vcpu");
  EXPECT_EQ(key_of(resnet(", preparation: {instance: aws/c9.huge, samples_per_vcpu: 1}")), "workload.input.preparation.instance");
  EXPECT_EQ(key_of(resnet(", preparation: {instance: aws/c5.18xlarge, vcpus: 8, samples_per_vcpu: 1}")),
            "workload.input.preparation.vcpus");
  EXPECT_EQ(key_of(resnet(", preparation: {vcpus: 8, samples_per_vcpu: 1}")), "workload.input.preparation.price");
  EXPECT_EQ(key_of(resnet(", transfer: {route: sneakernet, bandwidth: 1Gbps}")), "workload.input.transfer.route");
  EXPECT_EQ(key_of(resnet(", transfer: {route: internet}")), "workload.input.transfer.bandwidth");
  EXPECT_EQ(key_of(resnet(", transfer: {route: internet, from: oci, bandwidth: 1Gbps}")), "workload.input.transfer.from");
  // Without the dataset's samples there is nothing to prepare or size.
  const std::string by_iterations = "cluster: {instance: aws/p3.16xlarge, nodes: 1}\n"
                                    "workload: {model: resnet50, batch: {per_device: 64}, iterations: 10,\n"
                                    "           input: {";
  EXPECT_EQ(key_of(by_iterations + "preparation: {vcpus: 8, price: 1, samples_per_vcpu: 1}}}\n"), "workload.input.preparation.nodes");
  EXPECT_EQ(key_of(by_iterations + "transfer: {route: internet, bandwidth: 1Gbps}}}\n"), "workload.input.transfer.route");
}

}  // namespace
}  // namespace dlsim::experiment
