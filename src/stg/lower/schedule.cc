#include "stg/lower/schedule.h"

#include <algorithm>
#include <stdexcept>

namespace stg::lower {

namespace {

using graph::Phase;

Step step(Phase phase, int micro_batch, int chunk) { return {phase, 0, micro_batch, chunk}; }

// The k-th forward (or backward) step of the interleaved schedule.
Step interleaved_step(int k, int pp, int chunks, bool backward) {
  const int group = k / (pp * chunks);
  const int in_group = k % (pp * chunks);
  int chunk = in_group / pp;
  if (backward) chunk = chunks - 1 - chunk;
  return step(backward ? Phase::kBackwardInput : Phase::kForward, group * pp + in_group % pp,
              chunk);
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
                                              : step(Phase::kForward, k, 0);
  };
  auto backward = [&](int k) {
    return schedule == Schedule::kInterleaved ? interleaved_step(k, pp, chunks, true)
                                              : step(Phase::kBackwardInput, k, 0);
  };
  if (schedule == Schedule::kNone) return steps;
  if (micro_batches == 1) {
    // One micro-batch (a flat stage's template; pp 1 when interleaved):
    // its chunks forward, then backward in reverse, under every schedule.
    for (int c = 0; c < chunks; ++c) steps.push_back(step(Phase::kForward, 0, c));
    for (int c = chunks - 1; c >= 0; --c) steps.push_back(step(Phase::kBackwardInput, 0, c));
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

std::vector<Step> phase_steps(const std::vector<Step>& phases, int micro_batches) {
  std::vector<Step> steps;
  for (const Step& phase : phases)
    for (int mb = 0; mb < micro_batches; ++mb) {
      Step s = phase;
      s.micro_batch = mb;
      steps.push_back(s);
    }
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
