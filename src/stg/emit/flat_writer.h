// Chakra v0.0.4 traces of a FlatStage (lower/flat_stage.h): the stage's
// nodes are encoded from the template, micro-batch after micro-batch (and
// decode step after decode step), into
// pieces of about kChunk bytes (a StageTemplate without the ranks' own
// attribute); each piece is spliced for every rank being written and handed
// out, so memory does not grow with the number of micro-batches and the
// encoding is done once for many ranks.
//
// The bytes are those libprotobuf writes for the same nodes (append_trace
// of the stage lowered with every micro-batch): the attributes that are the
// same for every copy are serialised once with libprotobuf; the node's
// id, name, type and dependencies, the SEND/RECV tag, the names with the
// micro-batch number and the rank's group or peer are encoded by hand
// (the copies differ in them, and encoding them through a message per node
// would cost more than the rest of the run).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "stg/emit/stage_template.h"
#include "stg/emit/var_attr.h"
#include "stg/lower/flat_stage.h"
#include "stg/trace_format.h"

namespace stg::emit {

class FlatStageWriter {
 public:
  static constexpr size_t kChunk = size_t{256} << 10;
  // Receives a piece of the file of ranks[index].
  using Sink = std::function<void(size_t index, std::string_view bytes)>;

  FlatStageWriter(const lower::FlatStage& stage, TraceDetail detail);

  // Writes the complete trace files of `ranks` (all on this stage) to
  // `sink`, piece after piece, each piece for every rank in turn. Throws
  // std::out_of_range when a node names a group or peer a rank lacks.
  void write_ranks(const std::vector<RankBinding>& ranks, const Sink& sink) const;
  void write_rank(const RankBinding& rank, const std::function<void(std::string_view)>& sink) const;
  // The whole stage as one template (for a stage of one micro-batch, whose
  // file is small): ranks then splice in their values.
  StageTemplate whole() const;

 private:
  // Parts of a node after its dependencies, in order: attributes serialised
  // once (bytes of blob_), a string list naming the micro-batch (lists_),
  // the SEND/RECV tag, the rank's variable attribute (keys_), a size that
  // grows per decode step (a StepSize).
  struct Piece {
    enum class Kind : uint8_t { kBytes, kList, kTag, kVar, kStepSize };
    Kind kind = Kind::kBytes;
    uint32_t index = 0;  // kBytes: offset in blob_; kList: lists_; kVar: keys_; kStepSize: which
    uint32_t size = 0;   // kBytes
  };
  enum StepSize : uint32_t { kNumOps, kTensorSize, kCommSize };
  struct NodeCode {
    std::string name;
    int32_t name_number_at = -1;  // where the micro-batch number goes (lower/stage_graph.h)
    int32_t name_step_at = -1;    // where the decode step's number goes
    uint32_t type = 0;
    uint32_t first_piece = 0, pieces = 0;
  };
  struct StringList {
    std::string name;  // the attribute's
    std::vector<std::string> values;
    std::vector<int32_t> number_at;  // per value: where the micro-batch number goes
    std::vector<int32_t> step_at;    // per value: where the decode step's number goes
  };
  class Encoder;

  const lower::FlatStage& stage_;
  std::string metadata_;
  std::vector<NodeCode> nodes_;
  std::vector<Piece> pieces_;
  std::string blob_;
  std::vector<StringList> lists_;
  std::vector<VarAttr> keys_;
};

// A lowered stage (any node order, its own tags and ctrl_deps) as one
// template, encoded by the same writer (lower::FlatStage::of_stage).
StageTemplate stage_template(const StageGraph& stage, TraceDetail detail = TraceDetail::kFull);

}  // namespace stg::emit
