#include "stg/mesh/mesh.h"

#include <stdexcept>

namespace stg::mesh {

Mesh::Mesh(std::vector<MeshAxis> axes, int64_t stages)
    : axes_(std::move(axes)), stages_(stages), num_ranks_(stages) {
  for (const MeshAxis& a : axes_) num_ranks_ *= a.degree;
}

int Mesh::find(std::string_view name) const {
  for (int i = 0; i < size(); ++i)
    if (axes_[i].name == name) return i;
  return -1;
}

int Mesh::find(AxisKind kind) const {
  for (int i = 0; i < size(); ++i)
    if (axes_[i].kind == kind) return i;
  return -1;
}

std::vector<int> Mesh::active() const {
  std::vector<int> out;
  for (int i = 0; i < size(); ++i)
    if (axes_[i].degree > 1) out.push_back(i);
  return out;
}

int Mesh::add_stage_group(StageGroup group) {
  if (!products_.empty()) throw std::logic_error("stage groups are added before axis products");
  stage_groups_.push_back(std::move(group));
  return num_group_kinds() - 1;
}

int Mesh::add_axis_product(AxisProduct product) {
  products_.push_back(std::move(product));
  return num_group_kinds() - 1;
}

const std::string& Mesh::group_name(int index) const {
  if (index < size()) return axis(index).name;
  const size_t k = static_cast<size_t>(index - size());
  if (k < stage_groups_.size()) return stage_groups_[k].name;
  return products_.at(k - stage_groups_.size()).name;
}

}  // namespace stg::mesh
