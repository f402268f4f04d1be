// The catalog with its shipped kernel profiles (builtin_profiles.hpp).
#include "experiment/builtin_profiles.hpp"

#include <algorithm>
#include <future>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "experiment/profile_yaml.hpp"
#include "models/power_limit.hpp"
#include "models/profile_transfer.hpp"

namespace dlsim::experiment {
namespace {

// Target device <- the measured device whose kernel profile it uses (builtin_profiles.hpp).
const std::pair<const char*, const char*> kOrigins[] = {
    {"A100-80GB", "A100-80GB"}, {"H100-SXM", "H100-SXM"}, {"A40", "A40"},     {"V100-16GB", "V100-16GB"},
    {"P100-PCIe", "P100-PCIe"}, {"A100-40GB", "A100-80GB"}, {"H200", "H100-SXM"}, {"V100-32GB", "V100-16GB"},
    {"T4", "V100-16GB"},        {"P100", "P100-PCIe"},     {"K80", "P100-PCIe"}, {"A10", "A40"},
    {"A10G", "A40"},            {"L4", "A40"},             {"L40S", "A40"},      {"B200", "H100-SXM"},
    {"GB200", "H100-SXM"},      {"MI300X", "H100-SXM"}};

}  // namespace

std::string kernel_profile_origin(const std::string& device) {
  for (const auto& [target, origin] : kOrigins) {
    if (device == target) return origin;
  }
  return "";
}

namespace {

// The shipped profiles parsed, in order, on two threads: yaml-cpp takes about 2 ms per profile,
// which is a tenth of a whole `dlsim run` of GPT-3 on 1,024 GPUs (bench_start_up).
std::vector<ProfileDocument> parse_embedded(const std::vector<EmbeddedProfile>& embedded) {
  std::vector<ProfileDocument> docs(embedded.size());
  const auto parse_every_other = [&](std::size_t first) {
    for (std::size_t i = first; i < embedded.size(); i += 2) {
      docs[i] = read_profile_text(embedded[i].text, std::string("calibration/profiles/") + embedded[i].file);
    }
  };
  std::future<void> odd;
  try {
    odd = std::async(std::launch::async, parse_every_other, std::size_t{1});
  } catch (const std::system_error&) {  // no thread to be had: parse them here
    odd = std::async(std::launch::deferred, parse_every_other, std::size_t{1});
  }
  parse_every_other(0);  // should it throw, odd's destructor waits for the other thread first
  odd.get();
  return docs;
}

models::Catalog build_builtin_catalog() {
  models::Catalog catalog = models::Catalog::builtin();
  std::vector<std::pair<std::string, models::KernelProfile>> measured;
  const std::vector<EmbeddedProfile>& embedded = embedded_profiles();
  for (std::size_t i = 0; const ProfileDocument& doc : parse_embedded(embedded)) {
    const models::DeviceProfile& p = doc.calibration.profile;
    if (!p.kernels.present()) throw std::logic_error(std::string("shipped profile ") + embedded[i].file + " has no kernel model");
    measured.emplace_back(doc.calibration.spec.name, p.kernels);
    ++i;
  }
  // DeepBench measured no memory-bound kernel: V100 and P100 take the A100's curves, scaled by
  // bandwidth (the stream and norm kernels are the same code on every generation).
  const models::KernelProfile* a100 = nullptr;
  for (const auto& [name, kernels] : measured) {
    if (name == "A100-80GB") a100 = &kernels;
  }
  for (auto& [name, kernels] : measured) {
    if (kernels.memory.fitted() || a100 == nullptr) continue;
    const models::KernelProfile borrowed = models::transfer_kernels(*a100, *catalog.find_device("A100-80GB"), *catalog.find_device(name));
    kernels.memory = borrowed.memory;
    kernels.bands[static_cast<std::size_t>(models::KernelFamilyKind::memory)] = a100->bands[static_cast<std::size_t>(models::KernelFamilyKind::memory)];
    kernels.source += "; memory-bound kernels from A100-80GB, scaled by bandwidth";
  }
  // vidur measured no convolution: A100, H100 and A40 take the V100's convolution constants
  // (cuDNN's kernels against the GEMM model, per precision slot: DeepBench's the only measured
  // convolutions), each applied to the device's own GEMM model.
  const models::KernelProfile* v100 = nullptr;
  for (const auto& [name, kernels] : measured) {
    if (name == "V100-16GB") v100 = &kernels;
  }
  for (auto& [name, kernels] : measured) {
    if (kernels.conv.fp32.fitted() || kernels.conv.fp16.fitted() || v100 == nullptr) continue;
    kernels.conv = v100->conv;
    kernels.bands[static_cast<std::size_t>(models::KernelFamilyKind::conv)] = v100->bands[static_cast<std::size_t>(models::KernelFamilyKind::conv)];
    kernels.source += "; convolutions with the V100-16GB's constants (DeepBench)";
  }
  // Alignment slowdowns (models/gemm_model.hpp) were measured on the H200 only (dlsim calibrate and
  // calibration/pytorch_kernels.py on a local GPU). A profile without them takes those of a
  // measured device of the same generation: the same SMs run the same cuBLAS kernels (the H100
  // takes the H200's). Other generations keep none: their misaligned kernels are not measured.
  for (auto& [name, kernels] : measured) {
    const models::DeviceSpec* device = catalog.find_device(name);
    for (const auto& [other, donor] : measured) {
      const models::DeviceSpec* donor_device = catalog.find_device(other);
      if (other == name || device == nullptr || donor_device == nullptr || donor_device->generation != device->generation) continue;
      bool borrowed = false;
      for (std::size_t p = 0; p < kernels.gemm.size(); ++p) {
        const auto& theirs = donor.gemm[p].alignment_factor;
        auto& ours = kernels.gemm[p].alignment_factor;
        const bool ours_empty = std::all_of(ours.begin(), ours.end(), [](double f) { return f == 0; });
        const bool theirs_set = std::any_of(theirs.begin(), theirs.end(), [](double f) { return f > 0; });
        if (kernels.gemm[p].fitted() && ours_empty && theirs_set) {
          ours = theirs;
          borrowed = true;
        }
      }
      if (borrowed) kernels.source += "; GEMM alignment slowdowns from " + other;
    }
  }
  // The power limit (models/power_limit.hpp) was measured by dlsim on the H200; the H100 SXM has
  // the same SMs and the same 700 W limit. Devices that borrow a Hopper kernel model below borrow
  // this with it, except where their own generation's rate is measured (the B200 and GB200 take
  // the B200's); the MI300X keeps the H100's, an assumption until it is measured.
  for (auto& [name, kernels] : measured) {
    if (const models::DeviceSpec* device = catalog.find_device(name)) kernels.source += models::adopt_power_limit(kernels, *device);
  }
  for (const auto& [target, origin] : kOrigins) {
    const models::DeviceSpec* to = catalog.find_device(target);
    const models::DeviceSpec* from = catalog.find_device(origin);
    if (to == nullptr || from == nullptr) throw std::logic_error(std::string("kernel profile origin: unknown device ") + target);
    for (const auto& [name, kernels] : measured) {
      if (name != origin) continue;
      models::DeviceProfile profile = *catalog.find_profile(target);
      profile.kernels = models::transfer_kernels(kernels, *from, *to);
      if (to->generation != from->generation && models::measured_sustained_tensor_rate(to->generation) < 1) {
        profile.kernels.sustained_tensor_rate = 1;  // the donor's rate replaced by the target generation's own
        profile.kernels.source += models::adopt_power_limit(profile.kernels, *to);
      }
      catalog.add_device(*to, profile);
    }
  }
  return catalog;
}

}  // namespace

models::Catalog builtin_catalog() {
  // Parsed once per process: the shipped profiles cannot change while it runs, and every scenario
  // load (each sweep variant, each fuzzer input) needs the catalog. Callers get their own copy.
  static const models::Catalog built = build_builtin_catalog();
  return built;
}

}  // namespace dlsim::experiment
