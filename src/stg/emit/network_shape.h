// Which dimensions of ASTRA-sim's network lie inside one scale-up domain
// (NVLink, Infinity Fabric) and which run across domains (the NICs).
//
// ASTRA-sim numbers NPUs by the rank (dimension 0 varying fastest), and stg
// numbers ranks as the reference does, dp fastest. Which GPUs share a node
// is a placement, not a numbering: stg places them as Megatron-LM does
// (its default rank order "tp-cp-ep-dp-pp": a node holds whole
// tensor-parallel groups first, then context-, expert- and data-parallel
// ones, then pipeline stages). So tp's dimension runs at the scale-up
// bandwidth wherever it stands in rank order, as tp does on a real cluster.
#pragma once

#include <cstdint>
#include <vector>

namespace stg::emit {

struct NetworkShape {
  std::vector<int64_t> dims;  // NPUs per dimension, the fastest-varying first
  std::vector<bool> in_node;  // per dimension: inside one scale-up domain
};

// One axis of the run (its degree and its place in the node order, 0 filled
// first; mesh/axes.h `node_place`), given in rank order with the stages last.
struct PlacedAxis {
  int64_t degree;
  int node_place;
};

// How many ranks of each axis one domain of gpus_per_node GPUs holds when
// the axes fill it in node order: an axis whose degree fits in what is left
// wholly, the first that does not fit its largest divisor that does, every
// later axis 1 (default_network_shape's placement; `stg plans` charges an
// axis's groups at the scale-up bandwidth when they are whole inside).
std::vector<int64_t> ranks_in_domain(const std::vector<PlacedAxis>& axes, int64_t gpus_per_node);

// The default network: one dimension per axis of degree > 1, in rank order.
// Axes fill a domain of gpus_per_node GPUs in node order: an axis whose
// degree fits in what is left is inside; the first that does not fit is
// split into an inside part (its largest divisor that fits) and an outside
// part, and every later axis is outside. One dimension alone is split in
// two ([4, 2] for 8 ranks; ASTRA-sim can crash at exit with one dimension)
// unless the rank count is prime.
NetworkShape default_network_shape(const std::vector<PlacedAxis>& axes, int64_t gpus_per_node);

// Dimensions given by the user (--network_dims): inside a domain while the
// dimensions up to it span at most gpus_per_node NPUs.
NetworkShape given_network_shape(std::vector<int64_t> dims, int64_t gpus_per_node);

}  // namespace stg::emit
