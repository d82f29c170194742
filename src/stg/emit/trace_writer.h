// Serialisation of one rank's lowered stage into a Chakra execution trace.
//
// All ranks of a pipeline stage share one StageGraph; the per-rank values
// (collective group ids, send/recv peers) come from the RankBinding. The
// byte layouts are those of docs/facts.md §5; TraceDetail::kSim leaves out
// what no simulator reads (§5.9).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "stg/lower/stage_graph.h"
#include "stg/trace_format.h"

namespace google::protobuf {
class MessageLite;
}  // namespace google::protobuf

namespace stg::emit {

// Appends the complete content of one rank's trace file to `out`.
// Throws std::out_of_range if a node names a group or peer that `rank` does
// not know (mesh::RankBinding::group, peer).
void append_trace(std::string& out, const StageGraph& stage, const RankBinding& rank, Schema schema,
                  TraceDetail detail = TraceDetail::kFull);

// The name a node is written with: its full name, or with kSim its short
// name: a compute node's op code (`M`, `E`, `E2`, `A`, ...), a collective's
// `AR`/`AG`/`RS`/`A2A`, `SEND`, `RECV`.
std::string_view node_name(const LoweredNode& n, TraceDetail detail);

namespace detail {

// One implementation per schema (et_v004.cc, et_v001.cc, et_json.cc).
void append_trace_v004(std::string& out, const StageGraph& stage, const RankBinding& rank,
                       TraceDetail detail);
void append_trace_v001(std::string& out, const StageGraph& stage, const RankBinding& rank,
                       TraceDetail detail);
void append_trace_json(std::string& out, const StageGraph& stage, const RankBinding& rank,
                       TraceDetail detail);

// Appends `value` as a protobuf base-128 varint.
void append_varint(std::string& out, uint64_t value);

// Appends `msg` preceded by its byte length as a varint (the framing of
// Chakra trace files).
void append_delimited(std::string& out, const google::protobuf::MessageLite& msg);

}  // namespace detail
}  // namespace stg::emit
