// A pipeline stage of many micro-batches kept as one (flat memory in the
// number of micro-batches; README.md, Micro-batching).
//
// The micro-batches of a stage are copies of one another: the same nodes
// with their own ids, names ("mb<i>." prefixes), tags and dependencies. A
// FlatStage holds the stage lowered from a graph of one micro-batch (the
// template: ReplicateMicroBatches::template_of) and derives the rest with
// arithmetic: the template's file order splits into segments written once
// (weights, gradient sums, updates) or once per micro-batch, the SEND/RECV
// tags are renumbered as InsertSendRecv numbers them for the whole run, and
// the pipeline schedule's ctrl_deps come from the schedule's step order and
// the first and last compute nodes of each step of the template.
//
// Only the reference node order (NodeOrder::kReference) is derived; a
// template whose structure the derivation does not cover is refused with
// FlatUnsupported (the caller then lowers every micro-batch). The run also
// checks the derivation against a real lowering of two micro-batches
// (generate.cc), since it rests on the passes treating every micro-batch
// alike and appending what they add in micro-batch order.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "stg/graph/graph.h"
#include "stg/lower/schedule.h"
#include "stg/lower/stage_graph.h"

namespace stg::lower {

class FlatUnsupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// How InsertSendRecv numbered the RECVs of each stage in the template graph:
// one number per RECV, stage after stage, in graph order, so a stage's
// numbers are its RECVs before the micro-batch, the micro-batch's, and those
// after it. With m micro-batches the middle part is there m times.
struct RecvTags {
  struct Stage {
    int32_t first = 0;  // the stage's first tag in the template
    int before = 0, per_micro_batch = 0, after = 0;
    int count(int micro_batches) const { return before + micro_batches * per_micro_batch + after; }
  };
  std::vector<Stage> stages;
};
// Throws FlatUnsupported when a stage's RECVs are not in that form.
RecvTags recv_tags(const graph::Graph& g, int pp);

struct FlatSchedule {
  Schedule schedule = Schedule::kNone;
  int pp = 1;
  int chunks = 1;
};

class FlatStage {
 public:
  struct Segment {
    uint32_t begin = 0, end = 0;  // template nodes [begin, end)
    bool repeated = false;        // once per micro-batch, else once
    uint64_t first_id = 0;        // id of its first node (micro-batch 0's)
    uint64_t size() const { return end - begin; }
  };

  // `one`: the stage lowered from the template graph in reference order
  // without a schedule. Throws FlatUnsupported.
  FlatStage(StageGraph one, const RecvTags& tags, int micro_batches, const FlatSchedule& schedule);

  const StageGraph& one() const { return one_; }
  int micro_batches() const { return micro_batches_; }
  const std::vector<Segment>& segments() const { return segments_; }
  const Segment& segment_of(uint32_t node) const { return segments_[segment_of_[node]]; }
  uint64_t num_nodes() const { return num_nodes_; }
  // How many times the template node is written (1 or micro_batches).
  int64_t copies(uint32_t node) const { return segment_of(node).repeated ? micro_batches_ : 1; }

  // Id of the template node's copy for micro-batch `mb` (any mb for a node
  // written once).
  uint64_t id(uint32_t node, int mb) const {
    const Segment& s = segment_of(node);
    return s.first_id + (node - s.begin) + (s.repeated ? uint64_t(mb) * s.size() : 0);
  }
  // The SEND/RECV tag of the copy for micro-batch `mb`.
  int32_t tag(uint32_t node, int mb) const;
  // Appends the data dependencies of the copy (ids, in trace order).
  void data_deps(uint32_t node, int mb, std::vector<uint64_t>& out) const;
  // Appends the schedule's ctrl_deps of the copy (ids, ascending).
  void ctrl_deps(uint32_t node, int mb, std::vector<uint64_t>& out) const;

 private:
  void split_segments(const RecvTags& tags);
  void number_segments();
  void check_dependencies() const;
  void plan_schedule(const FlatSchedule& schedule);

  StageGraph one_;
  int micro_batches_ = 1;
  std::vector<Segment> segments_;
  std::vector<uint32_t> segment_of_;
  uint64_t num_nodes_ = 0;

  // Tags: per template SEND/RECV, its tag for micro-batch 0 and the step
  // per micro-batch (0 for one written once).
  std::vector<int32_t> tag0_, tag_step_;

  // Schedule: a step key is chunk * 2 + backward. Per key, the template's
  // first (sources) and last (sinks) compute nodes of the step; per node
  // its key when it is a source, else -1; per (mb, key) the step run just
  // before it that has work here, as mb * keys + key, or -1.
  int keys_ = 0;
  std::vector<std::vector<uint32_t>> sinks_;
  std::vector<int> source_key_;
  std::vector<int64_t> previous_step_;
};

}  // namespace stg::lower
