#include "stg/lower/schedules/dualpipe_order.h"

#include <algorithm>
#include <deque>
#include <utility>

#include "stg/lower/schedules/steps.h"

namespace stg::lower::schedules {

namespace {

using graph::Phase;

// DualPipe and DualPipeV (DeepSeek-V3 report §3.2; the DualPipe repository's
// eight phases). The order is written over DeepSeek's "phases" 0 and 1 of a
// rank: under DualPipeV its chunks 0 and 1; under DualPipe phase 0 is the
// direction in which the rank is in the first half of the pipeline.
class DualPipeOrder {
 public:
  DualPipeOrder(bool v_shape, int stage, int pp, int micro_batches) : v_shape_(v_shape), pp_(pp) {
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
  int pp_;
  int ranks_ = 0, rank_ = 0, per_phase_ = 0;
  bool second_half_ = false;
  int forwards_[2] = {0, 0}, backwards_[2] = {0, 0};
  std::deque<std::pair<int, int>> pending_;
  std::vector<Slot> slots_;
};

}  // namespace

std::vector<Slot> dualpipe_slots(bool v_shape, int stage, int pp, int micro_batches) {
  return DualPipeOrder(v_shape, stage, pp, micro_batches).slots();
}

double dualpipe_in_flight(Schedule schedule, int stage, int pp, int micro_batches, int chunks) {
  return peak_chunks_in_flight(schedule_steps(schedule, stage, pp, micro_batches, chunks), true) /
         2.0;
}

}  // namespace stg::lower::schedules
