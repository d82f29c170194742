#include "stg/mesh/mesh.h"

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

}  // namespace stg::mesh
