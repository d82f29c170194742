#include "stg/lower/schedule.h"

#include <algorithm>
#include <deque>
#include <stdexcept>
#include <utility>

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

std::vector<Slot> single(const std::vector<Step>& steps) {
  std::vector<Slot> slots;
  for (const Step& s : steps) slots.push_back({s});
  return slots;
}

// ZB-H1: 1F1B with B in place of the whole backward; stage s keeps the W of
// s micro-batches pending, which fills the cool-down bubble of 1F1B (the
// first stage, waiting longest for gradients, defers none), so no stage
// holds more than pp micro-batches' activations.
std::vector<Step> zb_h1_steps(int stage, int pp, int micro_batches) {
  std::vector<Step> steps;
  std::deque<int> pending;
  auto backward = [&](int mb) {
    steps.push_back(step(Phase::kBackwardInput, mb, 0));
    pending.push_back(mb);
    if (static_cast<int>(pending.size()) > stage) {
      steps.push_back(step(Phase::kBackwardWeight, pending.front(), 0));
      pending.pop_front();
    }
  };
  const int warmup = std::min(micro_batches, pp - stage - 1);
  for (int k = 0; k < warmup; ++k) steps.push_back(step(Phase::kForward, k, 0));
  for (int k = 0; k < micro_batches - warmup; ++k) {
    steps.push_back(step(Phase::kForward, warmup + k, 0));
    backward(k);
  }
  for (int k = micro_batches - warmup; k < micro_batches; ++k) backward(k);
  for (int mb : pending) steps.push_back(step(Phase::kBackwardWeight, mb, 0));
  return steps;
}

// DualPipe and DualPipeV (DeepSeek-V3 report §3.2; the DualPipe repository's
// eight phases). The order is written over DeepSeek's "phases" 0 and 1 of a
// rank: under DualPipeV its chunks 0 and 1; under DualPipe phase 0 is the
// direction in which the rank is in the first half of the pipeline.
class DualPipeOrder {
 public:
  DualPipeOrder(bool v_shape, int stage, int pp, int micro_batches)
      : v_shape_(v_shape), stage_(stage), pp_(pp), micro_batches_(micro_batches) {
    ranks_ = v_shape ? pp : pp / 2;  // ranks down one side of the V
    rank_ = v_shape ? stage : std::min(stage, pp - 1 - stage);
    per_phase_ = v_shape ? micro_batches : micro_batches / 2;
    second_half_ = !v_shape && stage >= pp / 2;
  }

  std::vector<Slot> slots() {
    const int n = ranks_, r = rank_;
    for (int i = 0; i < (n - r - 1) * 2; ++i) forward(0);
    for (int i = 0; i < r + 1; ++i) {
      forward(0);
      forward(1);
    }
    for (int i = 0; i < n - r - 1; ++i) {
      backward(1, true);
      weight();
      forward(1);
    }
    const int main_steps = v_shape_ ? per_phase_ - 2 * n + r + 1 : per_phase_ - pp_ + r + 1;
    for (int i = 0; i < main_steps; ++i) {
      // The rank at the bottom of the V does not overlap its first pair:
      // its forward's output is the input of its own backward.
      if (i == 0 && r == n - 1) {
        forward(0);
        backward(1, false);
      } else {
        forward_backward(0, 1);
      }
      forward_backward(1, 0);
    }
    for (int i = 0; i < n - r - 1; ++i) {
      backward(1, false);
      forward_backward(1, 0);
    }
    // The second half of these backwards leaves W pending.
    bool defer = false;
    const int last = r + 1;
    for (int i = 0; i < last; ++i) {
      if (i == last / 2 && r % 2 == 1) defer = true;
      backward(1, defer);
      if (i == last / 2 && r % 2 == 0) defer = true;
      backward(0, defer);
    }
    for (int i = 0; i < n - r - 1; ++i) {
      weight();
      backward(0, true);
    }
    while (!pending_.empty()) weight();
    return std::move(slots_);
  }

 private:
  // The step's chunk and micro-batch for the k-th pass of `phase`.
  Step at(Phase kind, int phase, int k) const {
    if (v_shape_) return step(kind, k, phase);
    const int direction = phase ^ (second_half_ ? 1 : 0);
    return step(kind, direction * per_phase_ + k, direction);
  }
  Step next_forward(int phase) { return at(Phase::kForward, phase, forwards_[phase]++); }
  void forward(int phase) { slots_.push_back({next_forward(phase)}); }
  // B of the next backward of `phase`; its W now or (`defer`) later, in turn.
  Step next_backward(int phase, bool defer) {
    const int k = backwards_[phase]++;
    if (defer) pending_.emplace_back(phase, k);
    return at(Phase::kBackwardInput, phase, k);
  }
  void backward(int phase, bool defer) {
    slots_.push_back({next_backward(phase, defer)});
    if (!defer) slots_.push_back({at(Phase::kBackwardWeight, phase, backwards_[phase] - 1)});
  }
  void forward_backward(int forward_phase, int backward_phase) {
    const Step f = next_forward(forward_phase);
    slots_.push_back({f, next_backward(backward_phase, false)});
    slots_.push_back({at(Phase::kBackwardWeight, backward_phase, backwards_[backward_phase] - 1)});
  }
  void weight() {
    const auto [phase, k] = pending_.front();
    pending_.pop_front();
    slots_.push_back({at(Phase::kBackwardWeight, phase, k)});
  }

  bool v_shape_;
  int stage_, pp_, micro_batches_;
  int ranks_ = 0, rank_ = 0, per_phase_ = 0;
  bool second_half_ = false;
  int forwards_[2] = {0, 0}, backwards_[2] = {0, 0};
  std::deque<std::pair<int, int>> pending_;
  std::vector<Slot> slots_;
};

}  // namespace

bool separates_weight_gradients(Schedule schedule) {
  return schedule == Schedule::kZbH1 || schedule == Schedule::kDualPipe ||
         schedule == Schedule::kDualPipeV;
}

int schedule_chunks(Schedule schedule, int virtual_stages) {
  if (schedule == Schedule::kInterleaved) return std::max(1, virtual_stages);
  if (schedule == Schedule::kDualPipe || schedule == Schedule::kDualPipeV) return 2;
  return 1;
}

int model_chunks(Schedule schedule, int virtual_stages) {
  return schedule == Schedule::kDualPipe ? 1 : schedule_chunks(schedule, virtual_stages);
}

int replica_count(Schedule schedule, int micro_batches) {
  return schedule == Schedule::kDualPipe ? micro_batches / 2 : micro_batches;
}

int micro_batches_of_replicas(Schedule schedule, int replicas) {
  return schedule == Schedule::kDualPipe ? 2 * replicas : replicas;
}

std::string schedule_requirement(Schedule schedule, int pp, int micro_batches) {
  const std::string m = std::to_string(micro_batches), p = std::to_string(pp);
  if (schedule == Schedule::kDualPipe) {
    if (pp % 2 != 0) return "--pipeline_schedule dualpipe needs an even --pp (not " + p + ")";
    if (micro_batches % 2 != 0 || micro_batches < 2 * pp)
      return "--pipeline_schedule dualpipe needs an even number of micro-batches of at least 2 x "
             "--pp = " +
             std::to_string(2 * pp) + " (--batch / --micro_batch = " + m + ")";
  }
  if (schedule == Schedule::kDualPipeV && micro_batches < 2 * pp)
    return "--pipeline_schedule dualpipev needs at least 2 x --pp = " + std::to_string(2 * pp) +
           " micro-batches (--batch / --micro_batch = " + m + ")";
  return "";
}

std::vector<Slot> schedule_slots(Schedule schedule, int stage, int pp, int micro_batches,
                                 int chunks) {
  std::vector<Step> steps;
  chunks = schedule_chunks(schedule, chunks);
  const bool split = separates_weight_gradients(schedule);
  const int total = micro_batches * chunks;
  auto forward = [&](int k) {
    return schedule == Schedule::kInterleaved ? interleaved_step(k, pp, chunks, false)
                                              : step(Phase::kForward, k, 0);
  };
  auto backward = [&](int k) {
    return schedule == Schedule::kInterleaved ? interleaved_step(k, pp, chunks, true)
                                              : step(Phase::kBackwardInput, k, 0);
  };
  if (schedule == Schedule::kNone) return {};
  if (micro_batches == 1 || (!schedule_requirement(schedule, pp, micro_batches).empty())) {
    // One micro-batch (a flat stage's template; pp 1 when interleaved), or
    // too few for the schedule: its chunks forward, then backward in reverse
    // (B and, apart, W).
    for (int mb = 0; mb < micro_batches; ++mb) {
      for (int c = 0; c < chunks; ++c) steps.push_back(step(Phase::kForward, mb, c));
      for (int c = chunks - 1; c >= 0; --c) {
        steps.push_back(step(Phase::kBackwardInput, mb, c));
        if (split) steps.push_back(step(Phase::kBackwardWeight, mb, c));
      }
    }
    return single(steps);
  }
  if (schedule == Schedule::kZbH1) return single(zb_h1_steps(stage, pp, micro_batches));
  if (schedule == Schedule::kDualPipe || schedule == Schedule::kDualPipeV)
    return DualPipeOrder(schedule == Schedule::kDualPipeV, stage, pp, micro_batches).slots();
  if (schedule == Schedule::kGpipe) {
    for (int k = 0; k < total; ++k) steps.push_back(forward(k));
    for (int k = 0; k < total; ++k) steps.push_back(backward(k));
    return single(steps);
  }
  const int warmup = warmup_steps(schedule, stage, pp, total, chunks);
  for (int k = 0; k < warmup; ++k) steps.push_back(forward(k));
  const int steady = total - warmup;
  for (int k = 0; k < steady; ++k) {
    steps.push_back(forward(warmup + k));
    steps.push_back(backward(k));
  }
  for (int k = steady; k < total; ++k) steps.push_back(backward(k));
  return single(steps);
}

std::vector<Step> schedule_steps(Schedule schedule, int stage, int pp, int micro_batches,
                                 int chunks) {
  std::vector<Step> steps;
  for (const Slot& slot : schedule_slots(schedule, stage, pp, micro_batches, chunks))
    steps.insert(steps.end(), slot.begin(), slot.end());
  return steps;
}

std::vector<Step> replica_steps(Schedule schedule, int stage, int pp, int micro_batches,
                                int chunks) {
  std::vector<Step> steps = schedule_steps(schedule, stage, pp, micro_batches, chunks);
  if (schedule == Schedule::kDualPipe)
    for (Step& s : steps) s.micro_batch -= s.chunk * replica_count(schedule, micro_batches);
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

int peak_chunks_in_flight(const std::vector<Step>& steps, bool split) {
  int held = 0, peak = 0;
  for (const Step& s : steps) {
    if (s.phase == Phase::kForward) peak = std::max(peak, ++held);
    const Phase frees = split ? Phase::kBackwardWeight : Phase::kBackwardInput;
    if (s.phase == frees) --held;
  }
  return peak;
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
    case Schedule::kZbH1:
    case Schedule::kDualPipeV:
    case Schedule::kDualPipe: {
      // Counted along the order, in chunks: a replica holds two (DualPipeV:
      // the two halves of the stage's layers; DualPipe: a whole pipeline
      // stage of each direction).
      const int peak =
          peak_chunks_in_flight(schedule_steps(schedule, stage, pp, micro_batches, chunks), true);
      return schedule == Schedule::kZbH1 ? peak : peak / 2.0;
    }
  }
  return micro_batches;
}

}  // namespace stg::lower
