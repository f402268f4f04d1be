// NCCL-style search for rings over the direct NVLink graph of one node.
//
// NCCL (src/graph/search.cc) builds each channel's ring by searching the GPUs' NVLink graph for
// a cycle through every GPU, taking the bandwidth it uses from each link, and repeats while
// rings can be found; on a DGX-1's hybrid cube-mesh it finds several rings over the six NVLinks
// of every GPU instead of one ring in rank order. This is the same idea on link units: a pair
// of GPUs joined by k NVLinks offers k units per direction, a ring takes one unit on every hop it
// makes, and each ring found is followed by its reverse when the units allow (a full-duplex link
// serves one ring each way). The search is deterministic: depth-first from GPU 0, trying the
// peer with the most units left first, then the lowest index.
#pragma once
#include <vector>

namespace dlsim::network {

// units[i][j]: direct link units from i to j (0 when not linked), for g = units.size() GPUs.
// Returns rings as orders of 0..g-1 starting at 0, each a directed cycle whose every hop i -> j
// has a unit, at most `max_rings`; empty when no cycle through all GPUs exists (or g < 2, or g
// is above 16, where the search is not attempted).
std::vector<std::vector<int>> search_rings(std::vector<std::vector<int>> units, int max_rings = 32);

}  // namespace dlsim::network
