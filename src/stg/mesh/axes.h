// THE table of parallel axes. Every place that needs the set of axes reads
// it: the flags and their checks, the mesh (rank numbering, comm groups),
// the symbols model shapes use, step figures, the axes `stg inspect` reads
// back from a comm-group file, and the memory report. Adding an axis is one
// row here (docs/architecture.md, "How to add an axis").
#pragma once

#include <array>
#include <cstdint>
#include <iterator>
#include <string_view>

#include "stg/mesh/mesh.h"

namespace stg::mesh {

struct AxisSpec {
  const char* name;   // as the user knows it; the mesh axis's name
  const char* flag;   // the flag that sets its degree, for messages
  const char* alias;  // another name of the flag, or ""
  // Another spelling of the same degree parsed as a flag of its own, so that
  // two different values are refused (--cp for --sp), or "".
  const char* spelling;
  const char* help;  // the flag's --help text
  // The symbol of its degree in the shapes of gpt, llama, moe (and module
  // sheets), and in those of the seed's transformer, which named some
  // differently (sp: the later models call sequence parallelism cp).
  const char* symbol;
  const char* seed_symbol;
  AxisKind kind;  // kStage: the pipeline stages, not an axis of the mesh
  // Place in rank numbering, 0 varying fastest; the stages vary slowest.
  int rank_place;
  const char* label;  // its name in step figures and comm-group axes
  // Part of a model's mesh only when the model asks for it (ep: moe, or a
  // sheet that uses its symbol); other axes are in every model's mesh.
  bool opt_in;
  // Splits the micro-batch between ranks: the memory report divides by it
  // (Megatron carves expert parallelism out of data parallelism).
  bool splits_batch;
  // Place in a node (a scale-up domain), 0 filled first: Megatron-LM's rank
  // order tp, cp, ep, dp, pp puts whole tensor-parallel groups on NVLink
  // (--astra_sim's network, emit/network_shape.h).
  int node_place;
  // Place of its degree among `stg plans`' columns, 0 first.
  int plans_column;
};

// In --help order.
inline constexpr AxisSpec kAxes[] = {
    {"dp", "--dp", "", "", "data-parallel degree", "dp", "dp", AxisKind::kData, 0, "dp", false,
     true, 3, 0},
    // --mp is the reference's older name for tp.
    {"tp", "--tp", "--mp", "", "tensor-parallel degree (alias --mp)", "tp", "tp", AxisKind::kTensor,
     1, "tp", false, false, 0, 1},
    // Context parallelism: --sp is the reference's spelling, --cp Megatron's.
    {"sp", "--sp", "", "--cp", "context-parallel degree (--cp; the reference's --sp)", "cp", "sp",
     AxisKind::kSequence, 2, "cp", false, false, 1, 3},
    {"pp", "--pp", "", "", "pipeline-parallel degree (stages)", "pp", "pp", AxisKind::kStage, 4,
     "pp", false, false, 4, 2},
    {"ep", "--ep", "", "", "expert-parallel degree (moe)", "ep", "ep", AxisKind::kExpert, 3, "ep",
     true, true, 2, 4},
};
inline constexpr int kNumAxes = static_cast<int>(std::size(kAxes));

// Row of the axis named `name`, or -1.
constexpr int find_axis(std::string_view name) {
  for (int r = 0; r < kNumAxes; ++r)
    if (kAxes[r].name == name) return r;
  return -1;
}

// A row named in code: an unknown name does not compile.
struct AxisName {
  int row;
  consteval AxisName(const char* name) : row(find_axis(name)) {  // NOLINT: implicit on purpose
    if (row < 0) throw "no such axis in kAxes";
  }
};

inline const AxisSpec& axis_spec(AxisName a) { return kAxes[a.row]; }

// Rows in rank numbering order, the fastest-varying first.
constexpr std::array<int, kNumAxes> rank_order() {
  std::array<int, kNumAxes> rows{};
  for (int r = 0; r < kNumAxes; ++r) {
    int place = 0;
    for (const AxisSpec& other : kAxes) place += other.rank_place < kAxes[r].rank_place;
    rows[place] = r;
  }
  return rows;
}

// The degree of every axis of a run, by row; 1 unless set.
class Degrees {
 public:
  Degrees() { d_.fill(1); }
  int64_t& operator[](AxisName a) { return d_[a.row]; }
  int64_t operator[](AxisName a) const { return d_[a.row]; }
  int64_t& row(int r) { return d_.at(r); }
  int64_t row(int r) const { return d_.at(r); }
  // The pipeline degree as given; once a run is built, its mesh owns it.
  int64_t stages() const;

 private:
  std::array<int64_t, kNumAxes> d_;
};

// The row of the pipeline stages.
constexpr int stage_row() {
  for (int r = 0; r < kNumAxes; ++r)
    if (kAxes[r].kind == AxisKind::kStage) return r;
  return -1;
}
static_assert(stage_row() >= 0, "kAxes needs the row of the pipeline stages");

inline int64_t Degrees::stages() const { return d_[stage_row()]; }

// The labels of the mesh's axes (every row but the stages') in rank order.
constexpr std::array<const char*, kNumAxes - 1> mesh_labels() {
  std::array<const char*, kNumAxes - 1> labels{};
  int i = 0;
  for (int r : rank_order())
    if (kAxes[r].kind != AxisKind::kStage) labels[i++] = kAxes[r].label;
  return labels;
}

}  // namespace stg::mesh
