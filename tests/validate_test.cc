// Tests of `stg validate` / `stg inspect` (src/stg/tools): small trace sets
// written by hand with libprotobuf, each breaking one consumer rule, plus
// the generator's own output and (when present) the reference outputs.
#include "stg/tools/validate.h"

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/inspect_command.h"
#include "cli/validate_command.h"
#include "et_def_v001.pb.h"
#include "et_def_v004.pb.h"
#include "gtest/gtest.h"
#include "stg/tools/inspect.h"
#include "stg/tools/trace_reader.h"
#include "support/delimited.h"
#include "support/reference_outputs.h"
#include "support/trace_nodes.h"
#include "support/trace_set.h"

namespace stg::tools {
namespace {

namespace fs = std::filesystem;
namespace v4 = ChakraProtoMsg;
namespace v1 = ChakraProtoMsgV001;

// ---------------------------------------------------------------------------
// Writing trace sets.

using stg_test::append_delimited;
using stg_test::coll_node;
using stg_test::comp_node;
using stg_test::p2p_node;

v4::Node comp(uint64_t id, std::vector<uint64_t> deps, int64_t num_ops = 1000,
              uint64_t tensor_size = 64) {
  return comp_node({id, std::move(deps), {}, "_COMP"}, num_ops, tensor_size);
}

v4::Node coll(uint64_t id, std::vector<uint64_t> deps, int type, int64_t size,
              const std::string& pg) {
  return coll_node({id, std::move(deps), {}, "_X1COMM"}, type, size, pg);
}

v4::Node send(uint64_t id, std::vector<uint64_t> deps, int dst, int tag, int64_t size) {
  return p2p_node(true, {id, std::move(deps), {}, "_Y_SEND"}, dst, tag, size);
}
v4::Node recv(uint64_t id, std::vector<uint64_t> deps, int src, int tag, int64_t size) {
  return p2p_node(false, {id, std::move(deps), {}, "_Y_RECV"}, src, tag, size);
}

// A fresh directory per test, removed afterwards.
class TraceSet : public stg_test::TraceSet {
 public:
  TraceSet() : stg_test::TraceSet("stg_validate_test") {}
};

constexpr int kAllReduce = 0;
constexpr int kAllGather = 2;

// A clean 2-rank set: one all-reduce on group 1 = {0, 1}, then a send/recv
// exchange in each direction.
std::vector<v4::Node> rank0_nodes() {
  return {comp(1, {}), coll(2, {1}, kAllReduce, 100, "1"), send(3, {2}, 1, 7, 50),
          recv(4, {}, 1, 8, 60), comp(5, {4})};
}
std::vector<v4::Node> rank1_nodes() {
  return {comp(11, {}), coll(12, {11}, kAllReduce, 100, "1"), recv(13, {12}, 0, 7, 50),
          send(14, {13}, 0, 8, 60)};
}
const char kCommGroups[] = R"({"1": [0, 1], "2": [0], "3": [1]})";

void write_clean(const TraceSet& t) {
  t.write_rank(0, rank0_nodes());
  t.write_rank(1, rank1_nodes());
  t.write_comm_groups(kCommGroups);
}

ValidationReport run(const TraceSet& t, ValidateOptions o = {}) {
  o.threads = 2;
  return validate_dir(t.dir(), o);
}

bool any_message(const ValidationReport& r, Rule rule, const std::string& needle) {
  for (const Violation& v : r.shown)
    if (v.rule == rule && v.message.find(needle) != std::string::npos) return true;
  return false;
}

std::string dump(const ValidationReport& r) {
  std::string s = r.verdict() + "\n";
  for (const Violation& v : r.shown) s += std::string(rule_label(v.rule)) + " " + v.message + "\n";
  for (const std::string& e : r.errors) s += "error: " + e + "\n";
  return s;
}

// ---------------------------------------------------------------------------

TEST(Validate, CleanSetPasses) {
  TraceSet t;
  write_clean(t);
  const ValidationReport r = run(t);
  EXPECT_EQ(r.violations(), 0) << dump(r);
  EXPECT_TRUE(r.errors.empty()) << dump(r);
  EXPECT_EQ(r.exit_status(), 0);
  EXPECT_EQ(r.ranks, 2);
  EXPECT_EQ(r.nodes, 9);
  EXPECT_EQ(r.verdict(), "validate: 0 violations in 2 ranks (9 nodes)");
  EXPECT_EQ(fs::path(r.comm_group_file).filename(), "workload.json");
}

TEST(Validate, RemovedRecv) {
  TraceSet t;
  write_clean(t);
  auto nodes = rank1_nodes();
  nodes.erase(nodes.begin() + 2);  // recv 13; send 14 then depends on a missing id
  nodes.back().clear_data_deps();
  t.write_rank(1, nodes);
  const ValidationReport r = run(t);
  EXPECT_EQ(r.count(Rule::kP2P), 1) << dump(r);
  EXPECT_EQ(r.violations(), 1) << dump(r);
  EXPECT_TRUE(any_message(r, Rule::kP2P, "(src 0, dst 1, tag 7, size 50)")) << dump(r);
  EXPECT_EQ(r.exit_status(), 1);
}

TEST(Validate, CollectiveOnOneMemberGroup) {
  TraceSet t;
  write_clean(t);
  auto nodes = rank0_nodes();
  nodes.push_back(coll(6, {5}, kAllGather, 10, "2"));
  t.write_rank(0, nodes);
  const ValidationReport r = run(t);
  EXPECT_EQ(r.count(Rule::kGroups), 1) << dump(r);
  EXPECT_EQ(r.violations(), 1) << dump(r);
  EXPECT_TRUE(any_message(r, Rule::kGroups, "1 member")) << dump(r);
}

TEST(Validate, SendToRankWithoutFile) {
  TraceSet t;
  write_clean(t);
  auto nodes = rank0_nodes();
  nodes.push_back(send(6, {5}, 5, 9, 10));  // rank 5 does not exist
  t.write_rank(0, nodes);
  const ValidationReport r = run(t);
  EXPECT_EQ(r.count(Rule::kP2P), 1) << dump(r);
  EXPECT_EQ(r.violations(), 1) << dump(r);
}

TEST(Validate, ChangedSizeOnOneMember) {
  TraceSet t;
  write_clean(t);
  auto nodes = rank1_nodes();
  nodes[1] = coll(12, {11}, kAllReduce, 200, "1");
  t.write_rank(1, nodes);
  const ValidationReport r = run(t);
  EXPECT_EQ(r.count(Rule::kOrder), 1) << dump(r);
  EXPECT_EQ(r.violations(), 1) << dump(r);
  EXPECT_TRUE(any_message(r, Rule::kOrder, "first difference at collective #0")) << dump(r);
  EXPECT_TRUE(any_message(r, Rule::kOrder, "ALL_REDUCE size 200")) << dump(r);
}

TEST(Validate, IndependentCollectivesInDifferentFileOrder) {
  // Two collectives without a path between them, written in opposite file
  // orders on the two members: the stable topological orders differ.
  TraceSet t;
  t.write_comm_groups(kCommGroups);
  t.write_rank(
      0, {comp(1, {}), coll(2, {1}, kAllReduce, 100, "1"), coll(3, {1}, kAllGather, 30, "1")});
  t.write_rank(
      1, {comp(1, {}), coll(3, {1}, kAllGather, 30, "1"), coll(2, {1}, kAllReduce, 100, "1")});
  const ValidationReport r = run(t);
  EXPECT_EQ(r.count(Rule::kOrder), 1) << dump(r);
  // Deps, not file positions, decide when there is a path.
  t.write_rank(
      1, {coll(3, {2}, kAllGather, 30, "1"), comp(1, {}), coll(2, {1}, kAllReduce, 100, "1")});
  const ValidationReport r2 = run(t);
  EXPECT_EQ(r2.violations(), 0) << dump(r2);
}

TEST(Validate, MissingRankFile) {
  TraceSet t;
  write_clean(t);
  fs::remove(t.path(1));
  const ValidationReport r = run(t);
  EXPECT_EQ(r.count(Rule::kRankFiles), 1) << dump(r);
  EXPECT_TRUE(any_message(r, Rule::kRankFiles, "rank 1: no trace file")) << dump(r);
  EXPECT_EQ(r.violations(), 1) << dump(r);  // rank 0's send/recv with rank 1 are not counted
  EXPECT_EQ(r.exit_status(), 1);
}

TEST(Validate, RankGapWithoutCommGroups) {
  TraceSet t;
  t.write_rank(0, {comp(1, {})});
  t.write_rank(2, {comp(1, {})});
  const ValidationReport r = run(t);
  EXPECT_EQ(r.ranks, 3);
  EXPECT_EQ(r.count(Rule::kRankFiles), 1) << dump(r);
  EXPECT_TRUE(any_message(r, Rule::kRankFiles, "rank 1: no trace file")) << dump(r);
}

TEST(Validate, DependencyCycle) {
  TraceSet t;
  write_clean(t);
  auto nodes = rank0_nodes();
  nodes[0] = comp(1, {5});  // 1 -> 2 -> 3, and 5 <- 4; make 1 depend on 5 and 4 on 3
  nodes[3] = recv(4, {3}, 1, 8, 60);
  t.write_rank(0, nodes);
  const ValidationReport r = run(t);
  EXPECT_EQ(r.count(Rule::kDeps), 1) << dump(r);
  EXPECT_EQ(r.violations(), 1) << dump(r);
  EXPECT_TRUE(any_message(r, Rule::kDeps, "dependency cycle")) << dump(r);
  EXPECT_TRUE(any_message(r, Rule::kDeps, "5 nodes never become ready")) << dump(r);
}

TEST(Validate, SelfDependency) {
  TraceSet t;
  write_clean(t);
  auto nodes = rank0_nodes();
  nodes[4] = comp(5, {4, 5});
  t.write_rank(0, nodes);
  const ValidationReport r = run(t);
  EXPECT_EQ(r.count(Rule::kDeps), 1) << dump(r);
  EXPECT_TRUE(any_message(r, Rule::kDeps, "node 5 \"n5_COMP\" depends on node 5")) << dump(r);
}

TEST(Validate, DependencyOnMissingId) {
  TraceSet t;
  write_clean(t);
  auto nodes = rank1_nodes();
  nodes[0] = comp(11, {99});
  t.write_rank(1, nodes);
  const ValidationReport r = run(t);
  EXPECT_EQ(r.count(Rule::kDeps), 1) << dump(r);
  EXPECT_EQ(r.violations(), 1) << dump(r);
  EXPECT_TRUE(any_message(r, Rule::kDeps, "rank 1: node 11 \"n11_COMP\" depends on missing id 99"))
      << dump(r);
}

TEST(Validate, DuplicateId) {
  TraceSet t;
  write_clean(t);
  auto nodes = rank0_nodes();
  nodes.push_back(comp(5, {}));
  t.write_rank(0, nodes);
  const ValidationReport r = run(t);
  EXPECT_EQ(r.count(Rule::kDeps), 1) << dump(r);
  EXPECT_TRUE(any_message(r, Rule::kDeps, "duplicate node id 5")) << dump(r);
}

TEST(Validate, TruncatedFileIsReadError) {
  TraceSet t;
  write_clean(t);
  const uintmax_t size = fs::file_size(t.path(1));
  fs::resize_file(t.path(1), size - 3);
  const ValidationReport r = run(t);
  ASSERT_FALSE(r.errors.empty()) << dump(r);
  EXPECT_NE(r.errors[0].find("truncated"), std::string::npos) << dump(r);
  EXPECT_EQ(r.violations(), 0) << dump(r);
  EXPECT_EQ(r.exit_status(), 2);
  EXPECT_EQ(::cli::validate_main({t.dir()}), 2);
}

TEST(Validate, BadVarintIsReadError) {
  TraceSet t;
  write_clean(t);
  std::string bad;
  {
    std::ifstream in(t.path(1), std::ios::binary);
    bad.assign(std::istreambuf_iterator<char>(in), {});
  }
  bad += std::string(11, '\xff');  // a length varint that never ends
  t.write_file("workload.1.et", bad);
  const ValidationReport r = run(t);
  ASSERT_EQ(r.errors.size(), 1u) << dump(r);
  EXPECT_EQ(r.exit_status(), 2);
}

TEST(Validate, GroupNotInCommGroupFile) {
  TraceSet t;
  write_clean(t);
  auto n0 = rank0_nodes();
  auto n1 = rank1_nodes();
  n0[1] = coll(2, {1}, kAllReduce, 100, "42");
  n1[1] = coll(12, {11}, kAllReduce, 100, "42");
  t.write_rank(0, n0);
  t.write_rank(1, n1);
  const ValidationReport r = run(t);
  EXPECT_EQ(r.count(Rule::kGroups), 2) << dump(r);
  EXPECT_EQ(r.violations(), 2) << dump(r);
  EXPECT_TRUE(any_message(r, Rule::kGroups, "group 42, which is not in the comm-group file"))
      << dump(r);
}

TEST(Validate, RankNotMemberOfItsGroup) {
  TraceSet t;
  t.write_comm_groups(R"({"1": [0, 1], "2": [1, 2]})");
  t.write_rank(0, {comp(1, {}), coll(2, {1}, kAllReduce, 100, "2")});
  t.write_rank(1, {comp(1, {}), coll(2, {1}, kAllReduce, 100, "2")});
  t.write_rank(2, {comp(1, {}), coll(2, {1}, kAllReduce, 100, "2")});
  const ValidationReport r = run(t);
  EXPECT_EQ(r.count(Rule::kGroups), 1) << dump(r);
  EXPECT_EQ(r.violations(), 1) << dump(r);
  EXPECT_TRUE(any_message(r, Rule::kGroups, "rank 0: collective node 2")) << dump(r);
  EXPECT_TRUE(any_message(r, Rule::kGroups, "of which rank 0 is not a member")) << dump(r);
}

TEST(Validate, UnsimulatedCollectiveAndMissingAttributes) {
  TraceSet t;
  write_clean(t);
  auto n0 = rank0_nodes();
  n0.push_back(coll(6, {5}, /*BROADCAST*/ 5, 10, "1"));
  n0.push_back(comp(7, {6}, 10, 0));  // tensor_size 0
  v4::Node bare;
  bare.set_id(8);
  bare.set_type(v4::COMM_COLL_NODE);  // no attributes at all
  n0.push_back(bare);
  auto n1 = rank1_nodes();
  n1.push_back(coll(16, {14}, 5, 10, "1"));
  t.write_rank(0, n0);
  t.write_rank(1, n1);
  const ValidationReport r = run(t);
  // BROADCAST x2, node 8: no comm_type, no comm_size, no group.
  EXPECT_EQ(r.count(Rule::kGroups), 5) << dump(r);
  EXPECT_EQ(r.count(Rule::kCompute), 1) << dump(r);
  EXPECT_TRUE(any_message(r, Rule::kGroups, "BROADCAST")) << dump(r);
  EXPECT_TRUE(any_message(r, Rule::kCompute, "tensor_size 0")) << dump(r);
}

TEST(Validate, RequirePgName) {
  TraceSet t;
  write_clean(t);
  auto n0 = rank0_nodes();
  auto n1 = rank1_nodes();
  for (auto* n : {&n0[1], &n1[1]}) {
    auto* a = n->mutable_attr(2);
    ASSERT_EQ(a->name(), "pg_name");
    a->set_name("comm_group");
    a->set_int32_val(1);
  }
  t.write_rank(0, n0);
  t.write_rank(1, n1);
  EXPECT_EQ(run(t).violations(), 0);  // the legacy attribute is accepted by default
  ValidateOptions strict;
  strict.require_pg_name = true;
  const ValidationReport r = run(t, strict);
  EXPECT_EQ(r.count(Rule::kGroups), 2) << dump(r);
}

TEST(Validate, ShowsAtMostFivePerRuleButCountsAll) {
  TraceSet t;
  write_clean(t);
  auto n0 = rank0_nodes();
  for (uint64_t i = 0; i < 8; ++i) n0.push_back(comp(100 + i, {1000 + i}));
  t.write_rank(0, n0);
  const ValidationReport r = run(t);
  EXPECT_EQ(r.count(Rule::kDeps), 8) << dump(r);
  EXPECT_EQ(r.shown.size(), 5u) << dump(r);
  EXPECT_TRUE(any_message(r, Rule::kDeps, "missing id 1000")) << dump(r);
  EXPECT_FALSE(any_message(r, Rule::kDeps, "missing id 1007")) << dump(r);
}

TEST(Validate, JsonAndV001Layouts) {
  {
    TraceSet t;
    t.write_comm_groups(kCommGroups);
    for (int rank = 0; rank < 2; ++rank) {
      nlohmann::json nodes = nlohmann::json::array();
      nodes.push_back({{"id", 1},
                       {"name", "a_COMP"},
                       {"node_type", "comp_node"},
                       {"data_deps", nlohmann::json::array()},
                       {"ctrl_deps", nlohmann::json::array()},
                       {"num_ops", 10},
                       {"tensor_size", 4}});
      nodes.push_back({{"id", 2},
                       {"name", "a_X1COMM"},
                       {"node_type", "coll_comm_node"},
                       {"data_deps", {1}},
                       {"ctrl_deps", nlohmann::json::array()},
                       {"comm_size", 8},
                       {"comm_type", "ALL_GATHER"},
                       {"comm_group", 1}});
      t.write_file("workload." + std::to_string(rank) + ".json",
                   nlohmann::json{{"nodes", nodes}}.dump());
    }
    const ValidationReport r = run(t);
    EXPECT_EQ(r.violations(), 0) << dump(r);
    EXPECT_EQ(r.exit_status(), 0) << dump(r);
    EXPECT_EQ(r.nodes, 4);
    TraceReader reader;
    ASSERT_TRUE(reader.open(t.dir() + "/workload.0.json"));
    EXPECT_EQ(reader.format(), TraceFormat::kJson);
  }
  {
    TraceSet t;
    t.write_comm_groups(kCommGroups);
    for (int rank = 0; rank < 2; ++rank) {
      std::string out;
      v1::Node c;
      c.set_id(1);
      c.set_name("a_COMP");
      c.set_node_type(v1::COMP_NODE);
      c.set_num_ops(10);
      c.set_tensor_size(4);
      append_delimited(out, c);
      v1::Node x;
      x.set_id(2);
      x.set_name("a_X1COMM");
      x.set_node_type(v1::COMM_COLL_NODE);
      x.add_parent(1);
      x.set_comm_type(v1::REDUCE_SCATTER);
      x.set_comm_size(8);
      x.set_communicator_id(1);
      append_delimited(out, x);
      t.write_file("workload." + std::to_string(rank) + ".et", out);
    }
    const ValidationReport r = run(t);
    EXPECT_EQ(r.violations(), 0) << dump(r);
    TraceReader reader;
    ASSERT_TRUE(reader.open(t.path(0)));
    EXPECT_EQ(reader.format(), TraceFormat::kV001);
    TraceNode n;
    ASSERT_TRUE(reader.next(n));
    ASSERT_TRUE(reader.next(n));
    EXPECT_EQ(n.kind, NodeKind::kColl);
    EXPECT_EQ(n.comm_type, kCollReduceScatter);  // renumbered to v0.0.4
    EXPECT_EQ(n.group, "1");
    EXPECT_EQ(n.group_attr, GroupAttr::kCommunicatorId);
    EXPECT_FALSE(reader.next(n));
    EXPECT_TRUE(reader.error().empty()) << reader.error();
  }
}

TEST(Validate, ReaderDecodesV004Node) {
  TraceSet t;
  write_clean(t);
  TraceReader reader;
  ASSERT_TRUE(reader.open(t.path(0))) << reader.error();
  EXPECT_EQ(reader.format(), TraceFormat::kV004);
  ASSERT_TRUE(reader.has_metadata());
  ASSERT_EQ(reader.metadata_attrs().size(), 1u);
  EXPECT_EQ(reader.metadata_attrs()[0].second, "symbolic_tensor_network");
  TraceNode n;
  ASSERT_TRUE(reader.next(n));
  EXPECT_EQ(n.kind, NodeKind::kComp);
  EXPECT_EQ(n.num_ops, 1000);
  ASSERT_TRUE(reader.next(n));
  EXPECT_EQ(n.kind, NodeKind::kColl);
  EXPECT_EQ(n.comm_type, kCollAllReduce);
  EXPECT_EQ(n.group, "1");
  EXPECT_TRUE(n.group_is_string);
  EXPECT_EQ(n.data_deps, std::vector<uint64_t>{1});
  ASSERT_TRUE(reader.next(n));
  EXPECT_EQ(n.kind, NodeKind::kSend);
  EXPECT_EQ(n.comm_dst, 1);
  EXPECT_EQ(n.comm_tag, 7);
  EXPECT_EQ(n.missing, 0u);
}

TEST(Validate, FileNames) {
  EXPECT_EQ(rank_from_file_name("workload.12.et"), 12);
  EXPECT_EQ(rank_from_file_name("a.3.b.et"), 3);
  EXPECT_EQ(rank_from_file_name("workload.et.7"), 7);
  EXPECT_EQ(rank_from_file_name("workload.et"), -1);
  EXPECT_EQ(rank_from_file_name("w12.et"), -1);
  EXPECT_TRUE(is_trace_file_name("workload.0.json"));
  EXPECT_FALSE(is_trace_file_name("workload.json"));
  EXPECT_FALSE(is_trace_file_name("run.1.txt"));
}

TEST(Validate, MainExitCodes) {
  TraceSet t;
  write_clean(t);
  EXPECT_EQ(::cli::validate_main({t.dir(), "--threads", "1"}), 0);
  EXPECT_EQ(::cli::validate_main({}), 2);
  EXPECT_EQ(::cli::validate_main({t.dir(), "--bogus"}), 2);
  EXPECT_EQ(::cli::validate_main({t.dir(), t.dir()}), 2);  // one directory only
  EXPECT_EQ(::cli::validate_main({t.dir(), "--threads", "many"}), 2);
  EXPECT_EQ(::cli::validate_main({t.dir(), "--show", "-1"}), 2);
  EXPECT_EQ(::cli::validate_main({t.dir(), "--comm_group", ""}), 2);
  EXPECT_EQ(::cli::validate_main({t.dir(), "--replay=1"}), 0);
  EXPECT_EQ(::cli::validate_main({"--help"}), 0);
  EXPECT_EQ(::cli::validate_main({t.dir() + "/nonexistent"}), 2);
  t.write_file("other.json", R"({"1": [0, 1]})");  // a second comm-group file
  EXPECT_EQ(::cli::validate_main({t.dir()}), 2);
  EXPECT_EQ(::cli::validate_main({t.dir(), "--comm_group", t.dir() + "/workload.json"}), 0);
  t.write_rank(1, {comp(11, {99})});
  EXPECT_EQ(::cli::validate_main({t.dir(), "--comm_group=" + t.dir() + "/other.json"}), 1);
}

TEST(Inspect, SummarisesASet) {
  TraceSet t;
  write_clean(t);
  const nlohmann::ordered_json j = to_json(inspect_dir(t.dir()));
  EXPECT_TRUE(j["errors"].empty()) << j.dump(1);
  EXPECT_EQ(j["ranks"], 2);
  EXPECT_EQ(j["nodes"]["total"], 9);
  EXPECT_EQ(j["nodes_by_type"]["COMP_NODE"]["total"], 3);
  EXPECT_EQ(j["compute"]["num_ops"], 3000);
  EXPECT_EQ(j["collectives"]["by_type"]["ALL_REDUCE"]["size"], 200);
  EXPECT_EQ(j["collectives"]["by_group_size"]["2"]["count"], 2);
  EXPECT_EQ(j["send"]["size"], 110);
  EXPECT_EQ(j["structure_groups"].size(), 2u);  // the ranks differ in structure
  const InspectReport r = inspect_dir(t.dir());
  EXPECT_EQ(r.ranks, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(r.nodes.total, 9);
  EXPECT_EQ(r.nodes_by_kind[static_cast<int>(NodeKind::kComp)].total, 3);
  EXPECT_EQ(r.collectives.by_group_size.at(2).count, 2);
  EXPECT_EQ(r.send.size, 110);
  EXPECT_EQ(::cli::inspect_main({t.dir(), "--json"}), 0);
  EXPECT_EQ(::cli::inspect_main({t.dir(), "--per_rank"}), 0);
  EXPECT_EQ(::cli::inspect_main({}), 2);
  EXPECT_EQ(::cli::inspect_main({t.dir(), "--threads", "x"}), 2);
  EXPECT_EQ(::cli::inspect_main({t.dir(), "--bogus"}), 2);
  EXPECT_EQ(::cli::inspect_main({"--help"}), 0);
}

TEST(Inspect, StructureIgnoresIdsGroupsPeersAndTags) {
  TraceSet t;
  t.write_comm_groups(R"({"1": [0, 1], "2": [2, 3]})");
  for (int r = 0; r < 4; ++r) {
    const uint64_t base = 100 * static_cast<uint64_t>(r);
    std::vector<v4::Node> nodes = {
        comp(base + 1, {}), coll(base + 2, {base + 1}, kAllReduce, 100, r < 2 ? "1" : "2"),
        send(base + 3, {base + 2}, r ^ 1, 10 + r, 5), recv(base + 4, {}, r ^ 1, 10 + (r ^ 1), 5)};
    for (size_t i = 0; i < nodes.size(); ++i) nodes[i].set_name("node" + std::to_string(i));
    t.write_rank(r, nodes);
  }
  EXPECT_EQ(validate_dir(t.dir()).violations(), 0);
  const nlohmann::ordered_json j = to_json(inspect_dir(t.dir()));
  ASSERT_EQ(j["structure_groups"].size(), 1u) << j.dump(1);
  EXPECT_EQ(j["structure_groups"][0]["ranks"], "0-3");
}

// ---------------------------------------------------------------------------
// W1: ASTRA-sim's roofline time (perf = min(bw x ops/bytes, peak), time =
// ops / perf, truncated to whole ns).

TEST(Roofline, ComputeAndMemoryBoundTimes) {
  const hardware::RooflineFigures h100;  // 989 TFLOPS, 3350 GB/s
  // Compute bound: 1e12 ops over 1e9 bytes at 989 TFLOPS = 1011.122... us
  // (the figure ASTRA-sim printed for this node, docs/facts.md).
  EXPECT_EQ(hardware::roofline_ns(1000000000000ull, 1000000000ull, h100), 1011122u);
  // Memory bound: 1 op over 67 MB at 3350 GB/s = 20,000 ns.
  EXPECT_EQ(hardware::roofline_ns(1, 67000000, h100), 20000u);
  // Below 1 ns on both roofs: 989,000 ops and 3,349 bytes -> 0.99970 ns.
  EXPECT_EQ(hardware::roofline_ns(988000, 3349, h100), 0u);
  EXPECT_EQ(hardware::roofline_ns(1500000, 100, h100), 1u);  // 1.517 ns
  EXPECT_EQ(hardware::roofline_ns(0, 100, h100), 0u);
  // Other hardware figures: 1 TFLOPS, 1 GB/s.
  EXPECT_EQ(hardware::roofline_ns(8192, 2048, hardware::RooflineFigures{1, 1}), 2048u);
}

TEST(Validate, DependencyFreeZeroTimeComputeIsAWarning) {
  TraceSet t;
  // Rank 0's root runs 1000 ops over 64 bytes: 19 ps under the H100 roofs.
  write_clean(t);
  const ValidationReport r = run(t);
  EXPECT_EQ(r.exit_status(), 0) << dump(r);
  EXPECT_EQ(r.zero_time_roots, 2);  // node 1 on rank 0, node 11 on rank 1
  ASSERT_EQ(r.warnings.size(), 2u);
  EXPECT_NE(r.warnings[0].find("rank 0: compute node 1"), std::string::npos) << r.warnings[0];
  EXPECT_NE(r.warnings[1].find("rank 1: compute node 11"), std::string::npos) << r.warnings[1];
  // Node 5 depends on a receive: it is not a root and is not counted.
  // Slower hardware (1 TFLOPS, 1 GB/s) runs the roots in 64 ns.
  ValidateOptions slow;
  slow.roofline = {1, 1};
  const ValidationReport s = run(t, slow);
  EXPECT_EQ(s.zero_time_roots, 0);
  EXPECT_TRUE(s.warnings.empty());
  // A root of 2,000,000 ops and 8,000 bytes takes 2 ns: no warning.
  TraceSet big;
  big.write_rank(0, {comp(1, {}, 2000000, 8000), coll(2, {1}, kAllReduce, 100, "1")});
  big.write_rank(1, {comp(11, {}, 2000000, 8000), coll(12, {11}, kAllReduce, 100, "1")});
  big.write_comm_groups(R"({"1": [0, 1]})");
  EXPECT_EQ(run(big).zero_time_roots, 0) << dump(run(big));
}

TEST(Validate, MainPrintsTheZeroTimeWarningAndKeepsExitZero) {
  TraceSet t;
  write_clean(t);
  EXPECT_EQ(::cli::validate_main({t.dir()}), 0);
  EXPECT_EQ(::cli::validate_main({t.dir(), "--peak_tflops", "1", "--mem_bw_gbps", "1"}), 0);
  EXPECT_EQ(::cli::validate_main({t.dir(), "--peak_tflops", "0"}), 2);
  EXPECT_EQ(::cli::validate_main({t.dir(), "--mem_bw_gbps", "fast"}), 2);
}

// ---------------------------------------------------------------------------
// Real outputs.

TEST(ValidateGenerated, GeneratorOutputIsClean) {
  TraceSet t;
  const std::string out = t.dir() + "/gen";
  const std::string cmd = std::string("'") + STG_BINARY + "' --output_dir '" + out +
                          "' --dp 2 --tp 2 --pp 2 --num_stacks 2 --dmodel 1024 --dff 4096"
                          " --head 16 --seq 512 --batch 8 --din 32000 --dout 32000 --quiet";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const ValidationReport r = validate_dir(out);
  EXPECT_EQ(r.ranks, 8);
  EXPECT_GT(r.nodes, 0);
  EXPECT_EQ(r.violations(), 0) << dump(r);
  EXPECT_EQ(r.exit_status(), 0) << dump(r);
  EXPECT_EQ(r.zero_time_roots, 0) << dump(r);
  const nlohmann::ordered_json j = to_json(inspect_dir(out));
  EXPECT_TRUE(j["errors"].empty()) << j.dump(1);
  EXPECT_EQ(j["ranks"], 8);
}

// The reference generator's outputs (known good) when this machine has them:
// <case>/traces plus the comm-group file beside traces/.
TEST(ValidateGenerated, ReferenceOutputsAreClean) {
  const fs::path& root = stg_test::kReferenceRoot;
  std::error_code ec;
  if (!fs::is_directory(root, ec)) GTEST_SKIP() << "no reference outputs at " << root;
  int checked = 0;
  for (const stg_test::ReferenceCase& c : stg_test::reference_cases(root)) {
    ValidateOptions o;
    o.comm_group_file = c.comm_group_file;
    const ValidationReport r = validate_dir(c.traces.string(), o);
    EXPECT_EQ(r.exit_status(), 0) << c.dir << ": " << dump(r);
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

// The issue's tiny llama: the input embedding (8,192 ops, 2,048 elements)
// has no dependencies and runs in 0 ns on every rank.
TEST(ValidateGenerated, TinyLlamaWarnsAboutItsEmbedding) {
  TraceSet t;
  const std::string out = t.dir() + "/tiny";
  const std::string cmd = std::string("'") + STG_BINARY + "' --output_dir '" + out +
                          "' --model_type llama --sp 4 --dvocal 4 --dmodel 256 --dff 256 --head 1"
                          " --kvhead 1 --seq 32 --batch 1 --num_stacks 1 --quiet";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const ValidationReport r = validate_dir(out);
  EXPECT_EQ(r.exit_status(), 0) << dump(r);
  EXPECT_EQ(r.zero_time_roots, 4);
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_NE(r.warnings[0].find("in_emb"), std::string::npos) << r.warnings[0];
}

}  // namespace
}  // namespace stg::tools
