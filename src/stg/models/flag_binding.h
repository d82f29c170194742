// Helpers the model workloads share to check flags and bind them to symbols.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "stg/models/workload.h"

namespace stg::models {

inline void require(bool ok, const std::string& message) {
  if (!ok) throw UsageError(message);
}

inline std::string num(int64_t v) { return std::to_string(v); }

// A model dimension: its symbol, flag, the value given (if any) and default.
struct Dim {
  const char* symbol;
  const char* flag;
  std::optional<int64_t> given;
  int64_t fallback;
};

void bind_dims(Workload& w, const std::vector<Dim>& dims);
void bind_degree(Workload& w, const char* symbol, const char* flag, int64_t value);

// --zero_stage, with --weight_sharded 1 as ZeRO stage 3.
int zero_stage(const Options& o);

// The mesh of the model's axes with the given degrees (by axis name).
mesh::Mesh make_mesh(const Model& m, const std::map<std::string, int64_t>& degree, int64_t stages);

// The ZeRO shard symbols of the later models: `fsdp` shards weights (ZeRO
// 3), `gshard` gradients (ZeRO 2 and 3); bound to the data-parallel degree
// or to 1.
std::map<std::string, expr::Expr> zero_bindings(int zero_stage);

}  // namespace stg::models
