// A v0.0.4 trace read back with libprotobuf: each node's name, kind and the
// attributes the serving tests add up (num_ops, tensor_size, comm_size and
// the peer of a send or receive).
#pragma once

#include <google/protobuf/io/coded_stream.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "et_def_v004.pb.h"
#include "files.h"

namespace stg_test {

struct TraceNode {
  std::string name, op_type;
  bool compute = false, send = false, recv = false;
  int64_t num_ops = 0;
  uint64_t tensor_size = 0;
  int64_t comm_size = 0;
  int64_t peer = -1;      // comm_dst of a send, comm_src of a receive
  bool has_deps = false;  // any data or ctrl dependency
};

inline std::vector<TraceNode> read_trace_nodes(const std::string& path) {
  namespace v4 = ChakraProtoMsg;
  const std::string data = read_file(path);
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(data.data()),
                                            static_cast<int>(data.size()));
  std::vector<TraceNode> nodes;
  bool metadata = true;
  while (in.CurrentPosition() < static_cast<int>(data.size())) {
    uint32_t len = 0;
    if (!in.ReadVarint32(&len)) throw std::runtime_error("truncated " + path);
    const auto limit = in.PushLimit(static_cast<int>(len));
    if (metadata) {
      v4::GlobalMetadata meta;
      if (!meta.ParseFromCodedStream(&in)) throw std::runtime_error("bad metadata in " + path);
      metadata = false;
    } else {
      v4::Node n;
      if (!n.ParseFromCodedStream(&in)) throw std::runtime_error("bad node in " + path);
      TraceNode e;
      e.name = n.name();
      e.compute = n.type() == v4::COMP_NODE;
      e.send = n.type() == v4::COMM_SEND_NODE;
      e.recv = n.type() == v4::COMM_RECV_NODE;
      e.has_deps = n.data_deps_size() > 0 || n.ctrl_deps_size() > 0;
      for (const v4::AttributeProto& a : n.attr()) {
        if (a.name() == "comm_size") e.comm_size = a.int64_val();
        if (a.name() == "comm_dst" || a.name() == "comm_src") e.peer = a.int32_val();
        if (a.name() == "num_ops") e.num_ops = a.int64_val();
        if (a.name() == "tensor_size") e.tensor_size = a.uint64_val();
        if (a.name() == "op_type") e.op_type = a.string_val();
      }
      nodes.push_back(std::move(e));
    }
    in.PopLimit(limit);
  }
  return nodes;
}

}  // namespace stg_test
