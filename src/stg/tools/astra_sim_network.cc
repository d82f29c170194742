#include "stg/tools/astra_sim_network.h"

#include <algorithm>

namespace stg::tools {

AstraSimNetwork::AstraSimNetwork(const AstraSimConfig& config) : config_(config) {
  for (const NetworkDim& d : config_.dims) {
    stride_.push_back(npus_);
    npus_ *= d.npus;
  }
}

uint64_t AstraSimNetwork::message_ns(int64_t src, int64_t dst, uint64_t bytes) const {
  for (size_t d = 0; d < config_.dims.size(); ++d) {
    const NetworkDim& dim = config_.dims[d];
    const int64_t a = src / stride_[d] % dim.npus, b = dst / stride_[d] % dim.npus;
    if (a == b) continue;
    int64_t hops = 2;  // Switch: up to the switch and down
    if (dim.topology == NetworkTopology::kFullyConnected) hops = 1;
    if (dim.topology == NetworkTopology::kRing) {
      const int64_t clockwise = (b - a + dim.npus) % dim.npus;
      hops = std::min(clockwise, dim.npus - clockwise);
    }
    // The backend's arithmetic, in its order: GB/s to bytes per ns as
    // bandwidth x 2^30 / 1e9, then a truncated sum of doubles.
    const double bytes_per_ns = dim.bandwidth_gbps * static_cast<double>(1 << 30) / 1e9;
    const double link = static_cast<double>(hops) * dim.latency_ns;
    return static_cast<uint64_t>(link + static_cast<double>(bytes) / bytes_per_ns);
  }
  return 0;  // src == dst: never asked
}

namespace {

// One ring phase of `nodes` members on `data` bytes; its messages and sizes.
RingPhase ring_phase(CollectiveKind kind, int64_t nodes, uint64_t data, uint64_t& final_data) {
  RingPhase p;
  p.kind = kind;
  p.nodes = nodes;
  const uint64_t n = static_cast<uint64_t>(nodes);
  switch (kind) {
    case CollectiveKind::kAllReduce:
      p.message_bytes = data / n;
      p.messages = 2 * (nodes - 1);
      final_data = data;
      break;
    case CollectiveKind::kAllGather:
      p.message_bytes = data;
      p.messages = nodes - 1;
      final_data = data * n;
      break;
    case CollectiveKind::kReduceScatter:
      p.message_bytes = data / n;
      p.messages = nodes - 1;
      final_data = data / n;
      break;
    case CollectiveKind::kAllToAll:
      p.message_bytes = data / n;
      p.messages = nodes * (nodes - 1) / 2;
      final_data = data;
      break;
  }
  return p;
}

// This rank's neighbours on the ring of dimension `dim`: one step of the
// dimension's stride, clockwise (receiver ahead) or the other way round.
void set_dimension_neighbours(const AstraSimNetwork& net, size_t dim, int64_t rank, bool clockwise,
                              RingPhase& p) {
  const int64_t stride = net.stride(dim), n = net.config().dims[dim].npus;
  const int64_t index = rank / stride % n;
  const int64_t ahead = rank + ((index + 1) % n - index) * stride;
  const int64_t behind = rank + ((index + n - 1) % n - index) * stride;
  p.receiver = clockwise ? ahead : behind;
  p.sender = clockwise ? behind : ahead;
}

// The phases of a collective on every NPU: one ring per dimension of its
// implementation list.
std::vector<RingPhase> world_phases(const AstraSimNetwork& net, int64_t rank, CollectiveKind kind,
                                    uint64_t chunk) {
  const AstraSimSystem& sys = net.config().system;
  const size_t dims = static_cast<size_t>(sys.implementations[static_cast<int>(kind)]);
  struct Step {
    size_t dim;
    CollectiveKind kind;
    bool clockwise;
  };
  std::vector<Step> steps;
  if (kind == CollectiveKind::kAllReduce && sys.local_bw_aware) {
    for (size_t d = 0; d + 1 < dims; ++d)
      steps.push_back({d, CollectiveKind::kReduceScatter, true});
    steps.push_back({dims - 1, CollectiveKind::kAllReduce, true});
    for (size_t d = dims - 1; d-- > 0;) steps.push_back({d, CollectiveKind::kAllGather, false});
  } else {
    for (size_t d = 0; d < dims; ++d) steps.push_back({d, kind, true});
    if (kind == CollectiveKind::kAllGather) std::reverse(steps.begin(), steps.end());
  }
  std::vector<RingPhase> phases;
  uint64_t data = chunk;
  for (const Step& s : steps) {
    uint64_t next = 0;
    RingPhase p = ring_phase(s.kind, net.config().dims[s.dim].npus, data, next);
    p.queue = static_cast<int>(s.dim);
    set_dimension_neighbours(net, s.dim, rank, s.clockwise, p);
    phases.push_back(p);
    data = next;
  }
  return phases;
}

}  // namespace

CollectivePlan plan_collective(const AstraSimNetwork& net, int64_t rank, CollectiveKind kind,
                               uint64_t bytes, const std::vector<int64_t>& members) {
  const AstraSimSystem& sys = net.config().system;
  const uint64_t splits = static_cast<uint64_t>(sys.preferred_dataset_splits);
  const uint64_t npus = static_cast<uint64_t>(net.npus());
  uint64_t chunk = bytes / splits, total = bytes;
  if (kind != CollectiveKind::kAllGather && npus > chunk) {
    chunk = npus;
    total = splits * chunk;
  }
  CollectivePlan plan;
  if (chunk == 0) return plan;  // ASTRA-sim never completes it
  plan.chunks = static_cast<int64_t>((total + chunk - 1) / chunk);
  if (members.empty() || static_cast<uint64_t>(members.size()) == npus) {
    plan.phases = world_phases(net, rank, kind, chunk);
    return plan;
  }
  uint64_t unused = 0;
  RingPhase p = ring_phase(kind, static_cast<int64_t>(members.size()), chunk, unused);
  const size_t n = members.size();
  const size_t i =
      static_cast<size_t>(std::find(members.begin(), members.end(), rank) - members.begin());
  p.receiver = members[(i + 1) % n];
  p.sender = members[(i + n - 1) % n];
  p.group_ring = true;
  plan.phases.push_back(p);
  return plan;
}

}  // namespace stg::tools
