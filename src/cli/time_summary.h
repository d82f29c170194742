// With --print_makespan: where each pipeline stage's step time goes, for
// the first rank of each stage, in the text summary and in --json. Compute
// is split by kernel kind when the traces carry the kernel model's times
// (--compute_time model: the sums of the stage's duration_micros by kind);
// exposed communication by axis and the pipeline bubble come from the
// replay (stg/tools/time_breakdown.h), and compute, exposed communication
// and bubble add up to the makespan.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "stg/generate.h"
#include "stg/tools/makespan.h"

namespace cli {

// "" when the replay has no breakdown (it did not complete).
std::string format_time_breakdown(const stg::RunSummary& s,
                                  const stg::tools::MakespanResult& makespan);

// The same figures, one object per stage (milliseconds): stage, rank,
// done_ms, compute_ms, kernels_ms (by kernel kind, under the kernel model),
// exposed_comm_ms (by axis), bubble_ms.
nlohmann::ordered_json time_breakdown_json(const stg::RunSummary& s,
                                           const stg::tools::MakespanResult& makespan);

}  // namespace cli
