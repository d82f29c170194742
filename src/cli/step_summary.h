// The short step summary `stg` prints after a run (unless --quiet or --json):
// one line per pipeline stage written, with what one of its ranks computes
// (TFLOP), sends on each axis (GB), holds (GiB) and, when the traces are in
// FLOPs and bytes, when its step ends in the replay at ASTRA-sim's roofline.
// In the reference's units the figures are num_ops and elements, and the
// heading says so.
#pragma once

#include <string>

#include "stg/generate.h"
#include "stg/tools/makespan.h"

namespace cli {

// "" when the run has no stage figures (a part of a run that wrote none).
std::string format_step_summary(const stg::RunSummary& s,
                                const stg::tools::MakespanResult* makespan);

}  // namespace cli
