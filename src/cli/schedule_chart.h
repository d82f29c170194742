// `stg inspect --schedule NAME`: a pipeline schedule's order drawn as a text
// chart, with unit times (F = 2, B = 1, W = 1: a forward twice a weight
// gradient, a whole backward B + W) and free messages, and the bubble and
// activations each stage holds.
#pragma once

#include <string>

#include "stg/lower/schedule.h"

namespace cli {

struct ScheduleChartRequest {
  std::string schedule;
  int pp = 4;
  int micro_batches = 8;
  int virtual_stages = 2;  // interleaved only
};

// The chart and figures, or throws stg::UsageError (bad schedule name or
// micro-batch count).
std::string schedule_chart_text(const ScheduleChartRequest& request);

}  // namespace cli
