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
  // Per stage: (tag, micro-batch) of its RECVs.
  std::vector<std::vector<std::pair<int32_t, int>>> recvs(pp);
  for (const graph::Tensor& t : g.tensors())
    if (t.op == graph::Op::kRecv && t.comm.peer.kind == mesh::Peer::Kind::kStage) {
      if (t.stage < 0 || t.stage >= pp) throw FlatUnsupported("a RECV on no stage of the run");
      recvs[t.stage].emplace_back(t.comm.tag, t.micro_batch);
    }
  RecvTags out;
  out.stages.resize(pp);
  int32_t next = 0;
  for (int s = 0; s < pp; ++s) {
    std::sort(recvs[s].begin(), recvs[s].end());
    RecvTags::Stage& st = out.stages[s];
    st.first = next;
    // Tags next, next+1, ...: before (no micro-batch), the micro-batch's,
    // after (no micro-batch).
    int part = 0;
    for (const auto& [tag, mb] : recvs[s]) {
      if (tag != next++)
        throw FlatUnsupported("stage " + std::to_string(s) + ": RECV tags have gaps");
      if (mb > 0) throw FlatUnsupported("a template of more than one micro-batch");
      if (mb == 0 && part == 2)
        throw FlatUnsupported("stage " + std::to_string(s) +
                              ": RECVs of no micro-batch between the micro-batch's");
      if (mb == 0) part = 1;
      if (mb < 0 && part == 1) part = 2;
      (part == 0 ? st.before : part == 1 ? st.per_micro_batch : st.after) += 1;
    }
  }
  return out;
}

FlatStage::FlatStage(StageGraph one, const RecvTags& tags, int micro_batches,
                     const FlatSchedule& schedule, NodeOrder order)
    : one_(std::move(one)),
      micro_batches_(micro_batches),
      stages_(static_cast<int>(tags.stages.size())) {
  const int stage = one_.stage;
  if (micro_batches_ < 1) unsupported(stage, "no micro-batch");
  const auto n = static_cast<uint32_t>(one_.nodes.size());
  repeated_.assign(n, false);
  for (uint32_t i = 0; i < n; ++i) {
    LoweredNode& node = one_.nodes[i];
    if (node.id != i) unsupported(stage, "template ids are not 0..n-1 in file order");
    // The template's own steps ordered its nodes (issue order); the copies'
    // ctrl_deps are derived.
    node.ctrl_deps.clear();
    if (node.micro_batch > 0) unsupported(stage, "a template of more than one micro-batch");
    repeated_[i] = node.micro_batch == 0;
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
  out.tag_step_.assign(n, 0);
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
  tag_step_.assign(nodes.size(), 0);
  // Each stage's first tag with all micro-batches.
  std::vector<int32_t> first(pp, 0);
  for (int s = 1; s < pp; ++s) first[s] = first[s - 1] + tags.stages[s - 1].count(micro_batches_);
  // Along a mesh axis a SEND and its RECV are on this stage: copies add a
  // stride above every template tag of such links, so tags stay unique per
  // (src, dst) whatever the template's are.
  int32_t axis_stride = 0;
  for (const LoweredNode& node : nodes)
    if (is_p2p(node) && !is_stage_link(node)) {
      if (node.tag < 0) unsupported(stage, "a negative SEND/RECV tag along a mesh axis");
      axis_stride = std::max(axis_stride, node.tag + 1);
    }
  for (size_t i = 0; i < nodes.size(); ++i) {
    const LoweredNode& node = nodes[i];
    if (!is_p2p(node)) continue;
    if (!is_stage_link(node)) {
      tag0_[i] = node.tag;
      tag_step_[i] = repeated_[i] ? axis_stride : 0;
      continue;
    }
    const int receiver = receiving_stage(node, stage);
    if (receiver < 0 || receiver >= pp) unsupported(stage, "a SEND to no stage of the run");
    const RecvTags::Stage& r = tags.stages[receiver];
    const int offset = node.tag - r.first;
    if (offset < 0 || offset >= r.count(1))
      unsupported(stage, "a SEND/RECV tag outside its receiver's");
    const bool repeated = offset >= r.before && offset < r.before + r.per_micro_batch;
    if (repeated != repeated_[i])
      unsupported(stage, "a SEND/RECV whose micro-batch disagrees with its tag");
    const bool after = offset >= r.before + r.per_micro_batch;
    tag0_[i] = first[receiver] + offset + (after ? (micro_batches_ - 1) * r.per_micro_batch : 0);
    tag_step_[i] = repeated ? r.per_micro_batch : 0;
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
  std::pair<int, bool> previous{-2, false};  // (receiving stage or -1, repeated)
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
    const std::pair<int, bool> key{part, repeated_[i]};
    if (key != previous) lists_.push_back({{}, key.second});
    previous = key;
    list_of_[i] = static_cast<uint32_t>(lists_.size() - 1);
    place_of_[i] = static_cast<uint32_t>(lists_.back().nodes.size());
    lists_.back().nodes.push_back(i);
  }
  for (uint32_t l = 0; l < lists_.size(); ++l)
    for (int mb = 0; mb < (lists_[l].repeated ? micro_batches_ : 1); ++mb)
      instances_.push_back({l, mb});
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
  for (size_t l = 0; l < lists_.size(); ++l)
    first_id_[l].assign(lists_[l].repeated ? micro_batches_ : 1, 0);
  once_id_.assign(nodes.size(), 0);
  std::vector<bool> placed(nodes.size(), false);
  uint64_t next = 0;
  for (const Instance& in : instances_) {
    const List& list = lists_[in.list];
    first_id_[in.list][list.repeated ? in.micro_batch : 0] = next;
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

uint64_t FlatStage::id(uint32_t node, int mb) const {
  const uint64_t reference =
      repeated_[node] ? first_id_[list_of_[node]][mb] + place_of_[node] : once_id_[node];
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

std::vector<Step> FlatStage::steps(const FlatSchedule& schedule) const {
  if (!schedule.phases.empty()) return phase_steps(schedule.phases, micro_batches_);
  const int chunks = schedule_chunks(schedule.schedule, schedule.chunks);
  // The copies are the graph's replicas (DualPipe: a micro-batch of each
  // direction, lower::replica_count).
  const int micro_batches = micro_batches_of_replicas(schedule.schedule, micro_batches_);
  std::vector<Step> out;
  for (const Step& step :
       replica_steps(schedule.schedule, one_.stage, stages_, micro_batches, chunks))
    if (step.micro_batch < micro_batches_) out.push_back(step);
  return out;
}

void FlatStage::plan_schedule(const FlatSchedule& schedule) {
  const auto& nodes = one_.nodes;
  const auto n = nodes.size();
  source_key_.assign(n, -1);
  key_of_.assign(n, -1);
  if (schedule.schedule == Schedule::kNone && schedule.phases.empty()) return;
  // A step key per (chunk, phase, phase step) the schedule runs.
  const std::vector<Step> all = steps(schedule);
  for (const Step& step : all)
    step_keys_.emplace(key_tuple(step), static_cast<int>(step_keys_.size()));
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
  previous_step_.assign(static_cast<size_t>(micro_batches_) * keys_, -1);
  int64_t previous = -1;
  for (const Step& step : all) {
    const int key = step_keys_.at(key_tuple(step));
    if (sinks_[key].empty()) continue;
    const int64_t here = int64_t{step.micro_batch} * keys_ + key;
    previous_step_[here] = previous;
    previous = here;
  }
}

int32_t FlatStage::tag(uint32_t node, int mb) const {
  return tag0_[node] + static_cast<int32_t>(mb) * tag_step_[node];
}

void FlatStage::data_deps(uint32_t node, int mb, std::vector<uint64_t>& out) const {
  const auto& deps = one_.nodes[node].data_deps;
  if (repeated_[node]) {
    for (uint64_t d : deps) out.push_back(id(static_cast<uint32_t>(d), mb));
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

void FlatStage::ctrl_deps(uint32_t node, int mb, std::vector<uint64_t>& out) const {
  if (keys_ == 0) {  // no schedule derived: the node's own (of_stage; else none)
    for (uint64_t d : one_.nodes[node].ctrl_deps) out.push_back(id(static_cast<uint32_t>(d), mb));
    return;
  }
  const int key = source_key_[node];
  if (key < 0) return;
  const int64_t previous = previous_step_[static_cast<size_t>(mb) * keys_ + key];
  if (previous < 0) return;
  const int previous_mb = static_cast<int>(previous / keys_);
  const size_t first = out.size();
  for (uint32_t u : sinks_[previous % keys_]) out.push_back(id(u, previous_mb));
  std::sort(out.begin() + static_cast<std::ptrdiff_t>(first), out.end());
}

}  // namespace stg::lower
