#include "stg/passes/pass.h"

namespace stg::passes {

const std::vector<int>& Analyses::gradient_of(const graph::Graph& g) {
  if (!have_gradient_of_) {
    gradient_of_.assign(g.size(), -1);
    for (size_t i = 0; i < g.size(); ++i)
      if (g[i].grad_of >= 0) gradient_of_[g[i].grad_of] = static_cast<int>(i);
    have_gradient_of_ = true;
  }
  return gradient_of_;
}

const std::vector<std::vector<int>>& Analyses::stage_members(const graph::Graph& g) {
  if (!have_stage_members_) {
    stage_members_ = graph::tensors_by_stage(g, static_cast<int>(mesh_.stages()));
    have_stage_members_ = true;
  }
  return stage_members_;
}

void Analyses::invalidate() {
  have_gradient_of_ = have_stage_members_ = false;
  gradient_of_.clear();
  stage_members_.clear();
}

void PassManager::run(graph::Graph& g, Analyses& analyses, const Observer& after) const {
  for (const auto& pass : passes_) {
    pass->run(g, analyses);
    analyses.invalidate();
    if (after) after(pass->name(), g);
  }
}

std::vector<std::string> PassManager::names() const {
  std::vector<std::string> out;
  for (const auto& pass : passes_) out.emplace_back(pass->name());
  return out;
}

std::string PassManager::print() const {
  std::string out;
  int i = 0;
  for (const auto& pass : passes_)
    out += std::to_string(++i) + ". " + std::string(pass->name()) + "\n";
  return out;
}

bool PassManager::contains(std::string_view name) const {
  for (const auto& pass : passes_)
    if (pass->name() == name) return true;
  return false;
}

}  // namespace stg::passes
