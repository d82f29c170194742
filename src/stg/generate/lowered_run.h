// A run's model through the passes and lowered, stage by stage (the public
// steps, build_pipeline, lower_options and lower_stages, are in generate.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "stg/generate.h"
#include "stg/lower/flat_stage.h"

namespace stg {

// The stages of a run: each lowered once, from a graph of one micro-batch,
// with the others derived (lower/flat_stage.h).
struct LoweredRun {
  graph::Graph graph;  // after the passes, one micro-batch
  std::vector<std::optional<lower::FlatStage>> stages;
};

// Decode steps written from one (lower/step_growth.h): the templates lowered
// again with the context one token longer, and at the last step's.

// The passes, then each stage in [first_stage, last_stage] lowered from one
// micro-batch; UsageError when the micro-batches cannot be derived.
LoweredRun lower_run(const Options& o, models::Workload& w, const lower::LowerOptions& lo,
                     int threads, int first_stage, int last_stage, ProgressListener& listen);

// Refuses a --dump_after that names no pass of the run.
void check_dump_after(const Options& o, const models::Workload& w);

// The graph after pass --dump_after, with every micro-batch (the reference's
// graph; the run itself lowers one micro-batch per stage).
std::string dump_graph(const Options& o);

}  // namespace stg
