// Helpers the model workloads share to check flags and bind them to symbols.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "stg/models/model_axes.h"
#include "stg/models/workload.h"

namespace stg::models {

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

// The mesh of the model's axes, in the table's rank order, with their
// degrees, on degree["pp"] stages.
mesh::Mesh make_mesh(const Model& m, const mesh::Degrees& degree);

// Sets w.mesh (make_mesh) and binds the symbols of every axis, in the
// spellings given, to its degree, with its flag for messages; the stages'
// symbol to the mesh's stages, the one owner of the pipeline degree.
void bind_axes(Workload& w, const mesh::Degrees& degree, std::initializer_list<Spelling> spellings);

// The ZeRO shard symbols of the later models: `fsdp` shards weights (ZeRO
// 3), `gshard` gradients (ZeRO 2 and 3); bound to the data-parallel degree
// or to 1.
std::map<std::string, expr::Expr> zero_bindings(int zero_stage);

}  // namespace stg::models
