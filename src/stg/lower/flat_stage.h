// A pipeline stage of many micro-batches kept as one (flat memory in the
// number of micro-batches; docs/models.md, Micro-batching).
//
// The micro-batches of a stage are copies of one another: the same nodes
// with their own ids, names ("mb<i>." prefixes), tags and dependencies. A
// FlatStage holds the stage lowered from a graph of one micro-batch (the
// template: ReplicateMicroBatches::template_of) and derives the rest with
// arithmetic: the template's nodes fall into lists written once (weights,
// gradient sums, updates) or once per micro-batch, the SEND/RECV tags are
// renumbered as InsertSendRecv numbers them for the whole run, and the
// pipeline schedule's ctrl_deps come from the schedule's step order and the
// first and last compute nodes of each step of the template.
//
// The template is lowered in reference order (the order nodes are created
// in), which the copies keep: the template's file order splits into runs
// written once or once per micro-batch in place. Issue order
// (NodeOrder::kIssue) is derived from it: the copies, numbered in reference
// order, are ordered by the one issue-order algorithm (node_order.h), as a
// stage lowered with every micro-batch is. A template whose structure the
// derivation does not cover is refused with FlatUnsupported, naming the
// rule; tests/flat_micro_batch_test.cc checks the derivation against the
// full expansion over the configuration matrix.
//
// Decode steps are copies too (a serving workload, workloads/forward_only.h):
// in a decode-step template one decode step stands for all of them. Its
// nodes (per_step) are written once per step of every micro-batch, right
// after the micro-batch's other nodes of their run, step after step; their
// sizes grow per step (lower/step_growth.h); a node of the step that reads
// a node of an earlier phase with a successor (LoweredNode::succeeds: the
// prefill's token, succeeded by the step's) reads, from the second step on,
// the previous step's successor instead. SEND/RECV tags and the schedule's
// steps follow. Decode steps are written in reference order only.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "stg/graph/graph.h"
#include "stg/lower/node_order.h"
#include "stg/lower/schedule.h"
#include "stg/lower/stage_graph.h"

namespace stg::lower {

class FlatUnsupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// How InsertSendRecv numbered the RECVs of each stage in the template graph:
// one number per RECV, stage after stage, in graph order, so a stage's
// numbers are its RECVs before the micro-batch, the micro-batch's (those of
// no decode step, then those of the decode step), and those after it. With m
// micro-batches of d decode steps the middle part is there m times, its
// decode step's part d times in each.
struct RecvTags {
  struct Stage {
    int32_t first = 0;  // the stage's first tag in the template
    int before = 0, per_micro_batch = 0, per_step = 0, after = 0;
    int64_t per_copy(int steps) const { return per_micro_batch + int64_t{steps} * per_step; }
    int64_t count(int micro_batches, int steps = 1) const {
      return before + micro_batches * per_copy(steps) + after;
    }
  };
  std::vector<Stage> stages;
};
// Throws FlatUnsupported when a stage's RECVs are not in that form.
RecvTags recv_tags(const graph::Graph& g, int pp);

// The order of a stage's steps (the pipeline degree is the run's: one
// RecvTags entry per stage).
struct FlatSchedule {
  Schedule schedule = Schedule::kNone;
  int chunks = 1;
  // A workload of several phases (prefill, decode steps): run in this
  // order, each for every micro-batch (lower::phase_steps); else `schedule`.
  std::vector<Step> phases;
  // A decode-step template: each decode phase of `phases` stands for this
  // many decode steps (its phase_step, the next one, ...).
  int decode_steps = 1;
};

class FlatStage {
 public:
  // Template nodes written together, in this order: once, or once per
  // micro-batch (an instance per micro-batch).
  struct List {
    std::vector<uint32_t> nodes;
    bool repeated = false;
    bool per_step = false;  // once per decode step of each micro-batch
  };
  struct Instance {
    uint32_t list = 0;
    int micro_batch = 0;
    int step = 0;  // the decode step (0 for a list of no decode step)
  };

  // `one`: the stage lowered from the template graph in reference order,
  // with the schedule of one micro-batch (its ctrl_deps are dropped: the
  // copies' are derived); `micro_batches`: the copies, one per replica of
  // the graph (lower::replica_count); `order`: how the copies are numbered.
  // Throws FlatUnsupported.
  FlatStage(StageGraph one, const RecvTags& tags, int micro_batches, const FlatSchedule& schedule,
            NodeOrder order = NodeOrder::kReference);

  // A lowered stage written as it is: one micro-batch, its nodes in their
  // order with their own ids, tags and ctrl_deps (a stage lowered with every
  // micro-batch, a hand-made stage in a test).
  static FlatStage of_stage(StageGraph stage);

  const StageGraph& one() const { return one_; }
  int micro_batches() const { return micro_batches_; }
  int decode_steps() const { return steps_; }
  const std::vector<List>& lists() const { return lists_; }
  // The file: each instance's list of nodes, for its micro-batch and step.
  const std::vector<Instance>& instances() const { return instances_; }
  uint64_t num_nodes() const { return num_nodes_; }
  // Whether the template node is written once per micro-batch, and once per
  // decode step of each.
  bool repeated(uint32_t node) const { return repeated_[node]; }
  bool per_step(uint32_t node) const { return one_.nodes[node].per_step; }
  int64_t copies(uint32_t node) const {
    return repeated_[node] ? int64_t{micro_batches_} * (per_step(node) ? steps_ : 1) : 1;
  }

  // The sum over the node's copies of a size that is `base` in the
  // template and grows by `growth` per decode step.
  // `first_step`: added in decode step 0 only (LoweredNode::first_step_num_ops).
  int64_t sum_over_copies(uint32_t node, int64_t base, int64_t growth,
                          int64_t first_step = 0) const {
    if (!repeated_[node] || !per_step(node)) return copies(node) * (base + first_step);
    const int64_t d = steps_;
    return int64_t{micro_batches_} * (d * base + growth * (d * (d - 1) / 2) + first_step);
  }

  // Id of the template node's copy for micro-batch `mb` and decode step
  // `step` (any mb for a node written once; step 0 for a node of no step).
  uint64_t id(uint32_t node, int mb, int step = 0) const;
  // The SEND/RECV tag of the copy.
  int32_t tag(uint32_t node, int mb, int step = 0) const;
  // Appends the data dependencies of the copy (ids, in trace order).
  void data_deps(uint32_t node, int mb, std::vector<uint64_t>& out, int step = 0) const;
  // Appends the schedule's ctrl_deps of the copy (ids, ascending).
  void ctrl_deps(uint32_t node, int mb, std::vector<uint64_t>& out, int step = 0) const;

 private:
  FlatStage() = default;
  void number_tags(const RecvTags& tags);
  void plan_reference();
  class CopiesGraph;
  void plan_issue();
  void number_nodes();
  void check_dependencies() const;
  void plan_schedule(const FlatSchedule& schedule);
  // A step of the schedule: the template's step it is a copy of (its key)
  // and which decode step.
  struct StepCopy {
    Step step;
    std::tuple<int, int, int> key;
    int decode_step = 0;
  };
  std::vector<StepCopy> steps(const FlatSchedule& schedule) const;
  // Index of (micro-batch, key, decode step) in previous_step_.
  size_t step_index(int mb, int key, int step) const {
    return (static_cast<size_t>(step) * micro_batches_ + mb) * keys_ + key;
  }
  // Copies of list l: one per micro-batch (and decode step), or one.
  int64_t list_copies(uint32_t l) const {
    return lists_[l].repeated ? int64_t{micro_batches_} * (lists_[l].per_step ? steps_ : 1) : 1;
  }
  // Index of the copy (mb, step) among its list's.
  size_t copy_index(uint32_t l, int mb, int step) const {
    if (!lists_[l].repeated) return 0;
    return lists_[l].per_step ? static_cast<size_t>(mb) * steps_ + step : mb;
  }

  StageGraph one_;
  int micro_batches_ = 1;
  int steps_ = 1;   // decode steps (FlatSchedule::decode_steps)
  int stages_ = 1;  // of the run (RecvTags::stages)
  std::vector<List> lists_;
  std::vector<Instance> instances_;
  uint64_t num_nodes_ = 0;
  std::vector<bool> repeated_;
  // Reference ids: per node its list and place in it; per list and
  // micro-batch, the id of the instance's first node; per node written
  // once, its id. Issue order: the id of each reference id (else empty).
  std::vector<uint32_t> list_of_, place_of_;
  std::vector<std::vector<uint64_t>> first_id_;  // per list, per copy (copy_index)
  std::vector<uint64_t> once_id_;
  std::vector<uint64_t> issue_id_;

  // Tags: per template SEND/RECV, its tag for micro-batch 0 (decode step 0)
  // and the steps per micro-batch and per decode step (0 for one written
  // once).
  std::vector<int64_t> tag0_, tag_mb_, tag_step_;
  // Per node: the decode-step node that succeeds it (LoweredNode::succeeds),
  // or -1.
  std::vector<int64_t> successor_;

  // Schedule: a step key per (chunk, phase, phase step) of the template's
  // steps (step_keys_). Per key, the template's last (sinks) compute nodes of
  // the step; per node its key when it is a source (a first node), else -1;
  // per (mb, key, decode step) the step run just before it that has work
  // here, as its step_index, or -1.
  int keys_ = 0;
  static std::tuple<int, int, int> key_tuple(const Step& s) {
    return {s.chunk, static_cast<int>(s.phase), s.phase_step};
  }
  std::map<std::tuple<int, int, int>, int> step_keys_;
  std::vector<int> key_of_;  // per node: its step key, -1 if in no step
  std::vector<std::vector<uint32_t>> sinks_;
  std::vector<int> source_key_;
  std::vector<int64_t> previous_step_;
};

}  // namespace stg::lower
