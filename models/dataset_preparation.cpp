#include "models/dataset_preparation.hpp"

#include <stdexcept>
#include <string>

namespace dlsim::models {

const std::vector<CpuInstance>& builtin_cpu_instances() {
  static const std::vector<CpuInstance> instances{
      {"aws/c5.18xlarge", "aws", 72, 3.06, "aws.amazon.com/ec2/pricing/on-demand, us-east-1, 2024"},
      {"aws/c6i.32xlarge", "aws", 128, 5.44, "aws.amazon.com/ec2/pricing/on-demand, us-east-1, 2024"},
      {"aws/m5.24xlarge", "aws", 96, 4.608, "aws.amazon.com/ec2/pricing/on-demand, us-east-1, 2024"},
      {"gcp/n2-standard-80", "gcp", 80, 3.8849, "cloud.google.com/compute/vm-instance-pricing, us-central1, 2024"},
      {"azure/F72s_v2", "azure", 72, 3.045, "azure.microsoft.com/pricing/details/virtual-machines/linux, East US, 2024"},
  };
  return instances;
}

const CpuInstance* find_cpu_instance(std::string_view name) {
  for (const CpuInstance& c : builtin_cpu_instances()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

double DatasetPreparation::seconds(double samples) const {
  return startup_s + samples / (static_cast<double>(nodes) * vcpus * samples_per_vcpu_s);
}

std::string_view to_string(TransferRoute route) {
  switch (route) {
    case TransferRoute::inter_zone: return "inter-zone";
    case TransferRoute::inter_region: return "inter-region";
    case TransferRoute::internet: return "internet";
  }
  return "?";
}

double transfer_usd_per_gb(std::string_view provider, TransferRoute route) {
  struct Prices {
    const char* provider;
    double inter_zone, inter_region, internet;
  };
  // The header's table: AWS charges a zone crossing at both ends.
  static constexpr Prices kPrices[] = {{"aws", 0.02, 0.02, 0.09}, {"gcp", 0.01, 0.02, 0.12}, {"azure", 0.0, 0.02, 0.087}};
  for (const Prices& p : kPrices) {
    if (provider != p.provider) continue;
    return route == TransferRoute::inter_zone ? p.inter_zone : route == TransferRoute::inter_region ? p.inter_region : p.internet;
  }
  throw std::invalid_argument("no data-transfer prices for provider '" + std::string(provider) + "' (aws, gcp, azure)");
}

}  // namespace dlsim::models
