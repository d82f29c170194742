#include "stg/lower/schedule_timeline.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>

#include "stg/lower/schedule_row.h"

namespace stg::lower {

namespace {

using graph::Phase;

// A pass done: (phase, micro-batch, pipeline position).
using Done = std::tuple<int, int, int>;

}  // namespace

int pipeline_position(Schedule schedule, int pp, int chunks, int stage, int chunk) {
  (void)chunks;
  return schedule->pipeline_position(pp, stage, chunk);
}

int pipeline_length(Schedule schedule, int pp, int chunks) {
  return schedule->pipeline_length(pp, schedule_chunks(schedule, chunks));
}

Timeline run_schedule(Schedule schedule, int pp, int micro_batches, int chunks,
                      const PassTimes& times) {
  chunks = schedule_chunks(schedule, chunks);
  const bool split = separates_weight_gradients(schedule);
  const int length = pipeline_length(schedule, pp, chunks);
  Timeline t;
  t.pp = pp;
  t.stages.resize(pp);
  std::vector<std::vector<Slot>> slots(pp);
  for (int s = 0; s < pp; ++s) slots[s] = schedule_slots(schedule, s, pp, micro_batches, chunks);
  std::map<Done, double> done;
  std::vector<size_t> next(pp, 0);
  std::vector<double> free_at(pp, 0), busy(pp, 0);
  auto duration = [&](const Step& st) {
    if (st.phase == Phase::kForward) return times.forward;
    if (st.phase == Phase::kBackwardWeight) return times.weight;
    return split ? times.backward : times.backward + times.weight;
  };
  // The passes a step waits for, as (phase, micro-batch, position).
  auto needs = [&](int stage, const Step& st, std::vector<Done>& out) {
    const int at = pipeline_position(schedule, pp, chunks, stage, st.chunk);
    const int mb = st.micro_batch;
    const int f = static_cast<int>(Phase::kForward), b = static_cast<int>(Phase::kBackwardInput);
    if (st.phase == Phase::kForward && at > 0) out.emplace_back(f, mb, at - 1);
    if (st.phase == Phase::kBackwardInput) {
      out.emplace_back(f, mb, at);
      if (at < length - 1) out.emplace_back(b, mb, at + 1);
    }
    if (st.phase == Phase::kBackwardWeight) out.emplace_back(b, mb, at);
  };
  for (bool progress = true; progress;) {
    progress = false;
    for (int s = 0; s < pp; ++s)
      while (next[s] < slots[s].size()) {
        const Slot& slot = slots[s][next[s]];
        std::vector<Done> wait;
        for (const Step& st : slot) needs(s, st, wait);
        double start = free_at[s];
        bool ready = true;
        for (const Done& d : wait) {
          const auto it = done.find(d);
          if (it == done.end()) {
            ready = false;
            break;
          }
          start = std::max(start, it->second);
        }
        if (!ready) break;
        double length_of_slot = 0;
        for (const Step& st : slot) length_of_slot += duration(st);
        const double end = start + length_of_slot;
        for (const Step& st : slot)
          done[{static_cast<int>(st.phase), st.micro_batch,
                pipeline_position(schedule, pp, chunks, s, st.chunk)}] = end;
        t.stages[s].push_back({start, end, slot});
        free_at[s] = end;
        busy[s] += length_of_slot;
        ++next[s];
        progress = true;
      }
  }
  for (int s = 0; s < pp; ++s)
    if (next[s] < slots[s].size())
      throw std::invalid_argument("pipeline schedule deadlocks at stage " + std::to_string(s));
  t.makespan = *std::max_element(free_at.begin(), free_at.end());
  for (int s = 0; s < pp; ++s) {
    t.idle.push_back(t.makespan - busy[s]);
    t.peak_in_flight.push_back(
        peak_chunks_in_flight(schedule_steps(schedule, s, pp, micro_batches, chunks), split));
  }
  return t;
}

std::string schedule_chart(const Timeline& timeline) {
  const int units = static_cast<int>(std::lround(timeline.makespan));
  std::string out;
  for (int s = 0; s < timeline.pp; ++s) {
    std::string row(static_cast<size_t>(units) * 2, '.');
    for (const Timeline::Run& run : timeline.stages[s]) {
      // The slot's passes share its time in proportion to their count.
      const int begin = static_cast<int>(std::lround(run.start)) * 2;
      const int end = static_cast<int>(std::lround(run.end)) * 2;
      const int each = (end - begin) / static_cast<int>(run.slot.size());
      for (size_t k = 0; k < run.slot.size(); ++k) {
        const Step& st = run.slot[k];
        const int at = begin + static_cast<int>(k) * each;
        const int cells = k + 1 == run.slot.size() ? end - at : each;
        char letter = st.phase == Phase::kForward          ? 'F'
                      : st.phase == Phase::kBackwardWeight ? 'W'
                                                           : 'B';
        if (st.chunk > 0) letter = static_cast<char>(letter - 'A' + 'a');
        for (int c = 0; c < cells; ++c) row[at + c] = ' ';
        row[at] = letter;
        if (cells > 1) row[at + 1] = static_cast<char>('0' + st.micro_batch % 10);
      }
    }
    out += "stage " + std::to_string(s) + (s < 10 ? "  |" : " |") + row + "|\n";
  }
  return out;
}

}  // namespace stg::lower
