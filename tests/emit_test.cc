// Tests of the trace writers: every schema's output is read back with an
// independent parser (libprotobuf / nlohmann::json) and checked field by
// field against docs/facts.md §5.
#include <google/protobuf/io/coded_stream.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "et_def_v001.pb.h"
#include "et_def_v004.pb.h"
#include "gtest/gtest.h"
#include "stg/emit/trace_writer.h"

namespace stg::emit {
namespace {

namespace v4 = ChakraProtoMsg;
namespace v1 = ChakraProtoMsgV001;

// ---------------------------------------------------------------------------
// Fixture: one stage of six nodes covering every node kind.

LoweredNode make_node(uint64_t id, std::string name, NodeKind kind) {
  LoweredNode n;
  n.id = id;
  n.name = std::move(name);
  n.kind = kind;
  return n;
}

StageGraph make_stage() {
  StageGraph g;
  g.stage = 0;

  LoweredNode comp = make_node(10, "in_emb.y@0_COMP", NodeKind::kComp);
  comp.y_tensor_size = 2048;
  comp.inputs = {make_tensor_info("x@0MicroBatch/dp,Seq", "1024.0"),
                 make_tensor_info("w@0Dmodel,Dff", "4096")};
  comp.outputs = {make_tensor_info("in_emb.y@0MicroBatch/dp,Seq", "2048.0")};
  comp.num_ops = 123456789012;  // does not fit in 32 bits
  comp.tensor_size = 2048;
  comp.op_type = "M";
  g.nodes.push_back(comp);

  LoweredNode ag = make_node(11, "in_emb.y@0_X1COMM", NodeKind::kColl);
  ag.data_deps = {10};
  ag.y_tensor_size = 4096;
  ag.inputs = {make_tensor_info("in_emb.y@0MicroBatch/dp,Seq", "2048.0")};
  ag.coll = CollType::kAllGather;
  ag.axis = 1;  // tp
  ag.comm_size = 2048;
  g.nodes.push_back(ag);

  LoweredNode ar = make_node(12, "in_emb.y@0_X2_COMM", NodeKind::kColl);
  ar.data_deps = {11};
  ar.y_tensor_size = 4096;
  ar.inputs = {make_tensor_info("in_emb.y@0MicroBatch/dp,Seq", "4096.0")};
  ar.coll = CollType::kAllReduce;  // enum value 0 in v0.0.4
  ar.axis = 0;                     // dp
  ar.comm_size = 4096;
  g.nodes.push_back(ar);

  LoweredNode send = make_node(30, "in_emb.y@0_Y_SEND", NodeKind::kSend);
  send.data_deps = {12};
  send.inputs = {make_tensor_info("in_emb.y@0MicroBatch/dp,Seq", "4096.0")};
  send.comm_size = 4096;
  send.peer = mesh::Peer::on_stage(1);
  send.tag = 309199;
  g.nodes.push_back(send);

  LoweredNode recv = make_node(31, "shadow_dy@0_Y_RECV", NodeKind::kRecv);
  recv.y_tensor_size = 4096;
  recv.outputs = {make_tensor_info("shadow_dy@0MicroBatch/dp,Seq", "4096.0")};
  recv.comm_size = 4096;
  recv.peer = mesh::Peer::on_stage(1);
  recv.tag = 309200;
  g.nodes.push_back(recv);

  // Name with characters JSON must escape (quote, backslash, non-ASCII).
  LoweredNode dx = make_node(13, "dx \"\xc3\xa9\"\\@0_COMP", NodeKind::kComp);
  dx.data_deps = {31, 10};
  dx.ctrl_deps = {30, 31};  // 31 is also a data dep
  dx.y_tensor_size = 4096;
  dx.inputs = {make_tensor_info("shadow_dy@0MicroBatch/dp,Seq", "4096.0")};
  dx.outputs = {make_tensor_info("dx@0MicroBatch/dp,Seq", "4096.0")};
  dx.num_ops = 10;
  dx.tensor_size = 4096;
  dx.op_type = "E";
  g.nodes.push_back(dx);
  return g;
}

RankBinding rank_a() {
  RankBinding r;
  r.rank = 5;
  r.group_id = {7, 3, 0, 0};  // dp, tp, sp, ep
  r.rank_on_stage = {5, 21};
  return r;
}

RankBinding rank_b() {
  RankBinding r;
  r.rank = 6;
  r.group_id = {8, 4, 0, 0};
  r.rank_on_stage = {6, 22};
  return r;
}

// ---------------------------------------------------------------------------
// Readers.

// Splits a varint-delimited stream and parses every message as Msg.
template <typename Msg>
std::vector<Msg> parse_stream(const std::string& data) {
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(data.data()),
                                            static_cast<int>(data.size()));
  std::vector<Msg> out;
  while (in.CurrentPosition() < static_cast<int>(data.size())) {
    uint32_t len = 0;
    if (!in.ReadVarint32(&len)) throw std::runtime_error("bad length");
    const auto limit = in.PushLimit(static_cast<int>(len));
    Msg m;
    if (!m.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage()) {
      throw std::runtime_error("bad message");
    }
    in.PopLimit(limit);
    out.push_back(std::move(m));
  }
  return out;
}

// v0.0.4 stream: the GlobalMetadata, then the nodes.
struct V4Trace {
  v4::GlobalMetadata meta;
  std::vector<v4::Node> nodes;
};

V4Trace parse_v4(const std::string& data) {
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(data.data()),
                                            static_cast<int>(data.size()));
  uint32_t len = 0;
  if (!in.ReadVarint32(&len)) throw std::runtime_error("bad length");
  V4Trace t;
  const auto limit = in.PushLimit(static_cast<int>(len));
  if (!t.meta.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage()) {
    throw std::runtime_error("bad metadata");
  }
  in.PopLimit(limit);
  t.nodes = parse_stream<v4::Node>(data.substr(in.CurrentPosition()));
  return t;
}

std::vector<std::string> values(const v4::AttributeProto& a) {
  return {a.string_list().values().begin(), a.string_list().values().end()};
}

std::vector<uint64_t> ids(const google::protobuf::RepeatedField<uint64_t>& r) {
  return {r.begin(), r.end()};
}

using VC = v4::AttributeProto::ValueCase;

// Checks attribute `i` of `n`: its name and which oneof member is set.
void expect_attr(const v4::Node& n, int i, const std::string& name, VC value_case) {
  ASSERT_LT(i, n.attr_size()) << n.name();
  EXPECT_EQ(n.attr(i).name(), name) << n.name() << " attr " << i;
  EXPECT_EQ(n.attr(i).value_case(), value_case) << n.name() << " " << name;
  EXPECT_TRUE(n.attr(i).doc_string().empty());
}

std::vector<std::string> attr_names(const v4::Node& n) {
  std::vector<std::string> out;
  for (const auto& a : n.attr()) out.push_back(a.name());
  return out;
}

// ---------------------------------------------------------------------------
// v0.0.4

TEST(EmitV004, MetadataFirst) {
  std::string out;
  append_trace(out, make_stage(), rank_a(), Schema::kV004);
  const V4Trace t = parse_v4(out);
  EXPECT_EQ(t.meta.version(), "0.0.4");
  ASSERT_EQ(t.meta.attr_size(), 1);
  EXPECT_EQ(t.meta.attr(0).name(), "schema");
  EXPECT_EQ(t.meta.attr(0).value_case(), VC::kStringVal);
  EXPECT_EQ(t.meta.attr(0).string_val(), "stg");
  ASSERT_EQ(t.nodes.size(), 6u);
}

TEST(EmitV004, CommonNodeFields) {
  std::string out;
  const StageGraph g = make_stage();
  append_trace(out, g, rank_a(), Schema::kV004);
  const V4Trace t = parse_v4(out);
  ASSERT_EQ(t.nodes.size(), g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const v4::Node& n = t.nodes[i];
    EXPECT_EQ(n.id(), g.nodes[i].id);
    EXPECT_EQ(n.name(), g.nodes[i].name);
    EXPECT_EQ(ids(n.data_deps()), g.nodes[i].data_deps);
    EXPECT_EQ(ids(n.ctrl_deps()), g.nodes[i].ctrl_deps);
    EXPECT_EQ(n.start_time_micros(), 0u);
    EXPECT_EQ(n.duration_micros(), 0u);
    EXPECT_FALSE(n.has_inputs());
    EXPECT_FALSE(n.has_outputs());
    EXPECT_TRUE(n.GetReflection()->GetUnknownFields(n).empty());
  }
  EXPECT_EQ(t.nodes[0].type(), v4::COMP_NODE);
  EXPECT_EQ(t.nodes[1].type(), v4::COMM_COLL_NODE);
  EXPECT_EQ(t.nodes[2].type(), v4::COMM_COLL_NODE);
  EXPECT_EQ(t.nodes[3].type(), v4::COMM_SEND_NODE);
  EXPECT_EQ(t.nodes[4].type(), v4::COMM_RECV_NODE);
  EXPECT_EQ(t.nodes[5].type(), v4::COMP_NODE);
  // Wire numbers of the node types (docs/facts.md §5.2).
  EXPECT_EQ(static_cast<int>(v4::COMP_NODE), 4);
  EXPECT_EQ(static_cast<int>(v4::COMM_SEND_NODE), 5);
  EXPECT_EQ(static_cast<int>(v4::COMM_RECV_NODE), 6);
  EXPECT_EQ(static_cast<int>(v4::COMM_COLL_NODE), 7);
}

TEST(EmitV004, CompAttrs) {
  std::string out;
  append_trace(out, make_stage(), rank_a(), Schema::kV004);
  const V4Trace t = parse_v4(out);
  const v4::Node& n = t.nodes[0];
  EXPECT_EQ(attr_names(n),
            (std::vector<std::string>{"inputs", "outputs", "num_ops", "tensor_size", "op_type"}));
  expect_attr(n, 0, "inputs", VC::kStringList);
  EXPECT_EQ(values(n.attr(0)),
            (std::vector<std::string>{"x@0MicroBatch/dp,Seq", "1024.0", "w@0Dmodel,Dff", "4096"}));
  expect_attr(n, 1, "outputs", VC::kStringList);
  EXPECT_EQ(values(n.attr(1)), (std::vector<std::string>{"in_emb.y@0MicroBatch/dp,Seq", "2048.0"}));
  expect_attr(n, 2, "num_ops", VC::kInt64Val);
  EXPECT_EQ(n.attr(2).int64_val(), 123456789012);
  expect_attr(n, 3, "tensor_size", VC::kUint64Val);
  EXPECT_EQ(n.attr(3).uint64_val(), 2048u);
  expect_attr(n, 4, "op_type", VC::kStringVal);
  EXPECT_EQ(n.attr(4).string_val(), "M");

  const v4::Node& dx = t.nodes[5];
  EXPECT_EQ(ids(dx.ctrl_deps()), (std::vector<uint64_t>{30, 31}));
  expect_attr(dx, 2, "num_ops", VC::kInt64Val);
  EXPECT_EQ(dx.attr(2).int64_val(), 10);
  expect_attr(dx, 4, "op_type", VC::kStringVal);
  EXPECT_EQ(dx.attr(4).string_val(), "E");
}

TEST(EmitV004, CollAttrs) {
  std::string out;
  append_trace(out, make_stage(), rank_a(), Schema::kV004);
  const V4Trace t = parse_v4(out);
  for (int k : {1, 2}) {
    const v4::Node& n = t.nodes[k];
    EXPECT_EQ(attr_names(n), (std::vector<std::string>{"inputs", "outputs", "comm_size",
                                                       "comm_type", "pg_name", "is_cpu_op"}));
    expect_attr(n, 0, "inputs", VC::kStringList);
    EXPECT_EQ(values(n.attr(0)).size(), 2u);
    // Empty list: name only, no value.
    expect_attr(n, 1, "outputs", VC::VALUE_NOT_SET);
    expect_attr(n, 2, "comm_size", VC::kInt64Val);
    // comm_type is written explicitly even when it is ALL_REDUCE (0).
    expect_attr(n, 3, "comm_type", VC::kInt64Val);
    expect_attr(n, 4, "pg_name", VC::kStringVal);
    expect_attr(n, 5, "is_cpu_op", VC::kInt32Val);
    EXPECT_EQ(n.attr(5).int32_val(), 0);
  }
  EXPECT_EQ(t.nodes[1].attr(2).int64_val(), 2048);
  EXPECT_EQ(t.nodes[1].attr(3).int64_val(), 2);     // ALL_GATHER
  EXPECT_EQ(t.nodes[1].attr(4).string_val(), "3");  // tp group of rank_a
  EXPECT_EQ(t.nodes[2].attr(2).int64_val(), 4096);
  EXPECT_EQ(t.nodes[2].attr(3).int64_val(), 0);     // ALL_REDUCE
  EXPECT_EQ(t.nodes[2].attr(4).string_val(), "7");  // dp group of rank_a
}

TEST(EmitV004, CollTypeNumbers) {
  const struct {
    CollType type;
    int64_t wire;
  } cases[] = {{CollType::kAllReduce, 0},
               {CollType::kAllGather, 2},
               {CollType::kAllToAll, 6},
               {CollType::kReduceScatter, 7}};
  for (const auto& c : cases) {
    StageGraph g;
    LoweredNode n = make_node(1, "c", NodeKind::kColl);
    n.coll = c.type;
    n.axis = 3;  // ep
    g.nodes.push_back(n);
    RankBinding r = rank_a();
    r.group_id[3] = 123456;
    std::string out;
    append_trace(out, g, r, Schema::kV004);
    const V4Trace t = parse_v4(out);
    ASSERT_EQ(t.nodes.size(), 1u);
    EXPECT_EQ(t.nodes[0].attr(3).value_case(), VC::kInt64Val);
    EXPECT_EQ(t.nodes[0].attr(3).int64_val(), c.wire);
    EXPECT_EQ(t.nodes[0].attr(4).string_val(), "123456");
    // Both lists empty: names only.
    expect_attr(t.nodes[0], 0, "inputs", VC::VALUE_NOT_SET);
    expect_attr(t.nodes[0], 1, "outputs", VC::VALUE_NOT_SET);
  }
}

TEST(EmitV004, SendRecvAttrs) {
  std::string out;
  append_trace(out, make_stage(), rank_a(), Schema::kV004);
  const V4Trace t = parse_v4(out);

  const v4::Node& s = t.nodes[3];
  EXPECT_EQ(attr_names(s), (std::vector<std::string>{"inputs", "outputs", "comm_size", "comm_tag",
                                                     "comm_dst", "is_cpu_op"}));
  expect_attr(s, 0, "inputs", VC::kStringList);
  expect_attr(s, 1, "outputs", VC::VALUE_NOT_SET);
  expect_attr(s, 2, "comm_size", VC::kInt64Val);
  EXPECT_EQ(s.attr(2).int64_val(), 4096);
  expect_attr(s, 3, "comm_tag", VC::kInt32Val);
  EXPECT_EQ(s.attr(3).int32_val(), 309199);
  expect_attr(s, 4, "comm_dst", VC::kInt32Val);
  EXPECT_EQ(s.attr(4).int32_val(), 21);
  expect_attr(s, 5, "is_cpu_op", VC::kInt32Val);
  EXPECT_EQ(s.attr(5).int32_val(), 0);

  const v4::Node& r = t.nodes[4];
  EXPECT_EQ(attr_names(r), (std::vector<std::string>{"inputs", "outputs", "comm_size", "comm_tag",
                                                     "comm_src", "is_cpu_op"}));
  expect_attr(r, 0, "inputs", VC::VALUE_NOT_SET);
  expect_attr(r, 1, "outputs", VC::kStringList);
  EXPECT_EQ(values(r.attr(1)),
            (std::vector<std::string>{"shadow_dy@0MicroBatch/dp,Seq", "4096.0"}));
  expect_attr(r, 2, "comm_size", VC::kInt64Val);
  expect_attr(r, 3, "comm_tag", VC::kInt32Val);
  EXPECT_EQ(r.attr(3).int32_val(), 309200);
  expect_attr(r, 4, "comm_src", VC::kInt32Val);
  EXPECT_EQ(r.attr(4).int32_val(), 21);
  expect_attr(r, 5, "is_cpu_op", VC::kInt32Val);
}

TEST(EmitV004, FollowsRankBinding) {
  const StageGraph g = make_stage();
  std::string a, b;
  append_trace(a, g, rank_a(), Schema::kV004);
  append_trace(b, g, rank_b(), Schema::kV004);
  const V4Trace ta = parse_v4(a);
  const V4Trace tb = parse_v4(b);
  EXPECT_EQ(tb.nodes[1].attr(4).string_val(), "4");  // tp group of rank_b
  EXPECT_EQ(tb.nodes[2].attr(4).string_val(), "8");  // dp group of rank_b
  EXPECT_EQ(tb.nodes[3].attr(4).int32_val(), 22);    // comm_dst
  EXPECT_EQ(tb.nodes[4].attr(4).int32_val(), 22);    // comm_src
  // Everything else is identical: ids, names, sizes, tags.
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    EXPECT_EQ(ta.nodes[i].id(), tb.nodes[i].id());
    EXPECT_EQ(ta.nodes[i].name(), tb.nodes[i].name());
    EXPECT_EQ(ta.nodes[i].attr(2).DebugString(), tb.nodes[i].attr(2).DebugString());
  }
}

TEST(EmitV004, AppendsAndEmptyStage) {
  std::string out = "prefix";
  append_trace(out, StageGraph{}, rank_a(), Schema::kV004);
  ASSERT_EQ(out.compare(0, 6, "prefix"), 0);
  const V4Trace t = parse_v4(out.substr(6));
  EXPECT_EQ(t.meta.version(), "0.0.4");
  EXPECT_TRUE(t.nodes.empty());
}

TEST(EmitV004, MissingPeerStageThrows) {
  StageGraph g = make_stage();
  RankBinding r = rank_a();
  r.rank_on_stage = {5};  // no stage 1
  std::string out;
  EXPECT_THROW(append_trace(out, g, r, Schema::kV004), std::out_of_range);
  EXPECT_THROW(append_trace(out, g, r, Schema::kV001), std::out_of_range);
  EXPECT_THROW(append_trace(out, g, r, Schema::kJson), std::out_of_range);
}

TEST(EmitV004, LargeMessagesAreFramed) {
  // A node larger than 127 bytes needs a multi-byte length varint.
  StageGraph g;
  LoweredNode n = make_node(1, std::string(300, 'n'), NodeKind::kComp);
  n.inputs.assign(100, make_tensor_info("tensor@0A,B", "1.0"));
  g.nodes.push_back(n);
  g.nodes.push_back(make_node(2, "second", NodeKind::kComp));
  std::string out;
  append_trace(out, g, rank_a(), Schema::kV004);
  const V4Trace t = parse_v4(out);
  ASSERT_EQ(t.nodes.size(), 2u);
  EXPECT_EQ(t.nodes[0].name().size(), 300u);
  EXPECT_EQ(t.nodes[0].attr(0).string_list().values_size(), 200);
  EXPECT_EQ(t.nodes[1].name(), "second");
}

// ---------------------------------------------------------------------------
// v0.0.1

TEST(EmitV001, Fields) {
  std::string out;
  const StageGraph g = make_stage();
  append_trace(out, g, rank_a(), Schema::kV001);
  const std::vector<v1::Node> nodes = parse_stream<v1::Node>(out);
  ASSERT_EQ(nodes.size(), g.nodes.size());  // no metadata message
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    EXPECT_EQ(nodes[i].id(), g.nodes[i].id);
    EXPECT_EQ(nodes[i].name(), g.nodes[i].name);
    EXPECT_TRUE(nodes[i].has_node_type());
    EXPECT_FALSE(nodes[i].has_tensor_loc());
    EXPECT_FALSE(nodes[i].has_simulated_run_time());
    EXPECT_FALSE(nodes[i].has_comm_priority());
    EXPECT_TRUE(nodes[i].GetReflection()->GetUnknownFields(nodes[i]).empty());
  }

  const v1::Node& comp = nodes[0];
  EXPECT_EQ(comp.node_type(), v1::COMP_NODE);
  EXPECT_EQ(static_cast<int>(comp.node_type()), 3);
  EXPECT_EQ(comp.parent_size(), 0);
  EXPECT_EQ(comp.num_ops(), 123456789012u);
  EXPECT_EQ(comp.tensor_size(), 2048u);
  EXPECT_FALSE(comp.has_comm_size());
  EXPECT_FALSE(comp.has_comm_type());
  EXPECT_EQ(comp.involved_dim_size(), 0);

  const v1::Node& ag = nodes[1];
  EXPECT_EQ(static_cast<int>(ag.node_type()), 6);
  EXPECT_EQ(ids(ag.parent()), (std::vector<uint64_t>{10}));
  EXPECT_EQ(ag.comm_size(), 2048u);
  EXPECT_TRUE(ag.has_comm_type());
  EXPECT_EQ(static_cast<int>(ag.comm_type()), 3);  // ALL_GATHER
  EXPECT_EQ(ag.communicator_id(), 3u);             // tp group
  ASSERT_EQ(ag.involved_dim_size(), 3);
  for (bool b : ag.involved_dim()) EXPECT_TRUE(b);
  EXPECT_FALSE(ag.has_num_ops());
  EXPECT_FALSE(ag.has_tensor_size());

  const v1::Node& ar = nodes[2];
  EXPECT_EQ(static_cast<int>(ar.comm_type()), 1);  // ALL_REDUCE
  EXPECT_EQ(ar.communicator_id(), 7u);             // dp group

  const v1::Node& s = nodes[3];
  EXPECT_EQ(static_cast<int>(s.node_type()), 4);
  EXPECT_EQ(s.comm_size(), 4096u);
  EXPECT_EQ(s.comm_tag(), 309199u);
  EXPECT_TRUE(s.has_comm_dst());
  EXPECT_EQ(s.comm_dst(), 21u);
  EXPECT_FALSE(s.has_comm_src());
  EXPECT_FALSE(s.has_communicator_id());
  EXPECT_EQ(s.involved_dim_size(), 0);

  const v1::Node& r = nodes[4];
  EXPECT_EQ(static_cast<int>(r.node_type()), 5);
  EXPECT_EQ(r.comm_tag(), 309200u);
  EXPECT_TRUE(r.has_comm_src());
  EXPECT_EQ(r.comm_src(), 21u);
  EXPECT_FALSE(r.has_comm_dst());

  // Data deps, then ctrl deps not already present.
  EXPECT_EQ(ids(nodes[5].parent()), (std::vector<uint64_t>{31, 10, 30}));
}

TEST(EmitV001, CollTypeNumbers) {
  const struct {
    CollType type;
    int wire;
  } cases[] = {{CollType::kAllReduce, 1},
               {CollType::kAllToAll, 2},
               {CollType::kAllGather, 3},
               {CollType::kReduceScatter, 4}};
  for (const auto& c : cases) {
    StageGraph g;
    LoweredNode n = make_node(1, "c", NodeKind::kColl);
    n.coll = c.type;
    g.nodes.push_back(n);
    std::string out;
    append_trace(out, g, rank_a(), Schema::kV001);
    const auto nodes = parse_stream<v1::Node>(out);
    ASSERT_EQ(nodes.size(), 1u);
    EXPECT_EQ(static_cast<int>(nodes[0].comm_type()), c.wire);
  }
}

TEST(EmitV001, FollowsRankBinding) {
  std::string out;
  append_trace(out, make_stage(), rank_b(), Schema::kV001);
  const auto nodes = parse_stream<v1::Node>(out);
  EXPECT_EQ(nodes[1].communicator_id(), 4u);
  EXPECT_EQ(nodes[2].communicator_id(), 8u);
  EXPECT_EQ(nodes[3].comm_dst(), 22u);
  EXPECT_EQ(nodes[4].comm_src(), 22u);
}

// ---------------------------------------------------------------------------
// json

// Python: json.dump({"nodes": [...]}, f) for the fixture and rank_a.
constexpr char kExpectedJson[] =
    R"JSON({"nodes": [{"id": 10, "name": "in_emb.y@0_COMP", "node_type": "comp_node", "y_tensor_size": 2048, "data_deps": [], "ctrl_deps": [], "num_ops": 123456789012, "tensor_size": 2048}, {"id": 11, "name": "in_emb.y@0_X1COMM", "node_type": "coll_comm_node", "y_tensor_size": 4096, "data_deps": [10], "ctrl_deps": [], "comm_size": 2048, "comm_type": "ALL_GATHER", "comm_group": 3}, {"id": 12, "name": "in_emb.y@0_X2_COMM", "node_type": "coll_comm_node", "y_tensor_size": 4096, "data_deps": [11], "ctrl_deps": [], "comm_size": 4096, "comm_type": "ALL_REDUCE", "comm_group": 7}, {"id": 30, "name": "in_emb.y@0_Y_SEND", "node_type": "comm_send_node", "y_tensor_size": 0, "data_deps": [12], "ctrl_deps": [], "comm_size": 4096, "comm_tag": 309199, "comm_dst": 21}, {"id": 31, "name": "shadow_dy@0_Y_RECV", "node_type": "comm_recv_node", "y_tensor_size": 4096, "data_deps": [], "ctrl_deps": [], "comm_size": 4096, "comm_tag": 309200, "comm_src": 21}, {"id": 13, "name": "dx \"\u00e9\"\\@0_COMP", "node_type": "comp_node", "y_tensor_size": 4096, "data_deps": [31, 10], "ctrl_deps": [30, 31], "num_ops": 10, "tensor_size": 4096}]})JSON";

TEST(EmitJson, MatchesPythonJsonDumpByteForByte) {
  std::string out;
  append_trace(out, make_stage(), rank_a(), Schema::kJson);
  EXPECT_EQ(out, kExpectedJson);
}

TEST(EmitJson, KeysOrderAndValues) {
  std::string out;
  const StageGraph g = make_stage();
  append_trace(out, g, rank_a(), Schema::kJson);
  const auto doc = nlohmann::ordered_json::parse(out);
  ASSERT_EQ(doc.size(), 1u);
  const auto& nodes = doc.at("nodes");
  ASSERT_EQ(nodes.size(), g.nodes.size());

  auto keys = [](const nlohmann::ordered_json& o) {
    std::vector<std::string> k;
    for (const auto& item : o.items()) k.push_back(item.key());
    return k;
  };
  const std::vector<std::string> common = {"id",        "name",     "node_type", "y_tensor_size",
                                           "data_deps", "ctrl_deps"};
  auto with = [&](std::vector<std::string> tail) {
    std::vector<std::string> k = common;
    k.insert(k.end(), tail.begin(), tail.end());
    return k;
  };
  EXPECT_EQ(keys(nodes[0]), with({"num_ops", "tensor_size"}));
  EXPECT_EQ(keys(nodes[1]), with({"comm_size", "comm_type", "comm_group"}));
  EXPECT_EQ(keys(nodes[3]), with({"comm_size", "comm_tag", "comm_dst"}));
  EXPECT_EQ(keys(nodes[4]), with({"comm_size", "comm_tag", "comm_src"}));
  EXPECT_EQ(keys(nodes[5]), with({"num_ops", "tensor_size"}));

  for (size_t i = 0; i < g.nodes.size(); ++i) {
    EXPECT_EQ(nodes[i]["id"].get<uint64_t>(), g.nodes[i].id);
    EXPECT_EQ(nodes[i]["name"].get<std::string>(), g.nodes[i].name);
    EXPECT_EQ(nodes[i]["y_tensor_size"].get<int64_t>(), g.nodes[i].y_tensor_size);
    EXPECT_EQ(nodes[i]["data_deps"].get<std::vector<uint64_t>>(), g.nodes[i].data_deps);
    EXPECT_EQ(nodes[i]["ctrl_deps"].get<std::vector<uint64_t>>(), g.nodes[i].ctrl_deps);
  }
  EXPECT_EQ(nodes[0]["node_type"], "comp_node");
  EXPECT_EQ(nodes[0]["num_ops"].get<int64_t>(), 123456789012);
  EXPECT_EQ(nodes[1]["node_type"], "coll_comm_node");
  EXPECT_EQ(nodes[1]["comm_type"], "ALL_GATHER");
  EXPECT_TRUE(nodes[1]["comm_group"].is_number_integer());
  EXPECT_EQ(nodes[1]["comm_group"].get<int64_t>(), 3);
  EXPECT_EQ(nodes[2]["comm_type"], "ALL_REDUCE");
  EXPECT_EQ(nodes[2]["comm_group"].get<int64_t>(), 7);
  EXPECT_EQ(nodes[3]["node_type"], "comm_send_node");
  EXPECT_EQ(nodes[3]["comm_dst"].get<int64_t>(), 21);
  EXPECT_EQ(nodes[4]["node_type"], "comm_recv_node");
  EXPECT_EQ(nodes[4]["comm_src"].get<int64_t>(), 21);
}

TEST(EmitJson, CollTypeNamesAndRankBinding) {
  StageGraph g;
  const CollType types[] = {CollType::kAllReduce, CollType::kAllGather, CollType::kReduceScatter,
                            CollType::kAllToAll};
  for (uint64_t i = 0; i < 4; ++i) {
    LoweredNode n = make_node(i, "c", NodeKind::kColl);
    n.coll = types[i];
    n.axis = static_cast<int>(i);
    g.nodes.push_back(n);
  }
  RankBinding r = rank_b();
  r.group_id = {100, 101, 102, 103};
  std::string out;
  append_trace(out, g, r, Schema::kJson);
  const auto doc = nlohmann::json::parse(out);
  const char* names[] = {"ALL_REDUCE", "ALL_GATHER", "REDUCE_SCATTER", "ALL_TO_ALL"};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(doc["nodes"][i]["comm_type"], names[i]);
    EXPECT_EQ(doc["nodes"][i]["comm_group"].get<int64_t>(), 100 + i);
  }
}

TEST(EmitJson, EscapesLikePython) {
  // Python: json.dumps("q\"\\\u00e9\U0001F600\x01\x7f\n\t/")
  StageGraph g;
  g.nodes.push_back(make_node(1, "q\"\\\xc3\xa9\xf0\x9f\x98\x80\x01\x7f\n\t/", NodeKind::kComp));
  std::string out;
  append_trace(out, g, rank_a(), Schema::kJson);
  EXPECT_NE(out.find(R"("name": "q\"\\\u00e9\ud83d\ude00\u0001\u007f\n\t/")"), std::string::npos)
      << out;
  EXPECT_EQ(nlohmann::json::parse(out)["nodes"][0]["name"], g.nodes[0].name);
}

TEST(EmitJson, EmptyStage) {
  std::string out;
  append_trace(out, StageGraph{}, rank_a(), Schema::kJson);
  EXPECT_EQ(out, R"({"nodes": []})");
}

}  // namespace
}  // namespace stg::emit
