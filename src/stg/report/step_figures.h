// Figures of one training step per rank, for checking a trace against one's
// own arithmetic: the compute work (num_ops of the compute nodes) and the
// traffic on each parallel axis, each as a total over the ranks counted and
// its smallest and largest value per rank. `stg inspect` fills it from trace
// files, a generation run from its lowered stages; one text layout and one
// JSON layout serve both.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "stg/mesh/axes.h"
#include "stg/report/exact_total.h"

namespace stg::report {

// Axis names in print order: the axes' labels in rank order (mesh/axes.h:
// the spatial axes, then point-to-point transfers between pipeline stages,
// "pp"), Megatron's tied-embedding group, DualPipe's groups of the two
// copies of a stage's parameters, and groups that fit none of them.
inline constexpr auto kAxisNames = [] {
  std::array<const char*, mesh::kNumAxes + 3> names{};
  int i = 0;
  for (int r : mesh::rank_order()) names[i++] = mesh::kAxes[r].label;
  names[i++] = "embedding";
  names[i++] = "dualpipe";
  names[i] = "other";
  return names;
}();

// Send/recv traffic: "pp" between stages, "<axis> p2p" along a mesh axis
// (ring attention's "cp p2p"); collectives on every other name.
inline bool point_to_point(const std::string& name) {
  return name == "pp" || (name.size() > 4 && name.compare(name.size() - 4, 4, " p2p") == 0);
}

// A figure that differs between ranks: its sum over the ranks counted
// (exact: it can pass 64 bits) and its extremes, each with the lowest rank
// that has it.
struct RankSpread {
  ExactTotal total;
  int64_t min = 0, min_rank = -1;
  int64_t max = 0, max_rank = -1;
  void add(int64_t rank, int64_t value);
  bool operator==(const RankSpread&) const = default;
};

// What one rank moves on one axis. Collectives count in ops/bytes; for
// "pp", ops/bytes are what the rank sends and received_* what it receives.
struct RankTraffic {
  int64_t ops = 0, bytes = 0;
  int64_t received_ops = 0, received_bytes = 0;
  void add(const RankTraffic& o);
};

// The kinds of kernel the kernel model tells apart (lower/kernel_of_op.h,
// in OpKernel::Kind's order), as the step's time by kernel kind names them.
inline constexpr std::array<const char*, 3> kKernelKinds = {"GEMM", "attention", "memory-bound"};

// One rank's step: its compute work and its traffic by axis name; under
// --compute_time model also its compute time by kernel kind (seconds, the
// sum of its nodes' duration_micros; zeros without the kernel model).
struct RankStep {
  int64_t flops = 0;
  std::map<std::string, RankTraffic> axes;
  std::array<double, kKernelKinds.size()> kernel_seconds{};
};

// Traffic on one axis over the ranks that have any on it.
struct AxisFigures {
  std::string axis;
  int64_t ranks = 0;  // ranks with traffic on this axis
  RankSpread ops, bytes;
  RankSpread received_ops, received_bytes;  // "pp" only
  bool operator==(const AxisFigures&) const = default;
};

struct StepFigures {
  std::string units;  // what num_ops and comm_size count, as said to the user
  int64_t ranks = 0;  // ranks counted
  RankSpread flops;
  std::vector<AxisFigures> axes;  // kAxisNames order (unknown names last), with traffic only

  // Counts one rank; ranks may come in any order.
  void add(int64_t rank, const RankStep& step);
  bool operator==(const StepFigures&) const = default;
};

// {"units": ..., "ranks": N, "flops": {"total", "min", "min_rank", "max",
// "max_rank"}, "axes": {"dp": {"ranks", "collectives", "bytes"}, ...,
// "pp": {"ranks", "sends", "bytes_sent", "recvs", "bytes_received"}}}
nlohmann::ordered_json to_json(const StepFigures& f);
// The inverse of to_json; throws nlohmann::json::exception on other input.
StepFigures step_figures_from_json(const nlohmann::ordered_json& j);

// Text lines, each ending in '\n': a heading, the compute line and one
// line per axis (two for pp: sent and received).
std::string format_step_figures(const StepFigures& f);

}  // namespace stg::report
