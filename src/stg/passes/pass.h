// The pass pipeline, in the spirit of LLVM's new pass manager: a pass is a
// small object with a name and one `run(Graph&, Analyses&)`; a PassManager
// runs an ordered list of them and prints it (`stg --print_passes`).
// Analyses holds what passes read but do not own (the mesh, the numbers
// bound to symbols) and facts derived from the graph that several passes
// need, computed once and dropped whenever a pass changes the graph.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "stg/expr/values.h"
#include "stg/graph/graph.h"
#include "stg/mesh/mesh.h"

namespace stg::passes {

class Analyses {
 public:
  Analyses(const mesh::Mesh& mesh, const expr::Values& values) : mesh_(mesh), values_(values) {}

  const mesh::Mesh& mesh() const { return mesh_; }
  const expr::Values& values() const { return values_; }

  // Per tensor: the index of its gradient when it is a weight with one
  // (a tensor whose grad_of names it), else -1.
  const std::vector<int>& gradient_of(const graph::Graph& g);
  // Per pipeline stage: its tensors in graph order (Tensor::stage).
  const std::vector<std::vector<int>>& stage_members(const graph::Graph& g);

  // Drops every cached analysis; the pass manager calls it after each pass.
  void invalidate();

 private:
  const mesh::Mesh& mesh_;
  const expr::Values& values_;
  std::vector<int> gradient_of_;
  bool have_gradient_of_ = false;
  std::vector<std::vector<int>> stage_members_;
  bool have_stage_members_ = false;
};

class Pass {
 public:
  virtual ~Pass() = default;
  // Lower-case, dash-separated ("insert-collectives"); --dump_after takes it.
  virtual std::string_view name() const = 0;
  virtual void run(graph::Graph& g, Analyses& analyses) = 0;
};

class PassManager {
 public:
  // Called after each pass with its name and the graph it left.
  using Observer = std::function<void(std::string_view pass, const graph::Graph& g)>;

  PassManager& add(std::unique_ptr<Pass> pass) {
    passes_.push_back(std::move(pass));
    return *this;
  }
  template <typename P, typename... Args>
  PassManager& emplace(Args&&... args) {
    return add(std::make_unique<P>(std::forward<Args>(args)...));
  }

  void run(graph::Graph& g, Analyses& analyses, const Observer& after = {}) const;

  std::vector<std::string> names() const;
  // One pass per line, numbered: "1. bind-symbols".
  std::string print() const;
  bool contains(std::string_view name) const;

 private:
  std::vector<std::unique_ptr<Pass>> passes_;
};

}  // namespace stg::passes
