// Tests of the replay check (src/stg/tools/replay.h, `stg validate
// --replay`): small hand-written trace sets that complete or deadlock, and
// the generator's own output under every pipeline schedule.
#include "stg/tools/replay.h"

#include <sys/wait.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "et_def_v004.pb.h"
#include "google/protobuf/io/coded_stream.h"
#include "gtest/gtest.h"
#include "stg/tools/validate.h"
#include "support/delimited.h"
#include "support/reference_outputs.h"
#include "support/trace_nodes.h"
#include "support/trace_set.h"

namespace stg::tools {
namespace {

namespace fs = std::filesystem;
namespace v4 = ChakraProtoMsg;

// ---------------------------------------------------------------------------
// Writing trace sets (the approach of validate_test.cc).

using stg_test::append_delimited;
using stg_test::coll_node;
using stg_test::comp_node;
using stg_test::p2p_node;

v4::Node comp(uint64_t id, std::vector<uint64_t> deps, std::vector<uint64_t> ctrl = {}) {
  return comp_node({id, std::move(deps), std::move(ctrl), "_COMP"}, 1000, 64);
}

v4::Node coll(uint64_t id, std::vector<uint64_t> deps, int type, int64_t size,
              const std::string& pg, std::vector<uint64_t> ctrl = {}) {
  return coll_node({id, std::move(deps), std::move(ctrl), "_COLL"}, type, size, pg);
}

v4::Node send(uint64_t id, std::vector<uint64_t> deps, int dst, int tag, int64_t size,
              std::vector<uint64_t> ctrl = {}) {
  return p2p_node(true, {id, std::move(deps), std::move(ctrl), "_SEND"}, dst, tag, size);
}
v4::Node recv(uint64_t id, std::vector<uint64_t> deps, int src, int tag, int64_t size,
              std::vector<uint64_t> ctrl = {}) {
  return p2p_node(false, {id, std::move(deps), std::move(ctrl), "_RECV"}, src, tag, size);
}

// A fresh directory per test, removed afterwards.
class TraceSet : public stg_test::TraceSet {
 public:
  TraceSet() : stg_test::TraceSet("stg_replay_test") {}
};

constexpr int kAllReduce = 0;
constexpr int kAllGather = 2;
const char kCommGroups[] = R"({"1": [0, 1]})";

std::string dump(const ReplayResult& r) { return replay_summary(r); }

bool any_stuck(const ReplayResult& r, const std::string& needle) {
  for (const std::string& s : r.stuck)
    if (s.find(needle) != std::string::npos) return true;
  return false;
}

ReplayResult run(const TraceSet& t) { return replay_dir(t.dir(), "", 2); }

// ---------------------------------------------------------------------------
// (a) Sets that complete.

TEST(Replay, CollectiveThenExchangeCompletes) {
  TraceSet t;
  t.write_comm_groups(kCommGroups);
  t.write_rank(0, {comp(1, {}), coll(2, {1}, kAllReduce, 100, "1"), send(3, {2}, 1, 7, 50),
                   recv(4, {}, 1, 8, 60), comp(5, {4})});
  t.write_rank(1, {comp(11, {}), coll(12, {11}, kAllReduce, 100, "1"), recv(13, {12}, 0, 7, 50),
                   send(14, {13}, 0, 8, 60)});
  const ReplayResult r = run(t);
  EXPECT_TRUE(r.completed) << dump(r);
  EXPECT_TRUE(r.error.empty()) << dump(r);
  EXPECT_EQ(r.ranks, 2);
  EXPECT_EQ(r.nodes_total, 9);
  EXPECT_EQ(r.nodes_done, 9);
  EXPECT_TRUE(r.stuck.empty());
  EXPECT_EQ(replay_summary(r), "replay: all 9 nodes of 2 ranks complete\n");
}

// A two-stage 1F1B pipeline with two micro-batches, the order on each stage
// enforced with ctrl_deps: stage 0 F0 F1 B0 B1, stage 1 F0 B0 F1 B1.
TEST(Replay, TwoStagePipelineWithCtrlDepsCompletes) {
  TraceSet t;
  t.write_comm_groups(kCommGroups);
  // Stage 0: F0 (1) -> send act0 (2); F1 (3) -> send act1 (4);
  // recv grad0 (5) -> B0 (6); recv grad1 (7) -> B1 (8); all-reduce (9).
  t.write_rank(
      0, {comp(1, {}), send(2, {1}, 1, 100, 32), comp(3, {}, {1}), send(4, {3}, 1, 101, 32),
          recv(5, {}, 1, 200, 32), comp(6, {5}, {3}), recv(7, {}, 1, 201, 32), comp(8, {7}, {6}),
          coll(9, {6, 8}, kAllReduce, 10, "1")});
  // Stage 1: recv act0 (11) -> F0 (12) -> B0 (13) -> send grad0 (14);
  // recv act1 (15) -> F1 (16, after B0) -> B1 (17) -> send grad1 (18).
  t.write_rank(
      1, {recv(11, {}, 0, 100, 32), comp(12, {11}), comp(13, {12}), send(14, {13}, 0, 200, 32),
          recv(15, {}, 0, 101, 32), comp(16, {15}, {13}), comp(17, {16}),
          send(18, {17}, 0, 201, 32), coll(19, {13, 17}, kAllReduce, 10, "1")});
  const ReplayResult r = run(t);
  EXPECT_TRUE(r.completed) << dump(r);
  EXPECT_EQ(r.nodes_done, 18);
}

// Several sends and receives of one (src, dst, tag, size) match first in,
// first out; the receives become ready in different rounds.
TEST(Replay, RepeatedKeyMatchesFifo) {
  TraceSet t;
  t.write_comm_groups(kCommGroups);
  t.write_rank(0, {send(1, {}, 1, 5, 8), recv(2, {}, 1, 6, 8), send(3, {2}, 1, 5, 8),
                   send(4, {3}, 1, 5, 8)});
  t.write_rank(1, {recv(11, {}, 0, 5, 8), send(12, {11}, 0, 6, 8), recv(13, {12}, 0, 5, 8),
                   recv(14, {13}, 0, 5, 8)});
  const ReplayResult r = run(t);
  EXPECT_TRUE(r.completed) << dump(r);
  EXPECT_EQ(r.nodes_done, 8);
}

// Collectives on the world group ("0") and independent collectives on one
// group that are issued in the same order everywhere.
TEST(Replay, WorldGroupAndSameOrderCompletes) {
  TraceSet t;
  t.write_comm_groups(kCommGroups);
  for (int r = 0; r < 2; ++r)
    t.write_rank(
        r, {comp(1, {}), coll(2, {1}, kAllReduce, 100, "0"), coll(3, {1}, kAllGather, 30, "1"),
            coll(4, {1}, kAllReduce, 40, "1"), comp(5, {2, 3, 4})});
  const ReplayResult r = run(t);
  EXPECT_TRUE(r.completed) << dump(r);
  EXPECT_EQ(r.nodes_done, 10);
}

// ---------------------------------------------------------------------------
// (b) - (d) Deadlocks.

TEST(Replay, RecvBeforeSendOnBothRanksIsStuck) {
  TraceSet t;
  t.write_comm_groups(kCommGroups);
  t.write_rank(0, {recv(1, {}, 1, 7, 50), send(2, {1}, 1, 8, 50)});
  t.write_rank(1, {recv(11, {}, 0, 8, 50), send(12, {11}, 0, 7, 50)});
  const ReplayResult r = run(t);
  EXPECT_FALSE(r.completed) << dump(r);
  EXPECT_TRUE(r.error.empty()) << dump(r);
  EXPECT_EQ(r.nodes_done, 0);
  EXPECT_EQ(r.nodes_total, 4);
  EXPECT_EQ(r.stuck_nodes, 2);
  EXPECT_EQ(r.stuck_ranks, 2);
  ASSERT_EQ(r.stuck.size(), 2u) << dump(r);
  EXPECT_EQ(r.stuck[0],
            "rank 0 node 1 \"n1_RECV\": RECV from rank 1 (tag 7, size 50) waits for the matching "
            "SEND on rank 1, node 12 \"n12_SEND\", which waits for node 11 \"n11_RECV\", RECV "
            "from rank 0 (tag 8, size 50), issued but blocked")
      << dump(r);
  EXPECT_TRUE(any_stuck(r, "rank 1 node 11 \"n11_RECV\": RECV from rank 0")) << dump(r);
  EXPECT_EQ(dump(r).rfind("replay: STUCK after 0 of 4 nodes: 2 of 2 ranks stuck", 0), 0u)
      << dump(r);
}

TEST(Replay, CollectivesInOppositeOrderAreStuck) {
  TraceSet t;
  t.write_comm_groups(kCommGroups);
  t.write_rank(
      0, {comp(1, {}), coll(2, {1}, kAllReduce, 100, "1"), coll(3, {2}, kAllGather, 30, "1")});
  t.write_rank(
      1, {comp(1, {}), coll(3, {1}, kAllGather, 30, "1"), coll(2, {3}, kAllReduce, 100, "1")});
  const ReplayResult r = run(t);
  EXPECT_FALSE(r.completed) << dump(r);
  EXPECT_EQ(r.nodes_done, 2);
  EXPECT_EQ(r.stuck_nodes, 2);
  EXPECT_TRUE(any_stuck(r,
                        "the members issue different collectives there: rank 0 ALL_REDUCE "
                        "size 100, rank 1 ALL_GATHER size 30"))
      << dump(r);
}

// The same two collectives, independent on rank 1: ASTRA-sim issues the
// ready one with the lowest id first, whatever the file order. Rank 1
// writes them in the opposite file order but with the ids of rank 0's
// order: it completes; with the ids swapped the sequences differ.
TEST(Replay, IndependentCollectivesIssuedInIdOrder) {
  TraceSet t;
  t.write_comm_groups(kCommGroups);
  t.write_rank(
      0, {comp(1, {}), coll(2, {1}, kAllReduce, 100, "1"), coll(3, {1}, kAllGather, 30, "1")});
  t.write_rank(
      1, {comp(1, {}), coll(3, {1}, kAllGather, 30, "1"), coll(2, {1}, kAllReduce, 100, "1")});
  EXPECT_TRUE(run(t).completed) << dump(run(t));
  t.write_rank(
      1, {comp(1, {}), coll(2, {1}, kAllGather, 30, "1"), coll(3, {1}, kAllReduce, 100, "1")});
  EXPECT_FALSE(run(t).completed);
}

// ASTRA-sim runs one SEND or collective at a time per rank. Rank 0's
// collective (lowest id) takes the slot and waits for rank 1, whose
// collective waits for the receive of rank 0's send, which waits for the
// slot: a hang (ASTRA-sim reports the send as an unreleased node). With the
// send numbered first it is issued first and the set completes.
TEST(Replay, CollectiveHoldingTheSlotBlocksALaterSend) {
  TraceSet t;
  t.write_comm_groups(kCommGroups);
  t.write_rank(0, {coll(1, {}, kAllReduce, 100, "1"), send(2, {}, 1, 7, 50)});
  t.write_rank(1, {recv(11, {}, 0, 7, 50), coll(12, {11}, kAllReduce, 100, "1")});
  const ReplayResult r = run(t);
  EXPECT_FALSE(r.completed) << dump(r);
  EXPECT_TRUE(any_stuck(r,
                        "rank 1 node 11 \"n11_RECV\": RECV from rank 0 (tag 7, size 50) waits "
                        "for the matching SEND on rank 0, node 2 \"n2_SEND\", which is ready "
                        "and waits for the rank's communication slot, held by node 1 "
                        "\"n1_COLL\", ALL_REDUCE size 100 on group 1 (its #0 there)"))
      << dump(r);
  // The static checks see nothing wrong.
  ValidateOptions o;
  o.threads = 2;
  EXPECT_EQ(validate_dir(t.dir(), o).violations(), 0);

  t.write_rank(0, {send(1, {}, 1, 7, 50), coll(2, {}, kAllReduce, 100, "1")});
  EXPECT_TRUE(run(t).completed) << dump(run(t));
}

// Two groups of the same two ranks: each rank's first collective holds its
// slot while it waits for the other rank, whose slot holds the other group's.
TEST(Replay, CrossedCollectivesOnTwoGroupsAreStuck) {
  TraceSet t;
  t.write_comm_groups(R"({"1": [0, 1], "2": [0, 1]})");
  t.write_rank(0, {coll(1, {}, kAllReduce, 100, "1"), coll(2, {}, kAllReduce, 100, "2")});
  t.write_rank(1, {coll(11, {}, kAllReduce, 100, "2"), coll(12, {}, kAllReduce, 100, "1")});
  const ReplayResult r = run(t);
  EXPECT_FALSE(r.completed) << dump(r);
  EXPECT_EQ(r.stuck_nodes, 2) << dump(r);
  t.write_rank(1, {coll(11, {}, kAllReduce, 100, "1"), coll(12, {}, kAllReduce, 100, "2")});
  EXPECT_TRUE(run(t).completed) << dump(run(t));
}

// A collective whose partner never gets there: rank 1's collective waits
// for a receive nobody sends.
TEST(Replay, CollectiveWaitsForBlockedMember) {
  TraceSet t;
  t.write_comm_groups(kCommGroups);
  t.write_rank(0, {comp(1, {}), coll(2, {1}, kAllReduce, 100, "1")});
  t.write_rank(1, {recv(11, {}, 0, 3, 8), coll(12, {11}, kAllReduce, 100, "1")});
  const ReplayResult r = run(t);
  EXPECT_FALSE(r.completed) << dump(r);
  EXPECT_TRUE(any_stuck(r,
                        "rank 0 node 2 \"n2_COLL\": ALL_REDUCE size 100 on group 1 (its #0 "
                        "there) waits for rank 1; rank 1 issued 0 on the group; its next "
                        "there, node 12 \"n12_COLL\", waits for node 11 \"n11_RECV\""))
      << dump(r);
  EXPECT_TRUE(any_stuck(r, "waits for a SEND that rank 0 never issues (0 such SENDs for 1 RECVs)"))
      << dump(r);
}

// Rank 0 orders its receive of tag 2 (ctrl_dep) after its send of tag 1,
// and that send depends on rank 1's later send of tag 3, which needs what
// rank 0 sends only after the receive of tag 2: a cycle through both ranks
// that only the ctrl_dep closes.
std::vector<v4::Node> ctrl_rank0(bool with_ctrl) {
  return {recv(1, {}, 1, 2, 16, with_ctrl ? std::vector<uint64_t>{4} : std::vector<uint64_t>{}),
          send(2, {1}, 1, 4, 16), recv(3, {}, 1, 3, 16), send(4, {3}, 1, 1, 16)};
}
std::vector<v4::Node> ctrl_rank1() {
  return {send(11, {}, 0, 2, 16), recv(12, {}, 0, 4, 16), send(13, {12}, 0, 3, 16),
          recv(14, {}, 0, 1, 16)};
}

TEST(Replay, CtrlDepClosesCrossRankCycle) {
  TraceSet t;
  t.write_comm_groups(kCommGroups);
  t.write_rank(0, ctrl_rank0(false));
  t.write_rank(1, ctrl_rank1());
  const ReplayResult ok = run(t);
  EXPECT_TRUE(ok.completed) << dump(ok);

  t.write_rank(0, ctrl_rank0(true));
  const ReplayResult r = run(t);
  EXPECT_FALSE(r.completed) << dump(r);
  EXPECT_EQ(r.nodes_done, 1);  // rank 1's eager send of tag 2
  EXPECT_TRUE(any_stuck(r,
                        "rank 0 node 3 \"n3_RECV\": RECV from rank 1 (tag 3, size 16) waits "
                        "for the matching SEND on rank 1, node 13 \"n13_SEND\", which waits "
                        "for node 12 \"n12_RECV\""))
      << dump(r);
  // The static checks see nothing wrong.
  ValidateOptions o;
  o.threads = 2;
  EXPECT_EQ(validate_dir(t.dir(), o).violations(), 0);
}

TEST(Replay, MissingDependencyAndBadGroups) {
  TraceSet t;
  t.write_comm_groups(R"({"1": [0, 1], "2": [0]})");
  // A collective that never completes holds its rank's slot for good, so
  // each bad group gets a rank of its own.
  t.write_rank(0, {comp(1, {99}), coll(2, {}, kAllReduce, 8, "2")});
  t.write_rank(1, {comp(11, {}), comp(12, {13}), comp(13, {12})});
  t.write_rank(2, {coll(21, {}, kAllReduce, 8, "5")});
  const ReplayResult r = run(t);
  EXPECT_FALSE(r.completed) << dump(r);
  EXPECT_EQ(r.nodes_done, 1);
  EXPECT_TRUE(any_stuck(r, "the group has 1 member")) << dump(r);
  EXPECT_TRUE(any_stuck(r, "the group is not in the comm-group file")) << dump(r);
  EXPECT_TRUE(any_stuck(r, "rank 1 node 12 \"n12_COMP\" is in or behind a dependency cycle"))
      << dump(r);
  const ReplayResult missing = [&] {
    t.write_rank(0, {comp(1, {99})});
    t.write_rank(1, {comp(11, {})});
    return run(t);
  }();
  EXPECT_TRUE(any_stuck(missing, "rank 0 node 1 \"n1_COMP\" depends on missing id 99"))
      << dump(missing);
}

TEST(Replay, UnreadableInputIsAnError) {
  TraceSet t;
  t.write_comm_groups(kCommGroups);
  t.write_rank(0, {comp(1, {})});
  t.write_file("workload.1.et", "\x05\x01");
  const ReplayResult r = run(t);
  EXPECT_FALSE(r.completed);
  EXPECT_FALSE(r.error.empty());
  EXPECT_EQ(replay_summary(r).rfind("replay: error: ", 0), 0u) << replay_summary(r);
}

// 64 ranks x ~3000 nodes: a ring of point-to-point exchanges and a
// collective per step replays to the end. Its time is printed, not
// asserted: a shared machine under the sanitizers took 24 s where an idle
// one takes well under 10.
TEST(Replay, LargeSetCompletes) {
  TraceSet t;
  constexpr int kRanks = 64;
  constexpr int kSteps = 500;  // 6 nodes per step
  std::string groups = "{\"1\": [";
  for (int r = 0; r < kRanks; ++r) groups += (r ? ", " : "") + std::to_string(r);
  t.write_comm_groups(groups + "]}");
  for (int r = 0; r < kRanks; ++r) {
    std::vector<v4::Node> nodes;
    uint64_t prev = 0;
    for (int s = 0; s < kSteps; ++s) {
      const uint64_t b = 10 * static_cast<uint64_t>(s) + 1;
      const std::vector<uint64_t> after =
          prev ? std::vector<uint64_t>{prev} : std::vector<uint64_t>{};
      nodes.push_back(comp(b, after));
      nodes.push_back(send(b + 1, {b}, (r + 1) % kRanks, s, 64));
      nodes.push_back(recv(b + 2, {}, (r + kRanks - 1) % kRanks, s, 64, after));
      nodes.push_back(comp(b + 3, {b + 2}));
      nodes.push_back(coll(b + 4, {b + 3}, kAllReduce, 128, "1"));
      nodes.push_back(comp(b + 5, {b + 4, b + 1}));
      prev = b + 5;
    }
    t.write_rank(r, nodes);
  }
  const auto start = std::chrono::steady_clock::now();
  const ReplayResult r = replay_dir(t.dir());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(r.completed) << dump(r);
  EXPECT_EQ(r.nodes_total, kRanks * kSteps * 6);
  std::printf("replay of %lld nodes on %d ranks: %.3f s, %lld rounds\n",
              static_cast<long long>(r.nodes_total), kRanks, seconds,
              static_cast<long long>(r.rounds));
}

// ---------------------------------------------------------------------------
// `stg validate --replay` and ValidateOptions::replay.

TEST(ReplayValidate, OptionRunsReplayAndSetsExitStatus) {
  TraceSet t;
  t.write_comm_groups(kCommGroups);
  t.write_rank(0, {recv(1, {}, 1, 7, 50), send(2, {1}, 1, 8, 50)});
  t.write_rank(1, {recv(11, {}, 0, 8, 50), send(12, {11}, 0, 7, 50)});
  ValidateOptions o;
  o.threads = 2;
  const ValidationReport plain = validate_dir(t.dir(), o);
  EXPECT_FALSE(plain.replay);
  EXPECT_EQ(plain.exit_status(), 0);
  o.replay = true;
  const ValidationReport r = validate_dir(t.dir(), o);
  ASSERT_TRUE(r.replay);
  EXPECT_FALSE(r.replay->completed);
  EXPECT_EQ(r.violations(), 0);
  EXPECT_EQ(r.exit_status(), 1);

  const std::string out = t.dir() + "/out.txt";
  const std::string cmd =
      std::string("'") + STG_BINARY + "' validate '" + t.dir() + "' --replay > '" + out + "'";
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  std::ifstream in(out);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("validate: 0 violations in 2 ranks (4 nodes)\n"
                      "replay: STUCK after 0 of 4 nodes"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("replay:   rank 0 node 1 \"n1_RECV\""), std::string::npos) << text;
}

// ---------------------------------------------------------------------------
// (e) The generator's output completes under every pipeline schedule.

struct GenCase {
  const char* name;
  const char* flags;
};

class ReplayGenerated : public ::testing::TestWithParam<GenCase> {};

TEST_P(ReplayGenerated, Completes) {
  TraceSet t;
  const std::string out = t.dir() + "/gen";
  const std::string cmd = std::string("'") + STG_BINARY + "' --output_dir '" + out + "' " +
                          GetParam().flags + " --quiet";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const ReplayResult r = replay_dir(out);
  EXPECT_TRUE(r.error.empty()) << cmd << "\n" << dump(r);
  EXPECT_GT(r.nodes_total, 0);
  EXPECT_TRUE(r.completed) << cmd << "\n" << dump(r);
}

INSTANTIATE_TEST_SUITE_P(
    Schedules, ReplayGenerated,
    ::testing::Values(
        GenCase{"gpt_none",
                "--model_type gpt --dp 2 --tp 2 --pp 4 --num_stacks 8 --dmodel 256"
                " --dff 1024 --head 8 --seq 128 --batch 16 --micro_batch 2"
                " --pipeline_schedule none"},
        GenCase{"gpt_gpipe",
                "--model_type gpt --dp 2 --tp 2 --pp 4 --num_stacks 8 --dmodel 256"
                " --dff 1024 --head 8 --seq 128 --batch 16 --micro_batch 2"
                " --pipeline_schedule gpipe"},
        GenCase{"gpt_1f1b",
                "--model_type gpt --dp 2 --tp 2 --pp 4 --num_stacks 8 --dmodel 256"
                " --dff 1024 --head 8 --seq 128 --batch 16 --micro_batch 2"
                " --pipeline_schedule 1f1b"},
        GenCase{"gpt_interleaved",
                "--model_type gpt --dp 2 --tp 2 --pp 4 --num_stacks 8 --dmodel 256 --dff 1024"
                " --head 8 --seq 128 --batch 16 --micro_batch 2 --pipeline_schedule interleaved"
                " --virtual_stages 2"},
        GenCase{"moe_1f1b",
                "--model_type moe --dp 2 --tp 2 --pp 4 --ep 2 --num_stacks 8"
                " --dmodel 256 --dff 1024 --head 8 --seq 128 --batch 16"
                " --micro_batch 2 --pipeline_schedule 1f1b"},
        GenCase{"gpt_zb_h1_sim",
                "--model_type gpt --dp 2 --tp 2 --pp 4 --num_stacks 8 --dmodel 256"
                " --dff 1024 --head 8 --seq 128 --batch 16 --micro_batch 2"
                " --pipeline_schedule zb-h1 --trace_detail sim --activation_recompute 1"},
        GenCase{"moe_dualpipev_megatron_sim",
                "--framework megatron --model_type moe --dp 2 --pp 2 --ep 2 --num_stacks 4"
                " --dmodel 256 --dff 1024 --head 8 --seq 128 --batch 16 --micro_batch 4"
                " --pipeline_schedule dualpipev --trace_detail sim --zero_stage 3"}),
    [](const ::testing::TestParamInfo<GenCase>& info) { return std::string(info.param.name); });

// A schedule bug planted in real output: on rank 0 (first pipeline stage),
// the forward send of micro-batch 1 is ordered (ctrl_dep) after the last
// compute node of micro-batch 1, a backward one. No rule of the static
// checks breaks, but the pipeline deadlocks across stages.
TEST(ReplayGeneratedMutated, SendAfterOwnBackwardIsStuck) {
  TraceSet t;
  const std::string out = t.dir() + "/gen";
  const std::string cmd = std::string("'") + STG_BINARY + "' --output_dir '" + out +
                          "' --model_type gpt --dp 2 --tp 2 --pp 4 --num_stacks 8 --dmodel 256"
                          " --dff 1024 --head 8 --seq 128 --batch 16 --micro_batch 2"
                          " --pipeline_schedule 1f1b --quiet";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  ASSERT_TRUE(replay_dir(out).completed);

  const std::string path = out + "/workload.0.et";
  std::ifstream in(path, std::ios::binary);
  const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  in.close();
  google::protobuf::io::CodedInputStream cis(reinterpret_cast<const uint8_t*>(data.data()),
                                             static_cast<int>(data.size()));
  v4::GlobalMetadata md;
  std::vector<v4::Node> nodes;
  uint32_t len = 0;
  for (bool first = true; cis.ReadVarint32(&len); first = false) {
    const auto limit = cis.PushLimit(static_cast<int>(len));
    if (first) {
      ASSERT_TRUE(md.ParseFromCodedStream(&cis));
    } else {
      nodes.emplace_back();
      ASSERT_TRUE(nodes.back().ParseFromCodedStream(&cis));
    }
    cis.PopLimit(limit);
  }
  int send_pos = -1;
  uint64_t last_comp = 0;
  bool found_comp = false;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const bool mb1 = nodes[i].name().rfind("mb1.", 0) == 0;
    if (mb1 && send_pos < 0 && nodes[i].type() == v4::COMM_SEND_NODE)
      send_pos = static_cast<int>(i);
    if (mb1 && nodes[i].type() == v4::COMP_NODE) {
      last_comp = nodes[i].id();
      found_comp = true;
    }
  }
  ASSERT_GE(send_pos, 0) << "no SEND of micro-batch 1 (\"mb1.*\") on rank 0";
  ASSERT_TRUE(found_comp) << "no COMP of micro-batch 1 (\"mb1.*\") on rank 0";
  nodes[static_cast<size_t>(send_pos)].add_ctrl_deps(last_comp);
  std::string bytes;
  append_delimited(bytes, md);
  for (const v4::Node& n : nodes) append_delimited(bytes, n);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;

  ValidateOptions o;
  o.replay = true;
  const ValidationReport r = validate_dir(out, o);
  EXPECT_EQ(r.violations(), 0);
  ASSERT_TRUE(r.replay);
  EXPECT_FALSE(r.replay->completed) << dump(*r.replay);
  EXPECT_FALSE(r.replay->stuck.empty());
  EXPECT_EQ(r.exit_status(), 1);
}

// The reference generator's outputs (known good) when this machine has them.
TEST(ReplayGenerated, ReferenceOutputsComplete) {
  const fs::path& root = stg_test::kReferenceRoot;
  std::error_code ec;
  if (!fs::is_directory(root, ec)) GTEST_SKIP() << "no reference outputs at " << root;
  int checked = 0;
  for (const stg_test::ReferenceCase& c : stg_test::reference_cases(root)) {
    const ReplayResult r = replay_dir(c.traces.string(), c.comm_group_file);
    EXPECT_TRUE(r.completed) << c.dir << ": " << dump(r);
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

}  // namespace
}  // namespace stg::tools
