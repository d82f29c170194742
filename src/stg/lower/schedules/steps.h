// Helpers the schedule rows share (lower/schedule_row.h): a step, slots of
// one step each, and the 1F1B shape of warm-up forwards, alternating
// forwards and backwards, and cool-down backwards.
#pragma once

#include <vector>

#include "stg/lower/schedule.h"

namespace stg::lower::schedules {

inline Step step(graph::Phase phase, int micro_batch, int chunk) {
  return {phase, 0, micro_batch, chunk};
}

inline std::vector<Slot> single(const std::vector<Step>& steps) {
  std::vector<Slot> slots;
  for (const Step& s : steps) slots.push_back({s});
  return slots;
}

// `warmup` forwards, then forward k + warmup and backward k alternating,
// then the remaining backwards: `total` of each, forward(k) and
// backward(k) the k-th of either.
template <typename Forward, typename Backward>
std::vector<Slot> one_forward_one_backward(int warmup, int total, Forward forward,
                                           Backward backward) {
  std::vector<Step> steps;
  for (int k = 0; k < warmup; ++k) steps.push_back(forward(k));
  const int steady = total - warmup;
  for (int k = 0; k < steady; ++k) {
    steps.push_back(forward(warmup + k));
    steps.push_back(backward(k));
  }
  for (int k = steady; k < total; ++k) steps.push_back(backward(k));
  return single(steps);
}

}  // namespace stg::lower::schedules
