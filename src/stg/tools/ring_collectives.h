// ASTRA-sim's system layer for ring collectives, per rank, as the network
// replay runs it (network_makespan.h; astra-sim 518bd513ae11, the facts, not
// its code):
//   * a collective's chunks (plan_collective) become streams that run the
//     plan's ring phases in order; each dimension has one queue, in which at
//     most active-chunks-per-dimension streams run at once (the others wait
//     in arrival order); a stream whose phase ends moves to the end of the
//     next phase's queue;
//   * a ring phase on a rank is a sequence of packets: one when the phase
//     starts, one per message received. A packet waits an endpoint delay
//     (10 ns on a group's ring, endpoint-delay on a dimension's ring), plus,
//     when it carries data to reduce (every packet of a reduce-scatter but
//     the first of each round of n, those of an all-reduce's first round),
//     3 x truncate(message / local-mem-bw) ns; then the rank sends the next
//     message to its receiver and posts the receive from its sender. After
//     the last receive, one packet more ends the phase;
//   * messages between ring neighbours go through the network calendar
//     (network_calendar.h), tagged by the stream's number: the rank's count
//     of streams for a collective on all ranks, the group's (id x 10^6 +
//     count) for a group.
// A rank has one collective at a time (its communication slot), so all the
// streams of a rank belong to one collective.
//
// In a run over some of the ranks (makespan_by_stage), a ring member that is
// not run mirrors the rank: its message arrives as if it had sent it when
// the rank posts the receive, and messages to it are dropped.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <vector>

#include "stg/tools/astra_sim_network.h"
#include "stg/tools/network_calendar.h"

namespace stg::tools {

// The network replay's callbacks (SimCall::kind).
enum SimCallKind : uint8_t { kNoCall = 0, kNodeDone, kPacketReady, kRingReceive };

class RingCollectives {
 public:
  // `npus[i]` is the NPU id of the replay's rank i; `done(i)` runs when rank
  // i's collective completes.
  RingCollectives(const AstraSimNetwork& network, NetworkCalendar& calendar,
                  std::vector<int64_t> npus, std::function<void(uint32_t)> done);

  // Starts rank i's collective: its plan, and its group id (-1: none, all
  // ranks by the default group).
  void start(uint32_t rank, const CollectivePlan& plan, int64_t group_id);
  // The calendar's kPacketReady (flag: the packet still has a reduction to
  // wait for) and kRingReceive callbacks.
  void packet_ready(uint32_t rank, uint32_t stream, bool reduce);
  void ring_receive(uint32_t rank, uint32_t stream);

 private:
  struct Stream {
    size_t phase = 0;
    bool initialized = false, live = false;
    int64_t tag = 0;
    // The ring phase's state: packets made, messages left to send, packets
    // waiting to send, packets back from their endpoint delay.
    int64_t packets_made = 0, to_send = 0, waiting = 0, free = 0;
  };
  struct Rank {
    std::vector<RingPhase> phases;  // the collective's, for every stream
    int64_t streams_left = 0;
    std::vector<Stream> streams;
    std::vector<uint32_t> free_streams;
    std::vector<std::list<uint32_t>> queues;
    std::vector<int64_t> running;
    int64_t sys_streams = 0;
    std::map<int64_t, int64_t> group_streams;
  };

  uint32_t new_stream(Rank& r, int64_t group_id);
  void join_queue(uint32_t rank, uint32_t stream);
  void fill_queue(uint32_t rank, int queue);
  void begin_phase(uint32_t rank, uint32_t stream);
  void make_packet(uint32_t rank, uint32_t stream);
  void send_next(uint32_t rank, uint32_t stream);
  void end_phase(uint32_t rank, uint32_t stream);
  int64_t replay_index(int64_t npu) const;

  const AstraSimNetwork& network_;
  NetworkCalendar& calendar_;
  std::vector<int64_t> npus_;
  std::vector<int32_t> index_of_npu_;  // -1: not run
  std::function<void(uint32_t)> done_;
  std::vector<Rank> ranks_;
  int64_t threshold_ = 1;
};

}  // namespace stg::tools
