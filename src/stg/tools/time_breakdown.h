// Where a rank's step time goes in a timed replay (makespan.h): each moment
// from 0 to the step's makespan counted once, so that the parts add up to
// the makespan:
//   * compute: the rank runs a compute node;
//   * exposed communication, by axis: no compute runs and the rank's
//     communication slot holds a SEND of that axis (its message in flight)
//     or a collective that every member has issued (its ring phases), else
//     it waits for a RECV along a mesh axis (ring attention's "cp p2p");
//   * pipeline bubble: nothing of the above, so the rank waits for a RECV
//     from another stage (the previous stage's activations or the next
//     one's gradients, their transfer included), for a collective's member
//     on another stage (Megatron-LM's embedding group) to issue it, for a
//     dependency, or, after its last node, for the step's last rank.
// Axis names are the step figures' (report/step_figures.h): "tp", "cp",
// "ep", "dp", the "dp x cp" gradient group, "embedding", "dualpipe", "pp"
// for SENDs between stages, "<axis> p2p" for SENDs and RECVs along an axis.
// (TimeBreakdown is in makespan.h, with the result that holds it.)
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "stg/tools/rank_graph.h"
#include "stg/tools/trace_reader.h"

namespace stg::tools {

// The axis name of each communication node of the ranks a replay runs
// (`chosen`: their rank numbers; a node's peer is an index into it), from
// the comm-group file and the ranks per pipeline stage.
class CommAxisNames {
 public:
  CommAxisNames(const CommGroups& groups, const std::vector<int64_t>& chosen,
                int64_t ranks_per_stage);
  // Node i of the rank run as chosen[r]: "" for a node that is not a SEND,
  // RECV or collective.
  std::string of(const RankGraph& g, size_t r, uint32_t i) const;

 private:
  std::map<std::string, std::string> group_axis_;  // group id -> axis name
  // Per spatial axis group: its axis name and members (sorted).
  std::vector<std::pair<std::string, std::vector<int64_t>>> spatial_;
  std::vector<int64_t> chosen_;
  int64_t ranks_per_stage_;
};

// Each node's start and end in a run (a RECV starts when it is posted).
struct NodeTimes {
  const std::vector<double>* start;
  const std::vector<double>* done;
};

// The breakdown of every rank run, from its nodes' times and the step's
// makespan. A collective counts as communication from the moment its last
// member run has issued it (the k-th collective of a group on each rank,
// in issue order); before that its rank waits for another stage (the
// bubble).
std::vector<TimeBreakdown> time_breakdowns(const std::vector<RankGraph>& g,
                                           const std::vector<NodeTimes>& times,
                                           const CommAxisNames& axes, double makespan_ns);

}  // namespace stg::tools
