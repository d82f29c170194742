// The v0.0.4 node writer that the stage writers build on (et_v004.cc).
#pragma once

#include <string>

#include "stg/lower/stage_graph.h"
#include "stg/trace_format.h"

namespace ChakraProtoMsg {
class Node;
}  // namespace ChakraProtoMsg

namespace stg::emit::detail {

// Fills `out` and returns the index of the rank-dependent attribute in its
// attr list (-1 for a compute node). The index depends on the detail level
// (full: after inputs and outputs), hence it is asked for rather than
// assumed.
int fill_node_v004(ChakraProtoMsg::Node& out, const LoweredNode& n, const RankBinding& rank,
                   TraceDetail detail, bool feeder_attributes);
// The framed GlobalMetadata every v0.0.4 file starts with.
void append_metadata_v004(std::string& out);

}  // namespace stg::emit::detail
