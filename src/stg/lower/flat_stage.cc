#include "stg/lower/flat_stage.h"

#include <algorithm>
#include <string>
#include <unordered_map>

#include "stg/util/graph_algo.h"

namespace stg::lower {
namespace {

bool is_p2p(const LoweredNode& n) { return n.kind == NodeKind::kSend || n.kind == NodeKind::kRecv; }
// A SEND or RECV between pipeline stages (not along a mesh axis).
bool is_stage_link(const LoweredNode& n) {
  return is_p2p(n) && n.peer.kind == mesh::Peer::Kind::kStage;
}

// The stage whose RECV numbering a SEND's or RECV's tag belongs to.
int receiving_stage(const LoweredNode& n, int stage) {
  return n.kind == NodeKind::kRecv ? stage : n.peer.stage;
}

[[noreturn]] void unsupported(int stage, const std::string& why) {
  throw FlatUnsupported("stage " + std::to_string(stage) + ": " + why);
}

}  // namespace

RecvTags recv_tags(const graph::Graph& g, int pp) {
  struct Recv {
    int32_t tag;
    int micro_batch;
    bool per_step;
    bool operator<(const Recv& o) const { return tag < o.tag; }
  };
  std::vector<std::vector<Recv>> recvs(pp);
  for (const graph::Tensor& t : g.tensors())
    if (t.op == graph::Op::kRecv && t.comm.peer.kind == mesh::Peer::Kind::kStage) {
      if (t.stage < 0 || t.stage >= pp) throw FlatUnsupported("a RECV on no stage of the run");
      recvs[t.stage].push_back({t.comm.tag, t.micro_batch, t.phase == graph::Phase::kDecode});
    }
  RecvTags out;
  out.stages.resize(pp);
  int32_t next = 0;
  for (int s = 0; s < pp; ++s) {
    std::sort(recvs[s].begin(), recvs[s].end());
    RecvTags::Stage& st = out.stages[s];
    st.first = next;
    const std::string stage = "stage " + std::to_string(s) + ": ";
    // Tags next, next+1, ...: before (no micro-batch), the micro-batch's
    // (of no decode step, then of the decode step), after (no micro-batch).
    int part = 0;
    for (const Recv& r : recvs[s]) {
      if (r.tag != next++) throw FlatUnsupported(stage + "RECV tags have gaps");
      if (r.micro_batch > 0) throw FlatUnsupported("a template of more than one micro-batch");
      if (r.micro_batch < 0 && r.per_step)
        throw FlatUnsupported(stage + "a decode step's RECV of no micro-batch");
      if (r.micro_batch == 0 && part == 3)
        throw FlatUnsupported(stage + "RECVs of no micro-batch between the micro-batch's");
      if (r.micro_batch == 0 && !r.per_step && part == 2)
        throw FlatUnsupported(stage + "a RECV of no decode step after the decode step's");
      if (r.micro_batch == 0) part = r.per_step ? 2 : 1;
      if (r.micro_batch < 0 && part > 0) part = 3;
      (part == 0   ? st.before
       : part == 1 ? st.per_micro_batch
       : part == 2 ? st.per_step
                   : st.after) += 1;
    }
  }
  return out;
}

FlatStage::FlatStage(StageGraph one, const RecvTags& tags, int micro_batches,
                     const FlatSchedule& schedule, NodeOrder order)
    : one_(std::move(one)),
      micro_batches_(micro_batches),
      steps_(schedule.decode_steps),
      stages_(static_cast<int>(tags.stages.size())) {
  const int stage = one_.stage;
  if (micro_batches_ < 1) unsupported(stage, "no micro-batch");
  if (steps_ < 1) unsupported(stage, "no decode step");
  const auto n = static_cast<uint32_t>(one_.nodes.size());
  repeated_.assign(n, false);
  successor_.assign(n, -1);
  for (uint32_t i = 0; i < n; ++i) {
    LoweredNode& node = one_.nodes[i];
    if (node.id != i) unsupported(stage, "template ids are not 0..n-1 in file order");
    // The template's own steps ordered its nodes (issue order); the copies'
    // ctrl_deps are derived.
    node.ctrl_deps.clear();
    if (node.micro_batch > 0) unsupported(stage, "a template of more than one micro-batch");
    repeated_[i] = node.micro_batch == 0;
    if (node.per_step && !repeated_[i])
      unsupported(stage, "a decode step's node of no micro-batch");
  }
  for (uint32_t i = 0; i < n; ++i) {
    const int64_t p = one_.nodes[i].succeeds;
    if (p < 0) continue;
    if (p >= n || !one_.nodes[i].per_step || one_.nodes[p].per_step || !repeated_[p])
      unsupported(stage, "a decode step's node succeeds no node of an earlier phase");
    if (successor_[p] >= 0) unsupported(stage, "a node with two successors");
    successor_[p] = i;
  }
  list_of_.assign(n, 0);
  place_of_.assign(n, 0);
  number_tags(tags);
  plan_schedule(schedule);
  plan_reference();
  number_nodes();
  check_dependencies();
  if (order == NodeOrder::kIssue) plan_issue();
}

FlatStage FlatStage::of_stage(StageGraph stage) {
  FlatStage out;
  out.one_ = std::move(stage);
  const auto n = static_cast<uint32_t>(out.one_.nodes.size());
  out.repeated_.assign(n, false);
  out.list_of_.assign(n, 0);
  out.place_of_.assign(n, 0);
  out.tag0_.assign(n, 0);
  out.tag_mb_.assign(n, 0);
  out.tag_step_.assign(n, 0);
  out.successor_.assign(n, -1);
  out.once_id_.assign(n, 0);
  out.lists_.push_back({{}, false});
  // Ids may be any (a hand-made stage): dependencies become indices, ids
  // are kept as the nodes' own.
  std::unordered_map<uint64_t, uint32_t> index;
  for (uint32_t i = 0; i < n; ++i)
    if (!index.emplace(out.one_.nodes[i].id, i).second)
      unsupported(out.one_.stage, "two nodes with one id");
  for (uint32_t i = 0; i < n; ++i) {
    LoweredNode& node = out.one_.nodes[i];
    for (auto* deps : {&node.data_deps, &node.ctrl_deps})
      for (uint64_t& d : *deps) {
        const auto it = index.find(d);
        if (it == index.end()) unsupported(out.one_.stage, "a dependency on no node of the stage");
        d = it->second;
      }
    out.lists_[0].nodes.push_back(i);
    out.place_of_[i] = i;
    out.once_id_[i] = node.id;
    out.tag0_[i] = node.tag;
  }
  out.instances_.push_back({0, 0});
  out.first_id_.assign(1, {0});
  out.num_nodes_ = n;
  return out;
}

void FlatStage::number_tags(const RecvTags& tags) {
  const auto& nodes = one_.nodes;
  const int stage = one_.stage;
  const int pp = static_cast<int>(tags.stages.size());
  tag0_.assign(nodes.size(), 0);
  tag_mb_.assign(nodes.size(), 0);
  tag_step_.assign(nodes.size(), 0);
  // Each stage's first tag with all micro-batches and decode steps.
  std::vector<int64_t> first(pp, 0);
  for (int s = 1; s < pp; ++s)
    first[s] = first[s - 1] + tags.stages[s - 1].count(micro_batches_, steps_);
  if (pp > 0 && first[pp - 1] + tags.stages[pp - 1].count(micro_batches_, steps_) > INT32_MAX)
    unsupported(stage, "more SEND/RECV tags than a 32-bit comm_tag holds");
  // Along a mesh axis a SEND and its RECV are on this stage: copies add a
  // stride above every template tag of such links, so tags stay unique per
  // (src, dst) whatever the template's are.
  int32_t axis_stride = 0;
  for (const LoweredNode& node : nodes)
    if (is_p2p(node) && !is_stage_link(node)) {
      if (node.tag < 0) unsupported(stage, "a negative SEND/RECV tag along a mesh axis");
      if (node.per_step) unsupported(stage, "a decode step's SEND/RECV along a mesh axis");
      axis_stride = std::max(axis_stride, node.tag + 1);
    }
  for (size_t i = 0; i < nodes.size(); ++i) {
    const LoweredNode& node = nodes[i];
    if (!is_p2p(node)) continue;
    if (!is_stage_link(node)) {
      tag0_[i] = node.tag;
      tag_mb_[i] = repeated_[i] ? axis_stride : 0;
      continue;
    }
    const int receiver = receiving_stage(node, stage);
    if (receiver < 0 || receiver >= pp) unsupported(stage, "a SEND to no stage of the run");
    const RecvTags::Stage& r = tags.stages[receiver];
    const int64_t offset = node.tag - r.first;
    if (offset < 0 || offset >= r.count(1))
      unsupported(stage, "a SEND/RECV tag outside its receiver's");
    // Where the offset falls: before, the micro-batch's (of no decode step,
    // of the decode step), after.
    const int64_t micro_batch_part = offset - r.before,
                  step_part = micro_batch_part - r.per_micro_batch;
    const bool after = step_part >= r.per_step;
    const bool repeated = micro_batch_part >= 0 && !after;
    const bool per_step = repeated && step_part >= 0;
    if (repeated != repeated_[i] || per_step != node.per_step)
      unsupported(stage, "a SEND/RECV whose micro-batch or decode step disagrees with its tag");
    const int64_t start = first[receiver] + r.before;
    if (!repeated && !after) {
      tag0_[i] = first[receiver] + offset;
    } else if (after) {
      tag0_[i] = start + micro_batches_ * r.per_copy(steps_) + (step_part - r.per_step);
    } else {
      tag0_[i] = start + (per_step ? r.per_micro_batch + step_part : micro_batch_part);
      tag_mb_[i] = r.per_copy(steps_);
      tag_step_[i] = per_step ? r.per_step : 0;
    }
  }
}

// Reference order: the nodes of the stage in graph order, then its SENDs and
// RECVs to and from other stages by tag. Each run of the template's nodes that are all written
// once, or all once per micro-batch, is a list; a repeated list is written for every micro-batch in
// place (the passes add a micro-batch's tensors next to it, or append them micro-batch after
// micro-batch); SENDs and RECVs form runs per receiving stage (whose tags are its RECVs before, in
// and after the micro-batches).
void FlatStage::plan_reference() {
  const auto& nodes = one_.nodes;
  const auto n = static_cast<uint32_t>(nodes.size());
  const int stage = one_.stage;
  // (receiving stage or -1, repeated, per decode step)
  std::tuple<int, bool, bool> previous{-2, false, false};
  bool p2p_seen = false;
  for (uint32_t i = 0; i < n; ++i) {
    const LoweredNode& node = nodes[i];
    int part = -1;
    if (is_stage_link(node)) {
      p2p_seen = true;
      part = receiving_stage(node, stage);
      if (i > 0 && is_stage_link(nodes[i - 1]) && nodes[i - 1].tag >= node.tag)
        unsupported(stage, "SENDs and RECVs not in tag order");
    } else if (p2p_seen) {
      unsupported(stage, "a node after the SENDs and RECVs");
    }
    const std::tuple<int, bool, bool> key{part, repeated_[i], node.per_step};
    if (key != previous) {
      // In a run of the micro-batch, the decode step's nodes come last.
      if (std::get<0>(previous) == part && std::get<1>(previous) && repeated_[i] &&
          std::get<2>(previous))
        unsupported(stage, "a node of no decode step after the decode step's");
      lists_.push_back({{}, repeated_[i], node.per_step});
    }
    previous = key;
    list_of_[i] = static_cast<uint32_t>(lists_.size() - 1);
    place_of_[i] = static_cast<uint32_t>(lists_.back().nodes.size());
    lists_.back().nodes.push_back(i);
  }
  // A repeated run (its nodes of no decode step, then the decode step's) is
  // written for every micro-batch in place, its decode step's nodes once per
  // step after the rest.
  const auto part_of = [&](uint32_t l) {
    const LoweredNode& first = nodes[lists_[l].nodes.front()];
    return is_stage_link(first) ? receiving_stage(first, stage) : -1;
  };
  for (uint32_t l = 0; l < lists_.size();) {
    uint32_t end = l + 1;
    if (lists_[l].repeated)
      while (end < lists_.size() && lists_[end].repeated && part_of(end) == part_of(l)) ++end;
    for (int mb = 0; mb < (lists_[l].repeated ? micro_batches_ : 1); ++mb)
      for (uint32_t k = l; k < end; ++k)
        for (int step = 0; step < (lists_[k].per_step ? steps_ : 1); ++step)
          instances_.push_back({k, mb, step});
    l = end;
  }
}

// Issue order: the copies of the template's nodes, numbered in reference
// order, are one graph (their data dependencies and the schedule's
// ctrl_deps), and the one issue-order algorithm (node_order.h) orders it as
// it orders a stage lowered with every micro-batch: the file is that order,
// one node at a time. Reference ids stay the nodes' names for id().
class FlatStage::CopiesGraph : public IssueGraph {
 public:
  explicit CopiesGraph(const FlatStage& stage) : stage_(stage) {
    node_of_.resize(stage.num_nodes_);
    micro_batch_of_.resize(stage.num_nodes_);
    for (const Instance& in : stage.instances_)
      for (uint32_t t : stage.lists_[in.list].nodes) {
        const uint64_t r = stage.id(t, in.micro_batch);
        node_of_[r] = t;
        micro_batch_of_[r] = in.micro_batch;
      }
  }
  int size() const override { return static_cast<int>(node_of_.size()); }
  NodeKind kind(int r) const override { return stage_.one_.nodes[node_of_[r]].kind; }
  void deps(int r, std::vector<int>& out) const override {
    scratch_.clear();
    stage_.data_deps(node_of_[r], micro_batch_of_[r], scratch_);
    stage_.ctrl_deps(node_of_[r], micro_batch_of_[r], scratch_);
    for (uint64_t d : scratch_) out.push_back(static_cast<int>(d));
  }
  uint32_t node(int r) const { return node_of_[r]; }
  int micro_batch(int r) const { return micro_batch_of_[r]; }

 private:
  const FlatStage& stage_;
  std::vector<uint32_t> node_of_;
  std::vector<int> micro_batch_of_;
  mutable std::vector<uint64_t> scratch_;
};

void FlatStage::plan_issue() {
  for (const LoweredNode& node : one_.nodes)
    if (node.per_step) unsupported(one_.stage, "decode steps in issue order");
  if (num_nodes_ > static_cast<uint64_t>(INT32_MAX))
    unsupported(one_.stage, "more than 2^31 nodes in issue order");
  const CopiesGraph copies(*this);
  const std::vector<int> order = issue_order(copies);
  if (order.size() != num_nodes_) unsupported(one_.stage, "a dependency cycle");
  lists_.clear();
  for (uint32_t t = 0; t < one_.nodes.size(); ++t) lists_.push_back({{t}, repeated_[t]});
  instances_.clear();
  instances_.reserve(order.size());
  issue_id_.assign(num_nodes_, 0);
  for (size_t k = 0; k < order.size(); ++k) {
    issue_id_[order[k]] = k;
    instances_.push_back({copies.node(order[k]), copies.micro_batch(order[k])});
  }
}

void FlatStage::number_nodes() {
  const auto& nodes = one_.nodes;
  first_id_.assign(lists_.size(), {});
  for (uint32_t l = 0; l < lists_.size(); ++l)
    first_id_[l].assign(static_cast<size_t>(list_copies(l)), 0);
  once_id_.assign(nodes.size(), 0);
  std::vector<bool> placed(nodes.size(), false);
  uint64_t next = 0;
  for (const Instance& in : instances_) {
    const List& list = lists_[in.list];
    first_id_[in.list][copy_index(in.list, in.micro_batch, in.step)] = next;
    for (size_t k = 0; k < list.nodes.size(); ++k)
      if (!repeated_[list.nodes[k]]) {
        if (placed[list.nodes[k]]) unsupported(one_.stage, "a node written twice");
        placed[list.nodes[k]] = true;
        once_id_[list.nodes[k]] = next + k;
      }
    next += list.nodes.size();
  }
  for (size_t i = 0; i < nodes.size(); ++i)
    if (!repeated_[i] && !placed[i]) unsupported(one_.stage, "a node never written");
  num_nodes_ = next;
}

uint64_t FlatStage::id(uint32_t node, int mb, int step) const {
  // The copy's place among its reference list's copies, from the node's own
  // kind: after plan_issue, lists_ holds the issue order's lists (one per
  // template node), not the reference lists that list_of_ and first_id_ index.
  const size_t copy = per_step(node) ? static_cast<size_t>(mb) * steps_ + step : mb;
  const uint64_t reference =
      repeated_[node] ? first_id_[list_of_[node]][copy] + place_of_[node] : once_id_[node];
  return issue_id_.empty() ? reference : issue_id_[reference];
}

// What the derivation assumes of the dependencies: a node of the micro-batch
// reads its own micro-batch's nodes or nodes written before any micro-batch
// (never a node that waits for micro-batches, such as a gradient sum); a
// node written once reads all micro-batches' copies of what it reads of the
// micro-batch, which then form one run of its dependencies.
void FlatStage::check_dependencies() const {
  const auto& nodes = one_.nodes;
  const auto n = nodes.size();
  const int stage = one_.stage;
  // Nodes written once that wait for the micro-batch, directly or not.
  std::vector<std::vector<uint32_t>> children(n);
  for (size_t i = 0; i < n; ++i)
    for (uint64_t d : nodes[i].data_deps) children[d].push_back(static_cast<uint32_t>(i));
  std::vector<bool> waits(n, false);
  std::vector<uint32_t> work;
  for (size_t i = 0; i < n; ++i)
    if (repeated_[i]) work.push_back(static_cast<uint32_t>(i));
  while (!work.empty()) {
    const uint32_t v = work.back();
    work.pop_back();
    for (uint32_t c : children[v])
      if (!repeated_[c] && !waits[c]) {
        waits[c] = true;
        work.push_back(c);
      }
  }
  for (uint32_t i = 0; i < n; ++i) {
    for (uint64_t d : nodes[i].data_deps)
      if (nodes[d].per_step && !nodes[i].per_step)
        unsupported(stage, "a node of no decode step reads a decode step's node");
    int runs = 0;
    bool in_run = false;
    for (uint64_t d : nodes[i].data_deps) {
      if (repeated_[i] && !repeated_[d] && waits[d])
        unsupported(stage, "a micro-batch node reads a node that waits for all micro-batches");
      if (!repeated_[i] && repeated_[d] && !in_run) ++runs;
      in_run = repeated_[d];
    }
    if (runs > 1) unsupported(stage, "a node reads the micro-batch in two places");
  }
}

std::vector<FlatStage::StepCopy> FlatStage::steps(const FlatSchedule& schedule) const {
  std::vector<StepCopy> out;
  if (!schedule.phases.empty()) {
    // Each phase for every micro-batch; a decode phase of a template once
    // per decode step.
    for (const Step& phase : schedule.phases) {
      const bool decode = phase.phase == graph::Phase::kDecode;
      for (int step = 0; step < (decode ? steps_ : 1); ++step)
        for (int mb = 0; mb < micro_batches_; ++mb) {
          Step s = phase;
          s.micro_batch = mb;
          s.phase_step = phase.phase_step + step;
          out.push_back({s, key_tuple(phase), step});
        }
    }
    return out;
  }
  const int chunks = schedule_chunks(schedule.schedule, schedule.chunks);
  // The copies are the graph's replicas (DualPipe: a micro-batch of each
  // direction, lower::replica_count).
  const int micro_batches = micro_batches_of_replicas(schedule.schedule, micro_batches_);
  for (const Step& step :
       replica_steps(schedule.schedule, one_.stage, stages_, micro_batches, chunks))
    if (step.micro_batch < micro_batches_) out.push_back({step, key_tuple(step), 0});
  return out;
}

void FlatStage::plan_schedule(const FlatSchedule& schedule) {
  const auto& nodes = one_.nodes;
  const auto n = nodes.size();
  source_key_.assign(n, -1);
  key_of_.assign(n, -1);
  if (schedule.schedule == Schedule::kNone && schedule.phases.empty()) return;
  // A step key per (chunk, phase, phase step) of the template's steps.
  const std::vector<StepCopy> all = steps(schedule);
  for (const StepCopy& copy : all)
    step_keys_.emplace(copy.key, static_cast<int>(step_keys_.size()));
  keys_ = static_cast<int>(step_keys_.size());
  const bool split = separates_weight_gradients(schedule.schedule);
  for (size_t i = 0; i < n; ++i)
    if (nodes[i].kind == NodeKind::kComp && nodes[i].scheduled) {
      const Step step{step_phase(nodes[i].phase, split), nodes[i].phase_step, 0, nodes[i].chunk};
      const auto it = step_keys_.find(key_tuple(step));
      if (it == step_keys_.end()) unsupported(one_.stage, "a node of no step of the schedule");
      if (!repeated_[i]) unsupported(one_.stage, "a scheduled node of no micro-batch");
      key_of_[i] = it->second;
    }
  // Keys reachable after / before each node (not counting the node).
  const size_t words = (static_cast<size_t>(keys_) + 63) / 64;
  std::vector<std::vector<int>> children(n);
  for (size_t i = 0; i < n; ++i)
    for (uint64_t d : nodes[i].data_deps) children[d].push_back(static_cast<int>(i));
  const std::vector<int> order = util::topological_order(children);
  if (order.size() != n) unsupported(one_.stage, "a dependency cycle");
  std::vector<uint64_t> after(n * words, 0), before(n * words, 0);
  auto mark = [&](std::vector<uint64_t>& set, size_t node, int key) {
    if (key >= 0) set[node * words + key / 64] |= uint64_t{1} << (key % 64);
  };
  auto has = [&](const std::vector<uint64_t>& set, size_t node, int key) {
    return (set[node * words + key / 64] >> (key % 64)) & 1;
  };
  for (auto it = order.rbegin(); it != order.rend(); ++it)
    for (int c : children[*it]) {
      for (size_t w = 0; w < words; ++w) after[*it * words + w] |= after[c * words + w];
      mark(after, *it, key_of_[c]);
    }
  for (int v : order)
    for (int c : children[v]) {
      for (size_t w = 0; w < words; ++w) before[c * words + w] |= before[v * words + w];
      mark(before, c, key_of_[v]);
    }
  sinks_.assign(keys_, {});
  for (size_t i = 0; i < n; ++i) {
    const int key = key_of_[i];
    if (key < 0) continue;
    if (!has(after, i, key)) sinks_[key].push_back(static_cast<uint32_t>(i));
    if (!has(before, i, key)) source_key_[i] = key;
  }
  // The step run before each step, among those with work on this stage.
  previous_step_.assign(static_cast<size_t>(micro_batches_) * keys_ * steps_, -1);
  int64_t previous = -1;
  for (const StepCopy& copy : all) {
    const int key = step_keys_.at(copy.key);
    if (sinks_[key].empty()) continue;
    const auto here =
        static_cast<int64_t>(step_index(copy.step.micro_batch, key, copy.decode_step));
    previous_step_[here] = previous;
    previous = here;
  }
}

int32_t FlatStage::tag(uint32_t node, int mb, int step) const {
  return static_cast<int32_t>(tag0_[node] + mb * tag_mb_[node] + step * tag_step_[node]);
}

void FlatStage::data_deps(uint32_t node, int mb, std::vector<uint64_t>& out, int step) const {
  const auto& deps = one_.nodes[node].data_deps;
  if (repeated_[node]) {
    const bool stepped = per_step(node);
    for (uint64_t d : deps) {
      const auto dep = static_cast<uint32_t>(d);
      // From the second decode step on, a value of an earlier phase is the
      // previous step's successor of it.
      if (stepped && step > 0 && !per_step(dep) && successor_[dep] >= 0)
        out.push_back(id(static_cast<uint32_t>(successor_[dep]), mb, step - 1));
      else
        out.push_back(id(dep, mb, stepped ? step : 0));
    }
    if (stepped && step > 0)
      for (uint64_t d : one_.nodes[node].previous_step_deps)
        out.push_back(id(static_cast<uint32_t>(d), mb, step - 1));
    return;
  }
  // A node written once: the run of micro-batch dependencies stands for
  // every micro-batch's, micro-batch after micro-batch.
  for (size_t k = 0; k < deps.size(); ++k) {
    if (!repeated_[deps[k]]) {
      out.push_back(id(static_cast<uint32_t>(deps[k]), 0));
      continue;
    }
    size_t end = k;
    while (end < deps.size() && repeated_[deps[end]]) ++end;
    for (int m = 0; m < micro_batches_; ++m)
      for (size_t j = k; j < end; ++j) out.push_back(id(static_cast<uint32_t>(deps[j]), m));
    k = end - 1;
  }
}

void FlatStage::ctrl_deps(uint32_t node, int mb, std::vector<uint64_t>& out, int step) const {
  if (keys_ == 0) {  // no schedule derived: the node's own (of_stage; else none)
    for (uint64_t d : one_.nodes[node].ctrl_deps) out.push_back(id(static_cast<uint32_t>(d), mb));
    return;
  }
  const int key = source_key_[node];
  if (key < 0) return;
  const int64_t previous = previous_step_[step_index(mb, key, per_step(node) ? step : 0)];
  if (previous < 0) return;
  const int previous_key = static_cast<int>(previous % keys_);
  const int64_t copy = previous / keys_;
  const auto previous_mb = static_cast<int>(copy % micro_batches_);
  const auto previous_step = static_cast<int>(copy / micro_batches_);
  const size_t first = out.size();
  for (uint32_t u : sinks_[previous_key]) out.push_back(id(u, previous_mb, previous_step));
  std::sort(out.begin() + static_cast<std::ptrdiff_t>(first), out.end());
}

}  // namespace stg::lower
