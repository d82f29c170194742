#include "stg/lower/flat_stage.h"

#include <algorithm>
#include <map>
#include <string>

#include "stg/util/graph_algo.h"

namespace stg::lower {
namespace {

bool is_p2p(const LoweredNode& n) { return n.kind == NodeKind::kSend || n.kind == NodeKind::kRecv; }

[[noreturn]] void unsupported(int stage, const std::string& why) {
  throw FlatUnsupported("stage " + std::to_string(stage) + ": " + why);
}

}  // namespace

RecvTags recv_tags(const graph::Graph& g, int pp) {
  // Per stage: (tag, micro-batch) of its RECVs.
  std::vector<std::vector<std::pair<int32_t, int>>> recvs(pp);
  for (const graph::Tensor& t : g.tensors())
    if (t.op == graph::Op::kRecv) {
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
                     const FlatSchedule& schedule)
    : one_(std::move(one)), micro_batches_(micro_batches) {
  if (micro_batches_ < 1) unsupported(one_.stage, "no micro-batch");
  split_segments(tags);
  number_segments();
  check_dependencies();
  plan_schedule(schedule);
}

void FlatStage::split_segments(const RecvTags& tags) {
  const auto& nodes = one_.nodes;
  const auto n = static_cast<uint32_t>(nodes.size());
  const int stage = one_.stage;
  const int pp = static_cast<int>(tags.stages.size());
  tag0_.assign(n, 0);
  tag_step_.assign(n, 0);
  // A segment key: which part of the file (the non-p2p nodes, or the SEND
  // and RECV of one receiving stage) and whether it repeats.
  std::vector<std::pair<int, bool>> key(n);
  bool p2p_seen = false;
  for (uint32_t i = 0; i < n; ++i) {
    const LoweredNode& node = nodes[i];
    if (node.id != i) unsupported(stage, "template ids are not 0..n-1 in file order");
    if (!node.ctrl_deps.empty()) unsupported(stage, "a template with ctrl_deps");
    if (node.micro_batch > 0) unsupported(stage, "a template of more than one micro-batch");
    if (!is_p2p(node)) {
      if (p2p_seen) unsupported(stage, "a node after the SENDs and RECVs");
      key[i] = {-1, node.micro_batch == 0};
      continue;
    }
    p2p_seen = true;
    if (node.peer.kind != mesh::Peer::Kind::kStage)
      unsupported(stage, "a SEND/RECV on a mesh axis");
    const int receiver = node.kind == NodeKind::kRecv ? stage : node.peer.stage;
    if (receiver < 0 || receiver >= pp) unsupported(stage, "a SEND to no stage of the run");
    const RecvTags::Stage& r = tags.stages[receiver];
    const int offset = node.tag - r.first;
    if (offset < 0 || offset >= r.count(1))
      unsupported(stage, "a SEND/RECV tag outside its receiver's");
    const bool repeated = offset >= r.before && offset < r.before + r.per_micro_batch;
    if (repeated != (node.micro_batch == 0))
      unsupported(stage, "a SEND/RECV whose micro-batch disagrees with its tag");
    const bool after = offset >= r.before + r.per_micro_batch;
    int32_t first = 0;  // the receiver's first tag with all micro-batches
    for (int s = 0; s < receiver; ++s) first += tags.stages[s].count(micro_batches_);
    tag0_[i] = first + offset + (after ? (micro_batches_ - 1) * r.per_micro_batch : 0);
    tag_step_[i] = repeated ? r.per_micro_batch : 0;
    key[i] = {receiver, repeated};
    if (i > 0 && is_p2p(nodes[i - 1]) && nodes[i - 1].tag >= node.tag)
      unsupported(stage, "SENDs and RECVs not in tag order");
  }
  segment_of_.assign(n, 0);
  for (uint32_t i = 0; i < n; ++i) {
    if (i == 0 || key[i] != key[i - 1]) segments_.push_back({i, i, key[i].second, 0});
    segments_.back().end = i + 1;
    segment_of_[i] = static_cast<uint32_t>(segments_.size() - 1);
  }
}

void FlatStage::number_segments() {
  uint64_t next = 0;
  for (Segment& s : segments_) {
    s.first_id = next;
    next += s.size() * (s.repeated ? static_cast<uint64_t>(micro_batches_) : 1);
  }
  num_nodes_ = next;
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
    if (segment_of(static_cast<uint32_t>(i)).repeated) work.push_back(static_cast<uint32_t>(i));
  while (!work.empty()) {
    const uint32_t v = work.back();
    work.pop_back();
    for (uint32_t c : children[v])
      if (!segment_of(c).repeated && !waits[c]) {
        waits[c] = true;
        work.push_back(c);
      }
  }
  for (uint32_t i = 0; i < n; ++i) {
    const bool repeated = segment_of(i).repeated;
    int runs = 0;
    bool in_run = false;
    for (uint64_t d : nodes[i].data_deps) {
      const bool dep_repeated = segment_of(static_cast<uint32_t>(d)).repeated;
      if (repeated && !dep_repeated && waits[d])
        unsupported(stage, "a micro-batch node reads a node that waits for all micro-batches");
      if (!repeated && dep_repeated && !in_run) ++runs;
      in_run = dep_repeated;
    }
    if (runs > 1) unsupported(stage, "a node reads the micro-batch in two places");
  }
}

void FlatStage::plan_schedule(const FlatSchedule& schedule) {
  const auto& nodes = one_.nodes;
  const auto n = nodes.size();
  source_key_.assign(n, -1);
  if (schedule.schedule == Schedule::kNone) return;
  const int chunks = schedule.schedule == Schedule::kInterleaved ? std::max(1, schedule.chunks) : 1;
  keys_ = 2 * chunks;
  std::vector<int> key_of(n, -1);
  for (size_t i = 0; i < n; ++i)
    if (nodes[i].kind == NodeKind::kComp && nodes[i].scheduled) {
      if (nodes[i].chunk < 0 || nodes[i].chunk >= chunks)
        unsupported(one_.stage, "a node of no chunk of the schedule");
      key_of[i] = nodes[i].chunk * 2 + (nodes[i].backward ? 1 : 0);
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
      mark(after, *it, key_of[c]);
    }
  for (int v : order)
    for (int c : children[v]) {
      for (size_t w = 0; w < words; ++w) before[c * words + w] |= before[v * words + w];
      mark(before, c, key_of[v]);
    }
  sinks_.assign(keys_, {});
  for (size_t i = 0; i < n; ++i) {
    const int key = key_of[i];
    if (key < 0) continue;
    if (!has(after, i, key)) sinks_[key].push_back(static_cast<uint32_t>(i));
    if (!has(before, i, key)) source_key_[i] = key;
  }
  // The step run before each step, among those with work on this stage.
  previous_step_.assign(static_cast<size_t>(micro_batches_) * keys_, -1);
  int64_t previous = -1;
  for (const Step& step :
       schedule_steps(schedule.schedule, one_.stage, schedule.pp, micro_batches_, chunks)) {
    const int key = step.chunk * 2 + (step.backward ? 1 : 0);
    if (step.micro_batch >= micro_batches_ || sinks_[key].empty()) continue;
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
  if (segment_of(node).repeated) {
    for (uint64_t d : deps) out.push_back(id(static_cast<uint32_t>(d), mb));
    return;
  }
  // A node written once: the run of micro-batch dependencies stands for
  // every micro-batch's, micro-batch after micro-batch.
  for (size_t k = 0; k < deps.size(); ++k) {
    if (!segment_of(static_cast<uint32_t>(deps[k])).repeated) {
      out.push_back(id(static_cast<uint32_t>(deps[k]), 0));
      continue;
    }
    size_t end = k;
    while (end < deps.size() && segment_of(static_cast<uint32_t>(deps[end])).repeated) ++end;
    for (int m = 0; m < micro_batches_; ++m)
      for (size_t j = k; j < end; ++j) out.push_back(id(static_cast<uint32_t>(deps[j]), m));
    k = end - 1;
  }
}

void FlatStage::ctrl_deps(uint32_t node, int mb, std::vector<uint64_t>& out) const {
  const int key = source_key_[node];
  if (key < 0) return;
  const int64_t previous = previous_step_[static_cast<size_t>(mb) * keys_ + key];
  if (previous < 0) return;
  const int previous_mb = static_cast<int>(previous / keys_);
  for (uint32_t u : sinks_[previous % keys_]) out.push_back(id(u, previous_mb));
}

}  // namespace stg::lower
