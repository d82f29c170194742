#include "stg/lower/expand_stage.h"

#include <map>
#include <string>
#include <utility>

namespace stg::lower {
namespace {

std::string numbered(const std::string& text, int32_t at, const std::string& number) {
  std::string out;
  append_numbered(out, text, at, number);
  return out;
}

// A micro-batch's copies of the stage's tensor entries; entries without the
// micro-batch number are shared as they are.
class Entries {
 public:
  void set_micro_batch(int mb) {
    if (mb == mb_) return;
    mb_ = mb;
    number_ = std::to_string(mb);
    copies_.clear();
  }
  TensorInfoRef operator()(const TensorInfoRef& info) {
    if (info->name_number_at < 0) return info;
    TensorInfoRef& copy = copies_[info.get()];
    if (!copy)
      copy = make_tensor_info(numbered(info->name, info->name_number_at, number_), info->size,
                              info->name_number_at);
    return copy;
  }
  const std::string& number() const { return number_; }

 private:
  int mb_ = -1;
  std::string number_;
  std::map<const TensorInfo*, TensorInfoRef> copies_;
};

}  // namespace

StageGraph expand(const FlatStage& stage) {
  StageGraph out;
  out.stage = stage.one().stage;
  out.nodes.reserve(stage.num_nodes());
  Entries entries;
  for (const FlatStage::Instance& in : stage.instances()) {
    for (uint32_t t : stage.lists()[in.list].nodes) {
      const LoweredNode& node = stage.one().nodes[t];
      // A node written once names micro-batch 0 where it names one (a
      // gradient sum's first input), as the flat writer does.
      const bool repeated = stage.repeated(t);
      entries.set_micro_batch(repeated ? in.micro_batch : 0);
      LoweredNode copy = node;
      copy.id = stage.id(t, in.micro_batch);
      copy.name = numbered(node.name, node.name_number_at, entries.number());
      copy.data_deps.clear();
      stage.data_deps(t, in.micro_batch, copy.data_deps);
      copy.ctrl_deps.clear();
      stage.ctrl_deps(t, in.micro_batch, copy.ctrl_deps);
      if (node.kind == NodeKind::kSend || node.kind == NodeKind::kRecv)
        copy.tag = stage.tag(t, in.micro_batch);
      for (auto* list : {&copy.inputs, &copy.outputs})
        for (TensorInfoRef& info : *list) info = entries(info);
      if (repeated) copy.micro_batch = in.micro_batch;
      out.nodes.push_back(std::move(copy));
    }
  }
  return out;
}

}  // namespace stg::lower
