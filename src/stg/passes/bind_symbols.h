// Binds symbols that a model leaves open to expressions of others, e.g. the
// ZeRO/FSDP shard symbols of the later models ("weights sharded by `fsdp`",
// bound to the data-parallel degree or to 1). The model says what to bind
// (models/model.h); this pass only substitutes.
#pragma once

#include <map>
#include <string>

#include "stg/passes/pass.h"

namespace stg::passes {

class BindSymbols : public Pass {
 public:
  explicit BindSymbols(std::map<std::string, expr::Expr> bindings)
      : bindings_(std::move(bindings)) {}
  std::string_view name() const override { return "bind-symbols"; }
  void run(graph::Graph& g, Analyses&) override { g.substitute(bindings_); }

 private:
  std::map<std::string, expr::Expr> bindings_;
};

}  // namespace stg::passes
