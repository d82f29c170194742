#include "stg/lower/expand_stage.h"

#include <map>
#include <string>
#include <utility>

namespace stg::lower {
namespace {

std::string numbered(const std::string& text, int32_t at, const std::string& number,
                     int32_t step_at, const std::string& step) {
  std::string out;
  append_numbered(out, text, at, number, step_at, step);
  return out;
}

// A micro-batch's (and decode step's) copies of the stage's tensor entries;
// entries without the numbers are shared as they are.
class Entries {
 public:
  void set_copy(int mb, int step) {
    if (mb == mb_ && step == step_) return;
    mb_ = mb;
    step_ = step;
    number_ = std::to_string(mb);
    step_number_ = std::to_string(step);
    copies_.clear();
  }
  TensorInfoRef operator()(const TensorInfoRef& info) {
    if (info->name_number_at < 0 && info->name_step_at < 0) return info;
    TensorInfoRef& copy = copies_[info.get()];
    if (!copy)
      copy = make_tensor_info(
          numbered(info->name, info->name_number_at, number_, info->name_step_at, step_number_),
          info->size, info->name_number_at, info->name_step_at);
    return copy;
  }
  const std::string& number() const { return number_; }
  const std::string& step_number() const { return step_number_; }

 private:
  int mb_ = -1, step_ = -1;
  std::string number_, step_number_;
  std::map<const TensorInfo*, TensorInfoRef> copies_;
};

}  // namespace

StageGraph expand(const FlatStage& stage) {
  StageGraph out;
  out.stage = stage.one().stage;
  out.feeder_attributes = stage.one().feeder_attributes;
  out.nodes.reserve(stage.num_nodes());
  Entries entries;
  for (const FlatStage::Instance& in : stage.instances()) {
    for (uint32_t t : stage.lists()[in.list].nodes) {
      const LoweredNode& node = stage.one().nodes[t];
      // A node written once names micro-batch 0 where it names one (a
      // gradient sum's first input), as the flat writer does.
      const bool repeated = stage.repeated(t);
      const int step = in.step;
      entries.set_copy(repeated ? in.micro_batch : 0, step);
      LoweredNode copy = node;
      copy.id = stage.id(t, in.micro_batch, step);
      copy.name = numbered(node.name, node.name_number_at, entries.number(), node.name_step_at,
                           entries.step_number());
      copy.data_deps.clear();
      stage.data_deps(t, in.micro_batch, copy.data_deps, step);
      copy.ctrl_deps.clear();
      stage.ctrl_deps(t, in.micro_batch, copy.ctrl_deps, step);
      if (node.kind == NodeKind::kSend || node.kind == NodeKind::kRecv)
        copy.tag = stage.tag(t, in.micro_batch, step);
      for (auto* list : {&copy.inputs, &copy.outputs})
        for (TensorInfoRef& info : *list) info = entries(info);
      if (repeated) copy.micro_batch = in.micro_batch;
      // The copy's own sizes; its decode step (a template's is step 0).
      copy.num_ops = node.num_ops_at(step);
      copy.tensor_size = node.tensor_size_at(step);
      copy.y_tensor_size = node.y_tensor_size_at(step);
      copy.comm_size = node.comm_size_at(step);
      copy.state_bytes_read = node.state_bytes_read_at(step);
      copy.kernel_seconds += static_cast<double>(step) * node.growth.kernel_seconds;
      copy.growth = {};
      copy.first_step_num_ops = 0;
      copy.first_step_tensor_size = 0;
      copy.previous_step_deps.clear();
      copy.phase_step = node.phase_step + step;
      copy.succeeds = -1;
      out.nodes.push_back(std::move(copy));
    }
  }
  return out;
}

}  // namespace stg::lower
