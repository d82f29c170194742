// The timed replay on ASTRA-sim's network (MakespanOptions::network): the
// step as ASTRA-sim's analytical congestion-unaware backend runs it, rank by
// rank (astra-sim 518bd513ae11; bench/replay_vs_astra_sim.py compares the
// two). Its workload layer, per rank:
//   * a node is ready when its data and control dependencies are done;
//     whenever one of the rank's nodes ends (and at the start), the rank
//     issues its ready nodes in id order, each whose resource is free: one
//     compute node at a time, one collective or SEND at a time (the
//     communication slot, held until the collective completes or the SEND's
//     message arrives); RECVs take no slot;
//   * a compute node takes its roofline time (or, with the system's roofline
//     off, its duration_micros, 1 ns when 0);
//   * a SEND's message takes message_ns (astra_sim_network.h) and completes
//     the SEND on arrival, the matching RECV then or when it is posted;
//   * a collective runs as ring phases of chunks (ring_collectives.h) and
//     completes on a rank when the rank's last chunk ends its last phase.
// Events of one nanosecond run in ASTRA-sim's order (network_calendar.h). A
// rank's finish time is when its last node ends.
#pragma once

#include <cstdint>
#include <vector>

#include "stg/tools/makespan.h"
#include "stg/tools/rank_graph.h"
#include "stg/tools/trace_reader.h"

namespace stg::tools {

// Runs `ranks` (rank chosen[k] is ranks[k]; peers of SENDs and RECVs are
// indices into chosen) on options.network. A ring member that is not among
// `chosen` mirrors the member run (ring_collectives.h).
MakespanResult network_makespan(std::vector<RankGraph>& ranks, std::vector<int64_t> chosen,
                                const CommGroups& groups, const MakespanOptions& options);

}  // namespace stg::tools
