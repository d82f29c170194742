#include "stg/emit/flat_writer.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>

#include "et_def_v004.pb.h"
#include "stg/emit/et_v004.h"
#include "stg/emit/stage_template.h"
#include "stg/emit/trace_writer.h"

namespace stg::emit {

namespace pb = ChakraProtoMsg;

namespace {

// Protobuf wire tags of the fields encoded by hand.
constexpr char kIdTag = (1 << 3) | 0;        // Node.id
constexpr char kNameTag = (2 << 3) | 2;      // Node.name
constexpr char kTypeTag = (3 << 3) | 0;      // Node.type
constexpr char kCtrlDepsTag = (4 << 3) | 2;  // Node.ctrl_deps, packed
constexpr char kDataDepsTag = (5 << 3) | 2;  // Node.data_deps, packed
constexpr char kDurationTag = (7 << 3) | 0;  // Node.duration_micros
// AttributeProto.string_list (field 30, a 2-byte varint tag).
constexpr char kAttrStringListTag[] = {static_cast<char>(((30 << 3) | 2) | 0x80), 0x01};
constexpr char kListValueTag = (1 << 3) | 2;  // StringList.values

size_t varint_size(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

// The `inputs` or `outputs` list of a node, as add_tensor_list writes it:
// name, size, name, size, ...; per value, where the micro-batch number (or
// the decode step's) is.
std::vector<int32_t> tensor_list_numbers(const std::vector<TensorInfoRef>& tensors, bool step) {
  std::vector<int32_t> out;
  for (const TensorInfoRef& t : tensors) {
    out.push_back(step ? t->name_step_at : t->name_number_at);
    out.push_back(-1);
  }
  return out;
}

// Which size attribute of `n` grows per decode step (in the order of
// FlatStageWriter::StepSize), if `name` is one.
std::optional<uint32_t> step_size(const LoweredNode& n, const std::string& name) {
  if (name == "num_ops" && (n.growth.num_ops != 0 || n.first_step_num_ops != 0)) return 0;
  if (name == "tensor_size" && (n.growth.tensor_size != 0 || n.first_step_tensor_size != 0))
    return 1;
  if (name == "comm_size" && n.growth.comm_size != 0) return 2;
  return std::nullopt;
}

bool any_number(const std::vector<int32_t>& at) {
  return std::any_of(at.begin(), at.end(), [](int32_t a) { return a >= 0; });
}

}  // namespace

FlatStageWriter::FlatStageWriter(const lower::FlatStage& stage, TraceDetail detail)
    : stage_(stage) {
  detail::append_metadata_v004(metadata_);
  const std::vector<LoweredNode>& nodes = stage.one().nodes;
  const RankBinding dummy = binding_for_layout(nodes);
  nodes_.reserve(nodes.size());
  pb::Node node;
  std::string bytes;
  for (const LoweredNode& n : nodes) {
    node.Clear();
    const int var_attr =
        detail::fill_node_v004(node, n, dummy, detail, stage.one().feeder_attributes);
    NodeCode code;
    code.name = node.name();
    // Short names (--trace_detail sim) name no micro-batch.
    code.name_number_at = detail == TraceDetail::kFull ? n.name_number_at : -1;
    code.name_step_at = detail == TraceDetail::kFull ? n.name_step_at : -1;
    code.type = static_cast<uint32_t>(node.type());
    code.first_piece = static_cast<uint32_t>(pieces_.size());
    for (int i = 0; i < node.attr_size(); ++i) {
      const pb::AttributeProto& attr = node.attr(i);
      std::vector<int32_t> numbers, steps;
      if (attr.has_string_list() && (attr.name() == "inputs" || attr.name() == "outputs")) {
        const auto& tensors = attr.name() == "inputs" ? n.inputs : n.outputs;
        numbers = tensor_list_numbers(tensors, false);
        steps = tensor_list_numbers(tensors, true);
      }
      Piece piece;
      if (const std::optional<uint32_t> size = step_size(n, attr.name())) {
        piece.kind = Piece::Kind::kStepSize;
        piece.index = *size;
      } else if (i == var_attr) {
        piece.kind = Piece::Kind::kVar;
        const VarAttr key = VarAttr::of(n);
        piece.index =
            static_cast<uint32_t>(std::find(keys_.begin(), keys_.end(), key) - keys_.begin());
        if (piece.index == keys_.size()) keys_.push_back(key);
      } else if (attr.name() == "comm_tag") {
        piece.kind = Piece::Kind::kTag;
      } else if (any_number(numbers) || any_number(steps)) {
        piece.kind = Piece::Kind::kList;
        piece.index = static_cast<uint32_t>(lists_.size());
        lists_.push_back({attr.name(),
                          {attr.string_list().values().begin(), attr.string_list().values().end()},
                          std::move(numbers),
                          std::move(steps)});
      } else {
        bytes.clear();
        attr.SerializeToString(&bytes);
        const auto offset = static_cast<uint32_t>(blob_.size());
        blob_ += kNodeAttrTag;
        detail::append_varint(blob_, bytes.size());
        blob_ += bytes;
        const auto size = static_cast<uint32_t>(blob_.size() - offset);
        // Consecutive fixed attributes are copied as one run.
        if (code.pieces > 0 && pieces_.back().kind == Piece::Kind::kBytes &&
            pieces_.back().index + pieces_.back().size == offset) {
          pieces_.back().size += size;
          continue;
        }
        piece.index = offset;
        piece.size = size;
      }
      pieces_.push_back(piece);
      ++code.pieces;
    }
    nodes_.push_back(std::move(code));
  }
}

// Encodes the stage into pieces and hands each out for every rank.
class FlatStageWriter::Encoder {
 public:
  Encoder(const FlatStageWriter& w, const std::vector<RankBinding>& ranks, const Sink& sink,
          size_t chunk = kChunk)
      : w_(w), ranks_(ranks), sink_(sink), chunk_(chunk) {
    piece_.add_bytes(w.metadata_);
  }

  // Every node into one template (no pieces handed out).
  StageTemplate whole() && {
    encode();
    return std::move(piece_);
  }

  void run() {
    encode();
    flush();
  }

 private:
  void encode() {
    const lower::FlatStage& stage = w_.stage_;
    for (const lower::FlatStage::Instance& in : stage.instances()) {
      set_step(in.step);
      for (uint32_t t : stage.lists()[in.list].nodes) {
        // A node written once names micro-batch 0 where it names one (a
        // gradient sum's first input).
        set_number(stage.repeated(t) ? in.micro_batch : 0);
        node(t, in.micro_batch, in.step);
      }
    }
  }

  void flush() {
    for (size_t i = 0; i < ranks_.size(); ++i) {
      out_.clear();
      piece_.append_rank(out_, ranks_[i]);
      sink_(i, out_);
    }
    piece_.clear();
  }

  void set_number(int mb) {
    if (mb == number_of_) return;
    number_of_ = mb;
    auto [end, ec] = std::to_chars(number_, number_ + sizeof number_, mb);
    number_size_ = static_cast<size_t>(end - number_);
  }

  void set_step(int step) {
    if (step == step_of_) return;
    step_of_ = step;
    auto [end, ec] = std::to_chars(step_, step_ + sizeof step_, step);
    step_size_ = static_cast<size_t>(end - step_);
  }

  // `text` with the micro-batch number at `at` and the decode step's at
  // `step_at`.
  void render(std::string& out, std::string_view text, int32_t at, int32_t step_at) const {
    append_numbered(out, text, at, std::string_view(number_, number_size_), step_at,
                    std::string_view(step_, step_size_));
  }

  void packed(char tag, const std::vector<uint64_t>& values) {
    if (values.empty()) return;
    size_t size = 0;
    for (uint64_t v : values) size += varint_size(v);
    body_ += tag;
    detail::append_varint(body_, size);
    for (uint64_t v : values) detail::append_varint(body_, v);
  }

  void node(uint32_t t, int mb, int step) {
    const NodeCode& code = w_.nodes_[t];
    const lower::FlatStage& stage = w_.stage_;
    body_.clear();
    var_at_ = std::string::npos;
    const uint64_t id = stage.id(t, mb, step);
    if (id != 0) {
      body_ += kIdTag;
      detail::append_varint(body_, id);
    }
    if (!code.name.empty()) {
      text_.clear();
      render(text_, code.name, code.name_number_at, code.name_step_at);
      body_ += kNameTag;
      detail::append_varint(body_, text_.size());
      body_ += text_;
    }
    if (code.type != 0) {
      body_ += kTypeTag;
      detail::append_varint(body_, code.type);
    }
    deps_.clear();
    stage.ctrl_deps(t, mb, deps_, step);
    packed(kCtrlDepsTag, deps_);
    deps_.clear();
    stage.data_deps(t, mb, deps_, step);
    packed(kDataDepsTag, deps_);
    // --compute_time model: the kernel model's time, in this decode step.
    if (const uint64_t micros = stage.one().nodes[t].duration_micros_at(step)) {
      body_ += kDurationTag;
      detail::append_varint(body_, micros);
    }
    for (uint32_t p = code.first_piece; p < code.first_piece + code.pieces; ++p) {
      const Piece& piece = w_.pieces_[p];
      switch (piece.kind) {
        case Piece::Kind::kBytes:
          body_.append(w_.blob_, piece.index, piece.size);
          break;
        case Piece::Kind::kVar:
          var_at_ = body_.size();  // spliced per rank
          var_key_ = piece.index;
          break;
        case Piece::Kind::kTag:
          tag(stage.tag(t, mb, step));
          break;
        case Piece::Kind::kStepSize:
          step_size_attr(stage.one().nodes[t], piece.index, step);
          break;
        case Piece::Kind::kList:
          list(w_.lists_[piece.index]);
          break;
      }
    }
    if (var_at_ == std::string::npos) {
      text_.clear();
      detail::append_varint(text_, body_.size());
      piece_.add_bytes(text_);
      piece_.add_bytes(body_);
    } else {
      const std::string_view body = body_;
      piece_.add_var_node(body.substr(0, var_at_), w_.keys_[var_key_], body.substr(var_at_));
    }
    if (piece_.size() >= chunk_) flush();
  }

  // A size attribute in decode step `step`.
  void step_size_attr(const LoweredNode& n, uint32_t which, int step) {
    char attr[kMaxVarAttrBytes];
    size_t size = 0;
    switch (which) {
      case kNumOps:
        size = encode_int64_attr(attr, "num_ops", n.num_ops_at(step));
        break;
      case kTensorSize:
        size = encode_uint64_attr(attr, "tensor_size", n.tensor_size_at(step));
        break;
      default:
        size = encode_int64_attr(attr, "comm_size", n.comm_size_at(step));
    }
    body_.append(attr, size);
  }

  // AttributeProto {name: "comm_tag", int32_val: tag}.
  void tag(int32_t value) {
    char attr[kMaxVarAttrBytes];
    body_.append(attr, encode_int32_attr(attr, "comm_tag", value));
  }

  // AttributeProto {name, string_list {values}} with the number in place.
  void list(const StringList& l) {
    text_.clear();  // the StringList message
    for (size_t k = 0; k < l.values.size(); ++k) {
      const std::string& v = l.values[k];
      value_.clear();
      render(value_, v, l.number_at[k], l.step_at[k]);
      text_ += kListValueTag;
      detail::append_varint(text_, value_.size());
      text_ += value_;
    }
    const size_t attr_size = 1 + varint_size(l.name.size()) + l.name.size() +
                             sizeof kAttrStringListTag + varint_size(text_.size()) + text_.size();
    body_ += kNodeAttrTag;
    detail::append_varint(body_, attr_size);
    body_ += kAttrNameTag;
    detail::append_varint(body_, l.name.size());
    body_ += l.name;
    body_.append(kAttrStringListTag, sizeof kAttrStringListTag);
    detail::append_varint(body_, text_.size());
    body_ += text_;
  }

  const FlatStageWriter& w_;
  const std::vector<RankBinding>& ranks_;
  const Sink& sink_;
  const size_t chunk_;
  StageTemplate piece_;
  size_t var_at_ = std::string::npos;  // where the node's variable attribute goes
  uint32_t var_key_ = 0;
  std::string out_, body_, text_, value_;
  std::vector<uint64_t> deps_;
  char number_[12] = {};
  size_t number_size_ = 0;
  int number_of_ = -1;  // the micro-batch number_ holds
  char step_[12] = {};
  size_t step_size_ = 0;
  int step_of_ = -1;  // the decode step step_ holds
};

StageTemplate FlatStageWriter::whole() const {
  const std::vector<RankBinding> none;
  const Sink no_sink;
  return Encoder(*this, none, no_sink, SIZE_MAX).whole();
}

StageTemplate stage_template(const StageGraph& stage, TraceDetail detail) {
  const lower::FlatStage one = lower::FlatStage::of_stage(stage);
  return FlatStageWriter(one, detail).whole();
}

void FlatStageWriter::write_ranks(const std::vector<RankBinding>& ranks, const Sink& sink) const {
  Encoder(*this, ranks, sink).run();
}

void FlatStageWriter::write_rank(const RankBinding& rank,
                                 const std::function<void(std::string_view)>& sink) const {
  write_ranks({rank}, [&](size_t, std::string_view bytes) { sink(bytes); });
}

}  // namespace stg::emit
