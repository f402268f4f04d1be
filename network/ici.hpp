// TPU inter-chip interconnect (ICI) per generation: how many links a chip has, what each
// carries, how chips form a slice (2-D or 3-D torus, which axes wrap around, the host's block of
// chips) and the pod. Figures and sources are in ici.cpp; the achievable fraction of line rate
// is the `ici` row of link_tech.cpp.
//
// Units: bytes/s per link and direction (one way). A chip's ICI total in one direction is
// links_per_chip x link_bandwidth; Google's "bidirectional ICI bandwidth per chip" is twice it.
//
// A slice is a torus (topology_builders.hpp, FabricKind::torus) of dims[0] x dims[1] (x dims[2])
// chips; hosts are blocks of host_shape chips. Axes that do not wrap are mesh lines (Google
// calls small slices a "3D mesh"): their end chips are not linked.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace dlsim::network {

enum class IciGeneration { none, v2, v3, v4, v5e, v5p, v6e };

// When an axis of a slice closes into a ring.
enum class IciWrap {
  full_pod_side,     // only an axis as long as the pod's side (inference chips: 16)
  multiple_of_four,  // an axis that is a multiple of 4 (whole cubes joined by optical switches)
};

struct IciSpec {
  IciGeneration generation = IciGeneration::none;
  const char* name = "";            // "v4"
  double link_bandwidth = 0;        // bytes/s, one way, per link (line rate)
  int links_per_chip = 0;           // 4 (2-D torus) or 6 (3-D torus)
  std::vector<int> pod_shape;       // chips along x, y (, z) of a full pod
  std::vector<int> host_shape;      // chips of one host, same rank as pod_shape
  IciWrap wrap = IciWrap::full_pod_side;
  const char* source = "";
  int rank() const { return static_cast<int>(pod_shape.size()); }
  int chips_per_host() const;
  int pod_chips() const;
  // One direction of all the chip's links.
  double chip_bandwidth() const { return links_per_chip * link_bandwidth; }
};

// Throws std::invalid_argument for IciGeneration::none.
const IciSpec& ici_spec(IciGeneration generation);

// "v2", "v3", "v4", "v5e", "v5p", "v6e" ("none" for none).
std::string to_string(IciGeneration generation);
std::optional<IciGeneration> ici_generation_from_string(const std::string& name);
const std::vector<std::string>& ici_generation_names();  // without "none"

// The shape of a slice of `chips` chips: the host block times the most even split of the host
// count over the generation's axes (ascending: x <= y <= z), e.g. v4: 4 chips 2x2x1, 16 chips
// 2x4x2, 256 chips 8x8x4, 4096 chips 16x16x16; v5e: 8 chips 4x2, 256 chips 16x16. Throws
// std::invalid_argument when `chips` is not a positive multiple of the host's chips.
std::vector<int> ici_slice_dims(IciGeneration generation, int chips);

// Which axes of a slice of `dims` wrap around, by the generation's rule.
std::vector<bool> ici_wrap(IciGeneration generation, const std::vector<int>& dims);

}  // namespace dlsim::network
