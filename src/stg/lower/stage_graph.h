// The lowered form of one pipeline stage: the Chakra nodes every rank of the
// stage writes. Ranks of a stage differ only in the group id of each
// collective, the peer rank of each send/recv; both come from a RankBinding.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "stg/graph/comm.h"
#include "stg/graph/tensor.h"
#include "stg/hardware/kernel_model.h"
#include "stg/mesh/peer.h"

namespace stg {

enum class NodeKind { kComp, kColl, kSend, kRecv };
using graph::CollType;
using mesh::RankBinding;

// One entry of the `inputs`/`outputs` string lists: tensor name (id plus
// shape text) and its size text, as the later reference writes them.
struct TensorInfo {
  std::string name;
  std::string size;
  int32_t name_number_at = -1;  // graph::Tensor::number_at, in `name`
  int32_t name_step_at = -1;    // graph::Tensor::step_at, in `name`
};
// Nodes of a stage share the entries of the tensors they read and write (a
// tensor feeds several nodes; the strings are long).
using TensorInfoRef = std::shared_ptr<const TensorInfo>;
inline TensorInfoRef make_tensor_info(std::string name, std::string size,
                                      int32_t name_number_at = -1, int32_t name_step_at = -1) {
  return std::make_shared<const TensorInfo>(
      TensorInfo{std::move(name), std::move(size), name_number_at, name_step_at});
}

// A template's text (a name of micro-batch 0) for another micro-batch:
// `number` in place of the "0" at `at` (-1: the text has no number).
inline void append_numbered(std::string& out, std::string_view text, int32_t at,
                            std::string_view number) {
  if (at < 0) {
    out.append(text);
    return;
  }
  out.append(text.substr(0, static_cast<size_t>(at)));
  out.append(number);
  out.append(text.substr(static_cast<size_t>(at) + 1));
}

// The same with a decode-step template's step number too: `step` in place
// of the "0" at `step_at` (-1: none).
inline void append_numbered(std::string& out, std::string_view text, int32_t at,
                            std::string_view number, int32_t step_at, std::string_view step) {
  if (step_at < 0) {
    append_numbered(out, text, at, number);
    return;
  }
  if (at < 0) {
    append_numbered(out, text, step_at, step);
    return;
  }
  // Both: the earlier place first.
  const bool mb_first = at < step_at;
  const auto first = static_cast<size_t>(mb_first ? at : step_at);
  const auto second = static_cast<size_t>(mb_first ? step_at : at);
  out.append(text.substr(0, first));
  out.append(mb_first ? number : step);
  out.append(text.substr(first + 1, second - first - 1));
  out.append(mb_first ? step : number);
  out.append(text.substr(second + 1));
}

// How much a node's sizes grow per decode step (lower/step_growth.h): the
// sizes that depend on the context length, such as attention over the KV
// cache. Zero everywhere else.
struct StepGrowth {
  int64_t num_ops = 0;
  int64_t tensor_size = 0;
  int64_t y_tensor_size = 0;
  int64_t comm_size = 0;
  int64_t state_bytes_read = 0;
  double kernel_seconds = 0;  // follows the sizes; not a size of its own
  bool any() const {
    return num_ops != 0 || tensor_size != 0 || y_tensor_size != 0 || comm_size != 0 ||
           state_bytes_read != 0;
  }
};

struct LoweredNode {
  uint64_t id = 0;
  std::string name;
  int32_t name_number_at = -1;  // graph::Tensor::number_at, in `name`
  int32_t name_step_at = -1;    // graph::Tensor::step_at, in `name`
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
  // kComp, when tensor_size counts the bytes moved: the part of it read from
  // weights and from persistent state (a KV cache).
  uint64_t weight_bytes_read = 0;
  uint64_t state_bytes_read = 0;
  // kComp under --compute_time model: the kernel model's time (0: none;
  // lower/kernel_of_op.h), written as duration_micros, and which kind of
  // kernel it is (OpKernel::Kind's value; the step's time by kernel kind).
  double kernel_seconds = 0;
  uint8_t kernel_kind = 0;

  // kColl
  CollType coll = CollType::kAllReduce;
  int axis = 0;           // mesh axis of the collective's group
  int64_t comm_size = 0;  // also send/recv size

  // kSend / kRecv: the other end, relative to the writing rank.
  mesh::Peer peer;
  int32_t tag = 0;

  // Where the node comes from: its tensor's micro-batch (-1: none, e.g. a
  // weight's update) and phase and, for a compute node that the pipeline
  // schedule orders, its step's chunk and phase step (lower/flat_stage.h
  // reads these).
  int micro_batch = -1;
  bool scheduled = false;
  graph::Phase phase = graph::Phase::kForward;  // graph::phase_of its tensor
  int phase_step = 0;
  int chunk = 0;
  // In a decode-step template: written once per decode step (its tensor's
  // phase is decode), and the node of an earlier phase whose part it takes
  // in the next step (graph::Tensor::succeeds; -1: none). `growth`: how
  // much its sizes grow per step.
  bool per_step = false;
  int64_t succeeds = -1;
  StepGrowth growth;
  // In a decode-step template: the work of a token copy folded into this
  // node in decode step 0 only (lower/fold_token_copy.h), and the nodes of
  // the step whose previous step's copies it reads from step 1 on (the
  // folded copy's successor: the token sampled before it).
  int64_t first_step_num_ops = 0;
  uint64_t first_step_tensor_size = 0;
  std::vector<uint64_t> previous_step_deps;

  // Sizes in decode step `step` (0: the template's own).
  int64_t num_ops_at(int64_t step) const {
    return num_ops + step * growth.num_ops + (step == 0 ? first_step_num_ops : 0);
  }
  uint64_t tensor_size_at(int64_t step) const {
    return tensor_size + static_cast<uint64_t>(step * growth.tensor_size) +
           (step == 0 ? first_step_tensor_size : 0);
  }
  int64_t y_tensor_size_at(int64_t step) const {
    return y_tensor_size + step * growth.y_tensor_size;
  }
  int64_t comm_size_at(int64_t step) const { return comm_size + step * growth.comm_size; }
  // duration_micros in decode step `step` (0 without the kernel model):
  // the time grows linearly with the context, as the sizes it follows do.
  uint64_t duration_micros_at(int64_t step) const {
    if (kernel_seconds <= 0) return 0;
    return hardware::duration_micros(kernel_seconds +
                                     static_cast<double>(step) * growth.kernel_seconds);
  }
  uint64_t state_bytes_read_at(int64_t step) const {
    return state_bytes_read + static_cast<uint64_t>(step * growth.state_bytes_read);
  }
};

struct StageGraph {
  int stage = 0;
  // The v0.0.4 attributes Chakra's ETFeeder reads besides the reference's
  // (lower::LowerOptions::feeder_attributes).
  bool feeder_attributes = false;
  std::vector<LoweredNode> nodes;  // file order; ids are unique in the stage
};

}  // namespace stg
