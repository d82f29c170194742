// One rank's trace as a Graphviz graph (`stg dot`): compute, collective,
// send/recv and memory nodes in distinct shapes, labelled with what a reader
// needs to follow the step (name, num_ops or bytes, group or peer and tag),
// data dependencies solid and control dependencies (the schedule's order)
// dashed. Nodes of one micro-batch are drawn as a cluster.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "stg/tools/trace_reader.h"

namespace stg::tools {

struct DotOptions {
  // Draw the first `max_nodes` nodes of the file (0: all); a note node says
  // how many were left out. The default keeps the picture readable (about
  // the first block of the first micro-batch, forward); a whole rank is
  // thousands of nodes that Graphviz lays out for minutes into a picture
  // too large to read.
  int64_t max_nodes = 60;
};

struct DotGraph {
  std::string text;   // the graph in the DOT language
  int64_t nodes = 0;  // nodes in the trace
  int64_t drawn = 0;  // nodes drawn
};

// The micro-batch a node belongs to, or -1. A Chakra trace records it only
// in the node's name: stg and the reference both start the names of
// micro-batch k's nodes with "mb<k>." (README "Output files").
int64_t micro_batch_of(const std::string& node_name);

// The graph of `nodes` (one rank's trace, in file order).
DotGraph dot_graph(const std::vector<TraceNode>& nodes, const DotOptions& options);

}  // namespace stg::tools
