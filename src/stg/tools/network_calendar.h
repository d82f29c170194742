// The event order of ASTRA-sim's analytical backend, for the network replay
// (network_makespan.h): what runs next, when several things happen at the
// same nanosecond, decides which ready node a rank issues first.
//   * One event queue for all ranks: events in time order, those of one
//     time in the order they were scheduled (an event scheduled for the
//     current time runs after the ones already there).
//   * A rank's own timers (Sys::register_event: compute ends, endpoint
//     delays, reductions) are batched per (rank, time): the first one
//     schedules the batch, later ones for that rank and time join it while
//     it has not run, and run with it in the order they were added.
//   * A message (send) arrives message_ns later. Sends and receives of one
//     (tag, source, destination, size) are matched in order. On arrival the
//     sender's callback runs, then the receiver's if it has posted the
//     receive; a receive posted after the arrival runs its callback as a new
//     event at the time it is posted.
#pragma once

#include <cstdint>
#include <deque>
#include <queue>
#include <unordered_map>
#include <utility>
#include <vector>

#include "stg/tools/astra_sim_network.h"

namespace stg::tools {

// A callback of the network replay: `kind` 0 does nothing.
struct SimCall {
  uint8_t kind = 0;
  uint8_t flag = 0;
  uint32_t rank = 0;  // the replay's index of the rank
  uint32_t index = 0;
};

class NetworkCalendar {
 public:
  explicit NetworkCalendar(const AstraSimNetwork& network) : network_(network) {}

  uint64_t now() const { return now_; }
  // `call` for `rank` after `delay` ns, batched with the rank's other timers.
  void at_rank(uint32_t rank, uint64_t delay, SimCall call);
  // A message of `bytes` from NPU `src` to NPU `dst`; `on_sent` runs when it
  // arrives. Then `on_received` of the matching recv.
  void send(int64_t src, int64_t dst, uint64_t bytes, int64_t tag, SimCall on_sent);
  void recv(int64_t src, int64_t dst, uint64_t bytes, int64_t tag, SimCall on_received);
  // The next callback to run, in ASTRA-sim's order; false when none is left.
  bool next(SimCall& call);
  // Messages sent and not received, or receives posted and not matched.
  size_t unmatched() const { return live_entries_; }

 private:
  enum EventKind : uint8_t { kBatch, kCall, kArrival };
  struct Event {
    uint64_t time, seq;
    EventKind kind;
    SimCall call;      // kBatch: call.rank; kCall: the call
    uint64_t payload;  // kArrival: the message's entry
    bool operator>(const Event& o) const { return time != o.time ? time > o.time : seq > o.seq; }
  };
  struct Channel {  // (tag, src, dst, bytes)
    int64_t tag, src, dst;
    uint64_t bytes;
    bool operator==(const Channel& o) const {
      return tag == o.tag && src == o.src && dst == o.dst && bytes == o.bytes;
    }
  };
  struct ChannelHash {
    size_t operator()(const Channel& c) const;
  };
  struct Entry {  // one message: its send, its receive, or both
    SimCall on_sent, on_received;
    bool receive_posted = false, arrived = false;
  };
  // A channel's messages that one side has posted and the other not yet:
  // the k-th send on a channel matches its k-th receive.
  struct Open {
    std::deque<uint32_t> sends, recvs;
  };
  struct BatchHash {
    size_t operator()(const std::pair<uint32_t, uint64_t>& k) const {
      return std::hash<uint64_t>()(k.second * 0x9e3779b97f4a7c15ull ^ k.first);
    }
  };

  void schedule(uint64_t time, EventKind kind, SimCall call, uint64_t payload = 0);
  uint32_t new_entry();
  void release(uint32_t id);
  void arrive(uint32_t id);

  const AstraSimNetwork& network_;
  uint64_t now_ = 0, seq_ = 0;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  std::unordered_map<std::pair<uint32_t, uint64_t>, std::vector<SimCall>, BatchHash> batches_;
  bool in_batch_ = false;
  std::pair<uint32_t, uint64_t> batch_key_{};
  size_t batch_pos_ = 0;
  std::deque<SimCall> arrived_;  // an arrival's callbacks still to run
  std::unordered_map<Channel, Open, ChannelHash> open_;
  std::vector<Entry> entries_;
  std::vector<uint32_t> free_entries_;
  size_t live_entries_ = 0;
};

}  // namespace stg::tools
