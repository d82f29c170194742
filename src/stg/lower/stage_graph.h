// The lowered form of one pipeline stage: the Chakra nodes every rank of the
// stage writes. Ranks of a stage differ only in the group id of each
// collective, the peer rank of each send/recv; both come from a RankBinding.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace stg {

enum class NodeKind { kComp, kColl, kSend, kRecv };
enum class CollType { kAllReduce, kAllGather, kReduceScatter, kAllToAll };

// Spatial parallel axes, in the order groups are numbered (DESIGN.md §6).
enum class Axis : int { kDp = 0, kTp = 1, kSp = 2, kEp = 3 };
inline constexpr int kNumAxes = 4;

// One entry of the `inputs`/`outputs` string lists: tensor name (id plus
// shape text) and its size text, as the later reference writes them.
struct TensorInfo {
  std::string name;
  std::string size;
};
// Nodes of a stage share the entries of the tensors they read and write (a
// tensor feeds several nodes; the strings are long).
using TensorInfoRef = std::shared_ptr<const TensorInfo>;
inline TensorInfoRef make_tensor_info(std::string name, std::string size) {
  return std::make_shared<const TensorInfo>(TensorInfo{std::move(name), std::move(size)});
}

struct LoweredNode {
  uint64_t id = 0;
  std::string name;
  NodeKind kind = NodeKind::kComp;
  std::vector<uint64_t> data_deps;
  std::vector<uint64_t> ctrl_deps;
  // Element count of the tensor this node makes available (the seed-era
  // `y_tensor_size`, written by the v0.0.1-era JSON layout only).
  int64_t y_tensor_size = 0;
  std::vector<TensorInfoRef> inputs;
  std::vector<TensorInfoRef> outputs;

  // kComp
  int64_t num_ops = 0;
  uint64_t tensor_size = 0;
  std::string op_type;

  // kColl
  CollType coll = CollType::kAllReduce;
  Axis axis = Axis::kDp;
  int64_t comm_size = 0;  // also send/recv size

  // kSend / kRecv: the peer is the rank with the same spatial coordinates
  // on stage `peer_stage`.
  int peer_stage = 0;
  int32_t tag = 0;
};

struct StageGraph {
  int stage = 0;
  std::vector<LoweredNode> nodes;  // file order; ids are unique in the stage
};

// What differs between the ranks of one stage.
struct RankBinding {
  int64_t rank = 0;
  // Comm-group id (key of the comm-group file) of this rank's group on each
  // axis; 0 when the axis does not exist in this run.
  std::array<int64_t, kNumAxes> group_id{};
  // Rank with the same spatial coordinates on each stage (index = stage).
  std::vector<int64_t> rank_on_stage;
};

}  // namespace stg
