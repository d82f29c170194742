// A pipeline schedule run with given times per pass: each stage runs its
// slots (lower::schedule_slots) in order, a slot starting when the stage is
// free and the passes it needs are done (a forward needs the micro-batch's
// forward on the pipeline stage before; a backward B its own forward and
// the B of the pipeline stage after; a W its B), messages free. It measures
// the bubble the papers tabulate (docs/pipeline_schedules.md) and draws the
// order as a chart (`stg inspect --schedule`), from the same slots that
// order a stage's nodes.
#pragma once

#include <string>
#include <vector>

#include "stg/lower/schedule.h"

namespace stg::lower {

// Time of one pass of one chunk. `backward` is B alone where the schedule
// separates W; else a backward is B + W.
struct PassTimes {
  double forward = 2, backward = 1, weight = 1;
};

struct Timeline {
  struct Run {
    double start = 0, end = 0;
    Slot slot;
  };
  int pp = 0;
  std::vector<std::vector<Run>> stages;  // per stage, in order
  double makespan = 0;
  std::vector<double> idle;         // per stage: makespan - busy time
  std::vector<int> peak_in_flight;  // per stage: chunks' activations held at once
};

// The pipeline stage (0..) a stage's chunk is for a micro-batch, and the
// number of pipeline stages a micro-batch passes.
int pipeline_position(Schedule schedule, int pp, int chunks, int stage, int chunk);
int pipeline_length(Schedule schedule, int pp, int chunks);

// Throws std::invalid_argument when the slots deadlock (never for the
// schedules of schedule.h).
Timeline run_schedule(Schedule schedule, int pp, int micro_batches, int chunks,
                      const PassTimes& times);

// One row per stage, two characters per unit of time (times are rounded to
// whole units): each pass is its letter, F, B or W (lower case on chunk 1
// and up), then its micro-batch number mod 10, padded to its length; "..":
// idle. A DualPipe pair is its forward then its backward within the slot.
std::string schedule_chart(const Timeline& timeline);

}  // namespace stg::lower
