// `stg validate --replay`: a dynamic check that a directory of per-rank
// Chakra traces plus its comm-group file runs to completion, i.e. that
// ASTRA-sim will not hang on it (a hang exits 0 with some ranks never
// finishing). The static rules of validate.h cannot see a deadlock that runs
// through several ranks, e.g. a pipeline schedule whose ctrl_deps order a
// stage's compute against the sends and receives of its neighbours in an
// impossible way.
//
// The replay is event-free: order only, no timing, with ASTRA-sim's issue
// rules.
//   * A node is ready when all its data_deps and ctrl_deps are done.
//   * Compute (and every other non-communication) node completes when ready.
//   * SENDs and collectives share one communication slot per rank, as in
//     ASTRA-sim ("one comm at a time"; RECVs do not use it): when the slot
//     is free, the ready one with the lowest id is issued. A SEND completes
//     when issued (eager, asynchronous) and is then available to the peer;
//     a collective holds the slot until it completes. A rank whose slot is
//     held by a collective that waits for another rank, whose own slot or
//     SEND waits for the first, is a hang ASTRA-sim shows as unreleased
//     nodes.
//   * A RECV is issued when ready; it completes when the matching SEND
//     (same src, dst, tag, size) has been issued; sends and receives of one
//     (src, dst, tag, size) are matched first-in first-out.
//   * A collective on group G completes when it is issued on this rank and
//     every member of G has issued its collective at the same position of
//     that member's per-group sequence, with the same (comm_type,
//     comm_size); a mismatch there never completes. The world group ("0" or
//     no name) is all ranks; an unknown group, a group that does not contain
//     the rank and a group of fewer than two members never complete
//     (ASTRA-sim hangs on them too).
// The replay has no timing: compute nodes complete as soon as they are
// ready, so a node that ASTRA-sim would make ready later, after a long
// compute, may be issued earlier here. The replay runs in rounds: in each
// round every rank with news runs its local closure (compute and sends
// complete at once, the slot issues in id order), then issues the receives
// that became ready in that round in file order. A receive matched or a
// collective completed in round t completes on its rank in round t + 1, so
// every cross-rank hand-over costs one round and the result does not depend
// on the order in which ranks are visited (symmetric ranks issue in the same
// order). Cost is linear in nodes plus edges (times log n for the slot).
//
// Unlike the static checks (one file in memory per reader thread), the
// replay holds a compact form of every rank's graph at once (ids, names,
// dependency edges, communication attributes: roughly 50-100 bytes per node
// plus names), which is why `stg validate` runs it only with --replay.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace stg::tools {

struct ReplayResult {
  bool completed = false;  // every node of every rank completed
  int64_t ranks = 0;       // N: ranks 0..N-1 (trace files and comm-group members)
  int64_t nodes_done = 0;
  int64_t nodes_total = 0;
  // First few (10) stuck nodes, sorted by rank then file position:
  // "rank R node ID \"name\": why" (the dependency, peer or group members
  // it waits for, following the chain on the peer down to what blocks it).
  // Every stuck rank gets one entry before any gets a second (up to the
  // limit). A rank's entries are its issued but blocked receives and
  // collectives; a rank with none shows its first unfinished node and the
  // dependency cycle or missing id that holds it.
  std::vector<std::string> stuck;
  int64_t stuck_nodes = 0;  // issued (ready) but incomplete nodes, all ranks
  int64_t stuck_ranks = 0;  // ranks with incomplete nodes
  int64_t rounds = 0;       // replay rounds (cross-rank hand-over depth)
  // Unreadable input or an unusable directory; completed is false then.
  std::string error;
};

// Replays the traces in `dir` (comm-group file: `comm_group_file`, or the one
// found in the directory). `threads` reader threads, 0 = one per core (at
// most one per file). Never throws for bad input.
ReplayResult replay_dir(const std::string& dir, const std::string& comm_group_file = "",
                        int threads = 0);

// "replay: all N nodes of R ranks complete", or "replay: STUCK after K of N
// nodes ..." followed by one line per entry of `stuck`, or "replay: error:
// ...". Lines end in '\n'.
std::string replay_summary(const ReplayResult& result);

}  // namespace stg::tools
