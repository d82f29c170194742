// --print_makespan around a generate run, for the command line and the
// Python module alike: its figures checked before anything is written, the
// replay of one rank per pipeline stage after the run, and its JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

#include "generate_flags.h"
#include "stg/generate.h"
#include "stg/tools/makespan.h"

namespace cli {

// The replay's figures without flags: --gpu's roofline, else the defaults;
// under --compute_time model, each compute node's duration_micros.
stg::tools::MakespanOptions makespan_defaults(const stg::Options& o);

// --print_makespan's figures (none without it), checked before anything is
// written: the hardware flags belong to it, and it replays a whole run.
// Throws stg::UsageError.
std::optional<stg::tools::MakespanOptions> makespan_options(const GenerateFlags& f);

// The replay of one rank per stage of the finished run `s`; with
// --astra_sim on the network and system files just written (unless
// --link_gbps asks for one bandwidth).
stg::tools::MakespanResult stage_makespan(const GenerateFlags& f, const stg::RunSummary& s,
                                          stg::tools::MakespanOptions m);

// Adds "makespan_ns" and "time_breakdown" (cli/time_summary.h) to a run's
// JSON, or "makespan_error" when the replay did not complete.
void add_makespan_json(nlohmann::ordered_json& j, const stg::RunSummary& s,
                       const stg::tools::MakespanResult& makespan);

}  // namespace cli
