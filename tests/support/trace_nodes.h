// Hand-built v0.0.4 ET nodes (compute, collective, send/recv) for trace-set tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "et_def_v004.pb.h"

namespace stg_test {

namespace v4 = ChakraProtoMsg;

inline void add_int(v4::Node& n, const char* name, int64_t v) {
  auto* a = n.add_attr();
  a->set_name(name);
  a->set_int64_val(v);
}

inline void add_deps(v4::Node& n, const std::vector<uint64_t>& deps,
                     const std::vector<uint64_t>& ctrl) {
  for (uint64_t d : deps) n.add_data_deps(d);
  for (uint64_t d : ctrl) n.add_ctrl_deps(d);
}

// Node ids, dependencies and the end of the name ("n<id><suffix>").
struct NodeHead {
  uint64_t id;
  std::vector<uint64_t> deps;
  std::vector<uint64_t> ctrl;
  std::string suffix;
};

inline v4::Node make_node(const NodeHead& h, v4::NodeType type) {
  v4::Node n;
  n.set_id(h.id);
  n.set_name("n" + std::to_string(h.id) + h.suffix);
  n.set_type(type);
  add_deps(n, h.deps, h.ctrl);
  return n;
}

inline v4::Node comp_node(const NodeHead& h, int64_t num_ops, uint64_t tensor_size) {
  v4::Node n = make_node(h, v4::COMP_NODE);
  add_int(n, "num_ops", num_ops);
  auto* a = n.add_attr();
  a->set_name("tensor_size");
  a->set_uint64_val(tensor_size);
  return n;
}

inline v4::Node coll_node(const NodeHead& h, int type, int64_t size, const std::string& pg) {
  v4::Node n = make_node(h, v4::COMM_COLL_NODE);
  add_int(n, "comm_size", size);
  add_int(n, "comm_type", type);
  auto* a = n.add_attr();
  a->set_name("pg_name");
  a->set_string_val(pg);
  return n;
}

// A send to (or a recv from) rank `peer`.
inline v4::Node p2p_node(bool is_send, const NodeHead& h, int peer, int tag, int64_t size) {
  v4::Node n = make_node(h, is_send ? v4::COMM_SEND_NODE : v4::COMM_RECV_NODE);
  add_int(n, "comm_size", size);
  auto* tag_attr = n.add_attr();
  tag_attr->set_name("comm_tag");
  tag_attr->set_int32_val(tag);
  auto* peer_attr = n.add_attr();
  peer_attr->set_name(is_send ? "comm_dst" : "comm_src");
  peer_attr->set_int32_val(peer);
  return n;
}

}  // namespace stg_test
