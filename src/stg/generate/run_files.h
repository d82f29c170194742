// Writing a lowered run's files: the rank traces, the comm-group file,
// ASTRA-sim's inputs and the --dump_after graph, staged and committed
// (io/output_files.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "stg/emit/astra_sim_plan.h"
#include "stg/generate.h"
#include "stg/io/output_files.h"
#include "stg/lower/flat_stage.h"
#include "stg/mesh/rank_layout.h"

namespace stg {

// What the writers share: where files go and what they add up.
struct WriteContext {
  const Options& o;
  const OutputPlan& out;
  const mesh::RankLayout& layout;
  const std::vector<std::optional<lower::FlatStage>>& stages;
  io::OutputFiles& files;
  ProgressListener& listen;
  int threads;
  std::atomic<int64_t> bytes{0}, nodes{0};
};

// v0.0.4: ranks of a stage are written in groups, their files open
// together: each piece of the stage is encoded once per group and spliced
// for each rank (emit/flat_writer.h).

// Writes the comm-group file (one writer among the shards of a run) with
// ASTRA-sim's configurations and run.sh, the --dump_after graph and the rank
// files to the staging directory, then commits them; returns the stale rank
// files removed. A run of every rank replaces an earlier run: its rank files
// beyond this run's ranks (those the earlier comm-group file lists) are
// stale; a --ranks part leaves other ranks' files.
int64_t write_files(WriteContext& c, const emit::AstraSimPlan& astra_sim, const std::string& dump,
                    bool writes_groups, const std::vector<RankRange>& ranges);

}  // namespace stg
