// The ranks a timed replay runs (makespan.h), read into a compact form:
// per node its kind, time, communication attributes and children. Shared by
// the simple timed run (makespan.cc) and the network replay
// (network_makespan.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "stg/tools/makespan.h"
#include "stg/tools/trace_set.h"

namespace stg::tools {

enum RankNodeKind : uint8_t { kOtherNode, kComputeNode, kSendNode, kRecvNode, kCollNode };

struct RankGraph {
  std::vector<uint8_t> kind;  // RankNodeKind
  // Compute: its time (roofline, or with a network whose roofline is off
  // the trace's duration_micros, 1 ns when 0); send/collective in the simple
  // run: comm_size / link_gbps.
  std::vector<double> time;
  std::vector<int64_t> peer, tag, size;  // peer: send dst / recv src
  std::vector<int8_t> coll;              // collective type, v0.0.4 numbering
  // A collective's group: in the simple run the group attribute as read;
  // with a network the pg_name string only (ASTRA-sim reads no other; ""
  // is all ranks).
  std::vector<std::string> group;
  std::vector<std::vector<uint32_t>> children;
  std::vector<uint64_t> ids;       // with a timeline or a network
  std::vector<std::string> names;  // with a timeline only
  std::vector<uint32_t> remaining;
  bool ok = false;
  std::string error;
};

// Reads the traces of `chosen` (ascending) into `ranks`; with `add_peers`,
// also those of every rank a read rank sends to or receives from, until no
// SEND or RECV has a peer outside them (a ring along a mesh axis: its
// members and their pipeline peers). `chosen` ends up holding the ranks
// read, ascending, and the SENDs' and RECVs' peers indices into it. False
// with `error` for a rank without a readable trace.
bool read_rank_graphs(const TraceSet& set, std::vector<int64_t>& chosen,
                      std::vector<RankGraph>& ranks, bool add_peers, const MakespanOptions& options,
                      int threads, std::string& error);

}  // namespace stg::tools
