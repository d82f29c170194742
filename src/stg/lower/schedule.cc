#include "stg/lower/schedule.h"

#include <algorithm>
#include <stdexcept>

namespace stg::lower {

namespace {

// The k-th forward (or backward) step of the interleaved schedule.
Step interleaved_step(int k, int pp, int chunks, bool backward) {
  const int group = k / (pp * chunks);
  const int in_group = k % (pp * chunks);
  int chunk = in_group / pp;
  if (backward) chunk = chunks - 1 - chunk;
  return {group * pp + in_group % pp, chunk, backward};
}

int warmup_steps(Schedule schedule, int stage, int pp, int total, int chunks) {
  if (schedule == Schedule::kInterleaved)
    return std::min(total, (pp - stage - 1) * 2 + (chunks - 1) * pp);
  return std::min(total, pp - stage - 1);
}

}  // namespace

std::vector<Step> schedule_steps(Schedule schedule, int stage, int pp, int micro_batches,
                                 int chunks) {
  std::vector<Step> steps;
  if (schedule == Schedule::kInterleaved && chunks < 1) chunks = 1;
  if (schedule != Schedule::kInterleaved) chunks = 1;
  const int total = micro_batches * chunks;
  auto forward = [&](int k) {
    return schedule == Schedule::kInterleaved ? interleaved_step(k, pp, chunks, false)
                                              : Step{k, 0, false};
  };
  auto backward = [&](int k) {
    return schedule == Schedule::kInterleaved ? interleaved_step(k, pp, chunks, true)
                                              : Step{k, 0, true};
  };
  if (schedule == Schedule::kNone) return steps;
  if (micro_batches == 1) {
    // One micro-batch (a flat stage's template; pp 1 when interleaved):
    // its chunks forward, then backward in reverse, under every schedule.
    for (int c = 0; c < chunks; ++c) steps.push_back({0, c, false});
    for (int c = chunks - 1; c >= 0; --c) steps.push_back({0, c, true});
    return steps;
  }
  if (schedule == Schedule::kGpipe) {
    for (int k = 0; k < total; ++k) steps.push_back(forward(k));
    for (int k = 0; k < total; ++k) steps.push_back(backward(k));
    return steps;
  }
  const int warmup = warmup_steps(schedule, stage, pp, total, chunks);
  for (int k = 0; k < warmup; ++k) steps.push_back(forward(k));
  const int steady = total - warmup;
  for (int k = 0; k < steady; ++k) {
    steps.push_back(forward(warmup + k));
    steps.push_back(backward(k));
  }
  for (int k = steady; k < total; ++k) steps.push_back(backward(k));
  return steps;
}

double activations_in_flight(Schedule schedule, int stage, int pp, int micro_batches, int chunks) {
  switch (schedule) {
    case Schedule::kNone:
    case Schedule::kGpipe:
      return micro_batches;
    case Schedule::k1F1B:
      return std::min(micro_batches, pp - stage);
    case Schedule::kInterleaved: {
      const int total = micro_batches * chunks;
      const int warmup = warmup_steps(schedule, stage, pp, total, chunks);
      // Each step holds one chunk, i.e. 1/chunks of the stage's layers.
      return static_cast<double>(std::min(total, warmup + 1)) / chunks;
    }
  }
  return micro_batches;
}

}  // namespace stg::lower
