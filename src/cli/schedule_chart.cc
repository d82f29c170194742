#include "schedule_chart.h"

#include <algorithm>
#include <cstdio>

#include "flag_text.h"
#include "stg/lower/schedule_row.h"
#include "stg/lower/schedule_timeline.h"
#include "stg/options.h"

namespace cli {

namespace {

std::string figure(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

std::string schedule_chart_text(const ScheduleChartRequest& r) {
  const stg::lower::Schedule schedule = parse_schedule(r.schedule);
  if (!schedule->orders_passes())
    throw stg::UsageError("--schedule " + std::string(schedule->name()) +
                          " has no order to draw: use " + stg::lower::schedule_names(true));
  if (r.pp < 1 || r.micro_batches < 1)
    throw stg::UsageError("--pp and --micro_batches must be >= 1");
  const std::string too_few = stg::lower::schedule_requirement(schedule, r.pp, r.micro_batches);
  if (!too_few.empty()) throw stg::UsageError(too_few);
  if (schedule->needs_whole_groups() && r.micro_batches % r.pp != 0)
    throw stg::UsageError("--schedule " + std::string(schedule->name()) +
                          " needs --micro_batches divisible by --pp");
  const int chunks = stg::lower::schedule_chunks(schedule, r.virtual_stages);
  const stg::lower::Timeline t =
      stg::lower::run_schedule(schedule, r.pp, r.micro_batches, chunks, {});
  std::string out = "schedule " + r.schedule + ", pp " + std::to_string(r.pp) + ", " +
                    std::to_string(r.micro_batches) + " micro-batches";
  if (chunks > 1) out += ", " + std::to_string(chunks) + " chunks per stage";
  out +=
      "\n(unit times per chunk: F = 2, B = 1, W = 1, a whole backward B + W = 2; messages free;\n"
      " two characters per unit: pass letter, F/B/W, lower case on chunk 1 and up, then the\n"
      " micro-batch mod 10; '..' idle)\n";
  out += stg::lower::schedule_chart(t);
  const double busy = t.makespan - t.idle.front();
  const double bubble = *std::max_element(t.idle.begin(), t.idle.end());
  std::string idle, held;
  for (size_t s = 0; s < t.idle.size(); ++s) {
    idle += (s ? " " : "") + figure(t.idle[s]);
    held += (s ? " " : "") + std::to_string(t.peak_in_flight[s]);
  }
  out += "makespan " + figure(t.makespan) + ", busy per stage " + figure(busy) +
         ", idle per stage " + idle + " (largest " + figure(bubble) + ", " +
         figure(100.0 * bubble / t.makespan) + "% of the makespan)\n";
  out += "activations held at once per stage (micro-batch x chunk): " + held + "\n";
  return out;
}

}  // namespace cli
