// The device mesh: the named parallel axes of a run (docs/facts.md §4).
//
// A rank is a point of the mesh: one coordinate per spatial axis plus its
// pipeline stage. Axes are listed in rank order, the fastest-varying first;
// the stage varies slowest. The model takes its axes, and the symbols its
// shapes use for them, from the table of axes (axes.h); the flags give their
// degrees. Rank numbering, comm groups, sharding and the memory report read
// the mesh, so an axis is added by a row of that table, not by editing
// those. The mesh owns the pipeline degree (stages()).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace stg::mesh {

// What an axis splits; passes that need "the data-parallel axis" ask for
// its kind instead of its symbol. kStage: the pipeline stages (axes.h),
// which the mesh holds as stages(), not as an axis.
enum class AxisKind { kData, kTensor, kSequence, kExpert, kStage, kOther };

// A communicator group that is not an axis: the ranks with the same spatial
// coordinates on a few chosen stages (Megatron's embedding group: the first
// and the last stage, which hold the two copies of a tied embedding).
struct StageGroup {
  std::string name;             // "embedding"
  std::vector<int64_t> stages;  // ascending, at least two
};

// A communicator group over several axes together: the ranks that differ
// only in those axes' coordinates (Megatron-LM's data-parallel group with
// context parallelism, dp x cp, which reduces the gradients).
struct AxisProduct {
  std::string name;       // "dp x cp"
  std::vector<int> axes;  // mesh axis indices, ascending
};

struct MeshAxis {
  std::string name;    // as the user knows it ("dp", "tp", "sp", "ep")
  std::string symbol;  // the symbol standing for its degree in shapes
  int64_t degree = 1;
  AxisKind kind = AxisKind::kOther;
  std::string flag;  // the flag that sets the degree, for messages
};

class Mesh {
 public:
  Mesh() = default;
  Mesh(std::vector<MeshAxis> axes, int64_t stages);

  const std::vector<MeshAxis>& axes() const { return axes_; }
  int size() const { return static_cast<int>(axes_.size()); }
  const MeshAxis& axis(int i) const { return axes_.at(static_cast<size_t>(i)); }
  int64_t stages() const { return stages_; }
  int64_t num_ranks() const { return num_ranks_; }
  int64_t ranks_per_stage() const { return num_ranks_ / stages_; }

  // Index of the axis with this name, or -1.
  int find(std::string_view name) const;
  // Index of the first axis of this kind, or -1.
  int find(AxisKind kind) const;
  // Indices of the axes of degree > 1, in mesh order: the only ones that
  // carry collectives (a one-member group never completes in a simulator).
  std::vector<int> active() const;

  // Stage groups have the group indices size() .. size()+k-1, after the
  // axes, and axis products the next ones: a collective names its group by
  // this index (graph::Comm::axis). Stage groups are added first.
  int add_stage_group(StageGroup group);
  const std::vector<StageGroup>& stage_groups() const { return stage_groups_; }
  int add_axis_product(AxisProduct product);
  const std::vector<AxisProduct>& axis_products() const { return products_; }
  int num_group_kinds() const {
    return size() + static_cast<int>(stage_groups_.size() + products_.size());
  }
  // "dp", "tp", ..., the stage group's or the axis product's name.
  const std::string& group_name(int index) const;

 private:
  std::vector<MeshAxis> axes_;
  std::vector<StageGroup> stage_groups_;
  std::vector<AxisProduct> products_;
  int64_t stages_ = 1;
  int64_t num_ranks_ = 1;
};

}  // namespace stg::mesh
