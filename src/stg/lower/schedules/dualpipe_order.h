// The order of DualPipe and DualPipeV (DeepSeek-V3 report §3.2; the
// DualPipe repository's eight phases; docs/pipeline_schedules.md), shared
// by their rows (dualpipe.cc, dualpipev.cc).
#pragma once

#include <vector>

#include "stg/lower/schedule.h"

namespace stg::lower::schedules {

// Slots of `stage`. Under DualPipe, chunk 0 of stage s is pipeline stage s
// of the micro-batches that enter at stage 0 (0..m/2-1) and chunk 1
// pipeline stage pp-1-s of those that enter at stage pp-1 (m/2..m-1);
// under DualPipeV (`v_shape`) chunk 1 of stage s is pipeline stage 2pp-1-s.
std::vector<Slot> dualpipe_slots(bool v_shape, int stage, int pp, int micro_batches);

// Activations in flight along the order, in replicas: a replica holds two
// chunks (DualPipeV: the two halves of the stage's layers; DualPipe: a
// whole pipeline stage of each direction).
double dualpipe_in_flight(Schedule schedule, int stage, int pp, int micro_batches, int chunks);

}  // namespace stg::lower::schedules
