#include "stg/tools/rank_graph.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "stg/tools/trace_reader.h"
#include "stg/util/parallel.h"

namespace stg::tools {

namespace {

RankNodeKind kind_of(NodeKind k) {
  switch (k) {
    case NodeKind::kComp:
      return kComputeNode;
    case NodeKind::kSend:
      return kSendNode;
    case NodeKind::kRecv:
      return kRecvNode;
    case NodeKind::kColl:
      return kCollNode;
    default:
      return kOtherNode;
  }
}

// A compute node's time: its roofline time, or with a network description
// whose roofline is off (or MakespanOptions::durations), its duration
// (ASTRA-sim replays 1 ns for 0).
double compute_time(const TraceNode& t, const MakespanOptions& o) {
  if (o.durations || (o.network && !o.network->system.roofline_enabled))
    return t.duration_micros == 0 ? 1.0 : static_cast<double>(t.duration_micros) * 1000;
  if (t.tensor_size.value_or(0) == 0) return 0;
  return static_cast<double>(
      hardware::roofline_ns(static_cast<uint64_t>(std::max<int64_t>(t.num_ops.value_or(0), 0)),
                            *t.tensor_size, o.roofline));
}

// The group a collective runs on: with a network only a string pg_name
// (what ASTRA-sim reads; anything else runs on all ranks).
std::string group_of(const TraceNode& t, const MakespanOptions& o) {
  if (t.kind != NodeKind::kColl) return "";
  if (!o.network) return t.group.value_or("");
  return t.group_attr == GroupAttr::kPgName && t.group_is_string ? t.group.value_or("") : "";
}

void add_node(const TraceNode& t, const MakespanOptions& o, RankGraph& g) {
  const RankNodeKind k = kind_of(t.kind);
  g.kind.push_back(k);
  const int64_t size = t.comm_size.value_or(0);
  double time = 0;
  if (k == kComputeNode) time = compute_time(t, o);
  if (k == kSendNode || k == kCollNode)
    time = static_cast<double>(size) / o.link_gbps;  // B / (GB/s) = ns
  g.time.push_back(time);
  g.peer.push_back(k == kSendNode ? t.comm_dst.value_or(-1) : t.comm_src.value_or(-1));
  g.tag.push_back(t.comm_tag.value_or(0));
  g.size.push_back(size);
  g.coll.push_back(static_cast<int8_t>(k == kCollNode ? t.comm_type.value_or(kCollUnknown) : 0));
  g.group.push_back(group_of(t, o));
  if (o.timeline || o.network) g.ids.push_back(t.id);
  if (o.timeline) g.names.push_back(t.name);
}

void read_rank(const std::string& path, const MakespanOptions& o, RankGraph& g) {
  TraceReader reader;
  if (!reader.open(path)) {
    g.error = reader.error();
    return;
  }
  std::vector<uint64_t> ids;
  std::vector<std::vector<uint64_t>> deps;
  TraceNode t;
  while (reader.next(t)) {
    ids.push_back(t.id);
    deps.emplace_back(t.data_deps);
    deps.back().insert(deps.back().end(), t.ctrl_deps.begin(), t.ctrl_deps.end());
    add_node(t, o, g);
  }
  if (!reader.error().empty()) {
    g.error = reader.error();
    return;
  }
  std::unordered_map<uint64_t, uint32_t> index;
  for (size_t i = 0; i < ids.size(); ++i) index.emplace(ids[i], static_cast<uint32_t>(i));
  g.children.resize(ids.size());
  g.remaining.assign(ids.size(), 0);
  for (size_t i = 0; i < ids.size(); ++i)
    for (uint64_t d : deps[i]) {
      const auto it = index.find(d);
      if (it == index.end()) {
        g.error = path + ": dependency " + std::to_string(d) + " is missing";
        return;
      }
      g.children[it->second].push_back(static_cast<uint32_t>(i));
      ++g.remaining[i];
    }
  g.ok = true;
}

// Peers of the SENDs and RECVs as indices into `chosen` (the ranks run,
// ascending); false with `error` for a peer not among them.
bool index_peers(std::vector<RankGraph>& ranks, const std::vector<int64_t>& chosen,
                 std::string& error) {
  for (size_t r = 0; r < ranks.size(); ++r) {
    RankGraph& g = ranks[r];
    for (size_t i = 0; i < g.kind.size(); ++i) {
      if (g.kind[i] != kSendNode && g.kind[i] != kRecvNode) continue;
      const auto it = std::lower_bound(chosen.begin(), chosen.end(), g.peer[i]);
      if (it == chosen.end() || *it != g.peer[i]) {
        error = "rank " + std::to_string(chosen[r]) + " sends to or receives from rank " +
                std::to_string(g.peer[i]) + ", which is not run";
        return false;
      }
      g.peer[i] = it - chosen.begin();
    }
  }
  return true;
}

}  // namespace

bool read_rank_graphs(const TraceSet& set, std::vector<int64_t>& chosen,
                      std::vector<RankGraph>& ranks, bool add_peers, const MakespanOptions& options,
                      int threads, std::string& error) {
  std::map<int64_t, std::string> paths;
  for (const auto& [rank, path] : set.rank_files()) paths.emplace(rank, path);
  std::map<int64_t, RankGraph> read;
  std::vector<int64_t> next = chosen;
  while (!next.empty()) {
    std::vector<RankGraph> batch(next.size());
    util::parallel_for(0, static_cast<int64_t>(next.size()), worker_threads(threads, next.size()),
                       [&](int64_t k) {
                         const auto it = paths.find(next[k]);
                         if (it != paths.end()) read_rank(it->second, options, batch[k]);
                       });
    std::vector<int64_t> peers;
    for (size_t k = 0; k < next.size(); ++k) {
      if (!batch[k].ok) {
        error = batch[k].error.empty() ? "rank " + std::to_string(next[k]) + " has no trace"
                                       : batch[k].error;
        return false;
      }
      if (add_peers)
        for (size_t i = 0; i < batch[k].kind.size(); ++i)
          if ((batch[k].kind[i] == kSendNode || batch[k].kind[i] == kRecvNode) &&
              !read.count(batch[k].peer[i]) && paths.count(batch[k].peer[i]))
            peers.push_back(batch[k].peer[i]);
      read.emplace(next[k], std::move(batch[k]));
    }
    std::sort(peers.begin(), peers.end());
    peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
    next.clear();
    for (int64_t p : peers)
      if (!read.count(p)) next.push_back(p);
  }
  chosen.clear();
  ranks.clear();
  for (auto& [rank, graph] : read) {
    chosen.push_back(rank);
    ranks.push_back(std::move(graph));
  }
  return index_peers(ranks, chosen, error);
}

}  // namespace stg::tools
