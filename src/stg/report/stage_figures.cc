#include "stg/report/stage_figures.h"

#include <utility>

#include "stg/lower/kernel_of_op.h"
#include "stg/mesh/axes.h"

namespace stg::report {

// kKernelKinds names OpKernel::Kind's values in order.
static_assert(static_cast<size_t>(lower::OpKernel::Kind::kGemm) == 0 &&
              static_cast<size_t>(lower::OpKernel::Kind::kAttention) == 1 &&
              static_cast<size_t>(lower::OpKernel::Kind::kMemoryBound) == 2 &&
              kKernelKinds.size() == 3);

std::string reported_axis(const mesh::Mesh& mesh, int axis) {
  if (axis < 0) return "other";
  if (axis >= mesh.num_group_kinds()) return "other";
  if (axis >= mesh.size()) return mesh.group_name(axis);  // a stage group: "embedding"
  const std::string& name = mesh.axis(axis).name;
  for (const mesh::AxisSpec& a : mesh::kAxes)  // by name or label: "sp" and "cp" as "cp"
    if (a.kind != mesh::AxisKind::kStage && (name == a.name || name == a.label)) return a.label;
  return "other";
}

std::string p2p_axis(const mesh::Mesh& mesh, const mesh::Peer& peer) {
  return peer.kind == mesh::Peer::Kind::kAxis ? reported_axis(mesh, peer.axis) + " p2p" : "pp";
}

namespace {

// `copies` of node n, whose sizes add up to `flops` and `comm_bytes`.
void count(RankStep& step, const mesh::Mesh& mesh, const LoweredNode& n, int64_t copies,
           int64_t flops, int64_t comm_bytes) {
  switch (n.kind) {
    case NodeKind::kComp:
      step.flops += flops;
      break;
    case NodeKind::kColl:
      step.axes[reported_axis(mesh, n.axis)].add({copies, comm_bytes, 0, 0});
      break;
    // Between stages: "pp"; along a mesh axis (ring attention): "cp p2p".
    case NodeKind::kSend:
      step.axes[p2p_axis(mesh, n.peer)].add({copies, comm_bytes, 0, 0});
      break;
    case NodeKind::kRecv:
      step.axes[p2p_axis(mesh, n.peer)].add({0, 0, copies, comm_bytes});
      break;
  }
}

// The time of node i's copies as the trace writes them (whole
// microseconds, per decode step), to its kernel kind.
void add_kernel_time(RankStep& step, const lower::FlatStage& stage, uint32_t i) {
  const LoweredNode& n = stage.one().nodes[i];
  if (n.kind != NodeKind::kComp || n.kernel_seconds <= 0) return;
  double micros = 0;
  if (stage.repeated(i) && stage.per_step(i)) {
    for (int s = 0; s < stage.decode_steps(); ++s)
      micros +=
          static_cast<double>(stage.micro_batches()) * static_cast<double>(n.duration_micros_at(s));
  } else {
    micros = static_cast<double>(stage.copies(i)) * static_cast<double>(n.duration_micros_at(0));
  }
  step.kernel_seconds.at(n.kernel_kind) += micros * 1e-6;
}

}  // namespace

RankStep stage_step(const StageGraph& stage, const mesh::Mesh& mesh) {
  RankStep step;
  for (const LoweredNode& n : stage.nodes) count(step, mesh, n, 1, n.num_ops, n.comm_size);
  return step;
}

RankStep stage_step(const lower::FlatStage& stage, const mesh::Mesh& mesh) {
  RankStep step;
  const auto& nodes = stage.one().nodes;
  for (uint32_t i = 0; i < nodes.size(); ++i) {
    const LoweredNode& n = nodes[i];
    count(step, mesh, n, stage.copies(i),
          stage.sum_over_copies(i, n.num_ops, n.growth.num_ops, n.first_step_num_ops),
          stage.sum_over_copies(i, n.comm_size, n.growth.comm_size));
    add_kernel_time(step, stage, i);
  }
  return step;
}

StepFigures step_figures(const std::vector<RankStep>& by_stage, const mesh::Mesh& mesh,
                         int64_t first_rank, int64_t last_rank, std::string units) {
  StepFigures f;
  f.units = std::move(units);
  const int64_t per_stage = mesh.ranks_per_stage();
  for (int64_t rank = first_rank; rank <= last_rank; ++rank) {
    const size_t stage = static_cast<size_t>(rank / per_stage);
    if (stage < by_stage.size()) f.add(rank, by_stage[stage]);
  }
  return f;
}

StepFigures step_figures(const std::vector<StageGraph>& stages, const mesh::Mesh& mesh,
                         int64_t first_rank, int64_t last_rank, std::string units) {
  std::vector<RankStep> by_stage;
  for (const StageGraph& stage : stages) by_stage.push_back(stage_step(stage, mesh));
  return step_figures(by_stage, mesh, first_rank, last_rank, std::move(units));
}

}  // namespace stg::report
