#include "stg/report/stage_figures.h"

#include <utility>

namespace stg::report {

std::string reported_axis(const mesh::Mesh& mesh, int axis) {
  if (axis < 0) return "other";
  if (axis >= mesh.num_group_kinds()) return "other";
  if (axis >= mesh.size()) return mesh.group_name(axis);  // a stage group: "embedding"
  const std::string& name = mesh.axis(axis).name;
  if (name == "sp" || name == "cp") return "cp";
  if (name == "dp" || name == "tp" || name == "ep") return name;
  return "other";
}

StepFigures step_figures(const std::vector<StageGraph>& stages, const mesh::Mesh& mesh,
                         int64_t first_rank, int64_t last_rank, std::string units) {
  std::vector<RankStep> by_stage(stages.size());
  for (size_t s = 0; s < stages.size(); ++s) {
    RankStep& step = by_stage[s];
    for (const LoweredNode& n : stages[s].nodes) {
      switch (n.kind) {
        case NodeKind::kComp:
          step.flops += n.num_ops;
          break;
        case NodeKind::kColl:
          step.axes[reported_axis(mesh, n.axis)].add({1, n.comm_size, 0, 0});
          break;
        case NodeKind::kSend:
          step.axes["pp"].add({1, n.comm_size, 0, 0});
          break;
        case NodeKind::kRecv:
          step.axes["pp"].add({0, 0, 1, n.comm_size});
          break;
      }
    }
  }
  StepFigures f;
  f.units = std::move(units);
  const int64_t per_stage = mesh.ranks_per_stage();
  for (int64_t rank = first_rank; rank <= last_rank; ++rank) {
    const size_t stage = static_cast<size_t>(rank / per_stage);
    if (stage < by_stage.size()) f.add(rank, by_stage[stage]);
  }
  return f;
}

}  // namespace stg::report
