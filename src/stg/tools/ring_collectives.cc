#include "stg/tools/ring_collectives.h"

#include <algorithm>
#include <iterator>

namespace stg::tools {

namespace {

// ASTRA-sim's tags of collective messages: the stream's number modulo 5e8,
// offset by 5e8 (native sends and receives use 0 .. 5e8).
constexpr int64_t kCollectiveTags = 500000000;
// A group's streams are numbered from its id x 10^6.
constexpr int64_t kGroupStreams = 1000000;
// The endpoint delay of a packet on a group's ring (ASTRA-sim's "Local"
// rings), whatever the system's endpoint-delay.
constexpr uint64_t kGroupRingDelayNs = 10;

}  // namespace

RingCollectives::RingCollectives(const AstraSimNetwork& network, NetworkCalendar& calendar,
                                 std::vector<int64_t> npus, std::function<void(uint32_t)> done)
    : network_(network), calendar_(calendar), npus_(std::move(npus)), done_(std::move(done)) {
  index_of_npu_.assign(static_cast<size_t>(network.npus()), -1);
  for (size_t i = 0; i < npus_.size(); ++i)
    index_of_npu_[static_cast<size_t>(npus_[i])] = static_cast<int32_t>(i);
  ranks_.resize(npus_.size());
  for (Rank& r : ranks_) {
    r.queues.resize(network.config().dims.size());
    r.running.assign(network.config().dims.size(), 0);
  }
  threshold_ = network.config().system.active_chunks_per_dim;
}

int64_t RingCollectives::replay_index(int64_t npu) const {
  return index_of_npu_[static_cast<size_t>(npu)];
}

uint32_t RingCollectives::new_stream(Rank& r, int64_t group_id) {
  int64_t number = r.sys_streams++;
  if (group_id >= 0)
    number = r.group_streams.try_emplace(group_id, group_id * kGroupStreams).first->second++;
  uint32_t s = 0;
  if (r.free_streams.empty()) {
    s = static_cast<uint32_t>(r.streams.size());
    r.streams.emplace_back();
  } else {
    s = r.free_streams.back();
    r.free_streams.pop_back();
    r.streams[s] = Stream();
  }
  r.streams[s].live = true;
  r.streams[s].tag = number % kCollectiveTags + kCollectiveTags;
  return s;
}

void RingCollectives::start(uint32_t rank, const CollectivePlan& plan, int64_t group_id) {
  Rank& r = ranks_[rank];
  r.phases = plan.phases;
  r.streams_left = plan.chunks;
  for (int64_t c = 0; c < plan.chunks; ++c) join_queue(rank, new_stream(r, group_id));
}

// The stream enters the queue of its phase, behind the ones there, and
// starts if the queue has room.
void RingCollectives::join_queue(uint32_t rank, uint32_t stream) {
  Rank& r = ranks_[rank];
  r.streams[stream].initialized = false;
  const int q = r.phases[r.streams[stream].phase].queue;
  r.queues[q].push_back(stream);
  fill_queue(rank, q);
}

// Starts waiting streams of queue `q` while fewer than the threshold run
// (the running ones are the first `running` of the queue).
void RingCollectives::fill_queue(uint32_t rank, int q) {
  Rank& r = ranks_[rank];
  auto it = r.queues[q].begin();
  std::advance(it, std::min<int64_t>(r.running[q], static_cast<int64_t>(r.queues[q].size())));
  while (it != r.queues[q].end() && r.running[q] < threshold_) {
    const uint32_t s = *it++;
    ++r.running[q];
    begin_phase(rank, s);
  }
}

void RingCollectives::begin_phase(uint32_t rank, uint32_t stream) {
  Stream& s = ranks_[rank].streams[stream];
  s.initialized = true;
  s.packets_made = 0;
  s.to_send = ranks_[rank].phases[s.phase].messages;
  s.waiting = 0;
  s.free = 0;
  make_packet(rank, stream);
}

// A packet: made when the phase starts and on every message received; it
// comes back after the endpoint delay (and its reduction, if any).
void RingCollectives::make_packet(uint32_t rank, uint32_t stream) {
  Rank& r = ranks_[rank];
  Stream& s = r.streams[stream];
  const RingPhase& p = r.phases[s.phase];
  const int64_t i = s.packets_made++;
  // Rounds of n packets: the first of each carries nothing to reduce.
  const bool first_of_round = i % p.nodes == 0;
  const bool reduce =
      !first_of_round && (p.kind == CollectiveKind::kReduceScatter ||
                          (p.kind == CollectiveKind::kAllReduce && (i / p.nodes) % 2 == 0));
  ++s.waiting;
  const uint64_t delay = p.group_ring
                             ? kGroupRingDelayNs
                             : static_cast<uint64_t>(network_.config().system.endpoint_delay_ns);
  calendar_.at_rank(rank, delay, SimCall{kPacketReady, reduce, rank, stream});
}

void RingCollectives::packet_ready(uint32_t rank, uint32_t stream, bool reduce) {
  Rank& r = ranks_[rank];
  Stream& s = r.streams[stream];
  if (reduce) {
    // Written once and read twice at local-mem-bw, each truncated to ns.
    const double bytes = static_cast<double>(r.phases[s.phase].message_bytes);
    const double bw = network_.config().system.roofline.mem_bw_gbps * 1e9;  // bytes/s
    const uint64_t once = static_cast<uint64_t>(bytes / bw * 1e9);
    calendar_.at_rank(rank, 3 * once, SimCall{kPacketReady, 0, rank, stream});
    return;
  }
  ++s.free;
  send_next(rank, stream);
  if (s.to_send == 0 && s.free == 1) end_phase(rank, stream);
}

void RingCollectives::send_next(uint32_t rank, uint32_t stream) {
  Rank& r = ranks_[rank];
  Stream& s = r.streams[stream];
  if (s.waiting == 0 || s.to_send == 0 || s.free == 0) return;
  const RingPhase& p = r.phases[s.phase];
  const int64_t me = npus_[rank];
  if (replay_index(p.receiver) >= 0) calendar_.send(me, p.receiver, p.message_bytes, s.tag, {});
  // A sender that is not run mirrors this rank: it sends now.
  if (replay_index(p.sender) < 0) calendar_.send(p.sender, me, p.message_bytes, s.tag, {});
  calendar_.recv(p.sender, me, p.message_bytes, s.tag, SimCall{kRingReceive, 0, rank, stream});
  --s.to_send;
  --s.waiting;
  --s.free;
}

void RingCollectives::ring_receive(uint32_t rank, uint32_t stream) { make_packet(rank, stream); }

void RingCollectives::end_phase(uint32_t rank, uint32_t stream) {
  Rank& r = ranks_[rank];
  const int q = r.phases[r.streams[stream].phase].queue;
  auto& queue = r.queues[q];
  if (r.streams[stream].phase + 1 < r.phases.size()) {
    queue.erase(std::find(queue.begin(), queue.end(), stream));
    ++r.streams[stream].phase;
    r.streams[stream].initialized = false;
    const int next = r.phases[r.streams[stream].phase].queue;
    r.queues[next].push_back(stream);
    --r.running[q];
    fill_queue(rank, q);
    fill_queue(rank, next);
    return;
  }
  // The collective's last stream: the rank's workload hears of it first (and
  // may start its next collective), then the stream leaves its queue.
  if (--r.streams_left == 0) done_(rank);
  queue.erase(std::find(queue.begin(), queue.end(), stream));
  r.streams[stream].live = false;
  r.free_streams.push_back(stream);
  --r.running[q];
  fill_queue(rank, q);
}

}  // namespace stg::tools
