// The timed replay on ASTRA-sim's network (stg/tools/network_makespan.h):
// hand-written trace sets with a network.yml and a system.json, whose finish
// times are worked out here from ASTRA-sim's analytical congestion-unaware
// formulas (astra-sim 518bd513ae11):
//   * a message on a Switch dimension takes
//       truncate(2 x latency + bytes / (GB/s x 2^30 / 1e9)) ns
//     on the first dimension in which the two NPU ids differ (ids are
//     mixed-radix, the first dimension fastest);
//   * a ring phase of n members sends its messages one after the other; a
//     packet waits the endpoint delay (10 ns on a group's ring) before each
//     send and once more after the last receive, and a reduction of
//     3 x truncate(message / local-mem-bw) ns where data is reduced: an
//     all-reduce of one chunk on a ring of n takes
//       (2n - 1) x 10 + 2(n - 1) x message_ns + (n - 1) x reduction;
//   * a collective is cut into preferred-dataset-splits chunks (at least the
//     NPU count in bytes), active-chunks-per-dimension of them at a time.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "stg/tools/astra_sim_config.h"
#include "stg/tools/makespan.h"
#include "stg/tools/makespan_setup.h"
#include "support/run_stg.h"
#include "support/temp_dir.h"
#include "support/trace_nodes.h"
#include "support/trace_set.h"

namespace stg::tools {
namespace {

namespace v4 = ChakraProtoMsg;
using stg_test::coll_node;
using stg_test::p2p_node;

class TraceSet : public stg_test::TraceSet {
 public:
  TraceSet() : stg_test::TraceSet("stg_network_makespan_test") {}
};

// ASTRA-sim's message time on a Switch dimension (2 hops).
uint64_t switch_ns(double latency_ns, double gbps, uint64_t bytes) {
  const double bytes_per_ns = gbps * 1073741824.0 / 1e9;
  return static_cast<uint64_t>(2 * latency_ns + static_cast<double>(bytes) / bytes_per_ns);
}

// A reduction of `bytes`: written once and read twice at local-mem-bw.
uint64_t reduction_ns(uint64_t bytes, double mem_gbps) {
  return 3 * static_cast<uint64_t>(static_cast<double>(bytes) / (mem_gbps * 1e9) * 1e9);
}

constexpr double kMemGbps = 1000;

// A compute node that ASTRA-sim replays for `us` microseconds (roofline off).
v4::Node busy(uint64_t id, std::vector<uint64_t> deps, uint64_t us) {
  v4::Node n = stg_test::comp_node({id, std::move(deps), {}, "_COMP"}, 1, 1);
  n.set_duration_micros(us);
  return n;
}

std::string network_yml(const std::string& npus, const std::string& bandwidth,
                        const std::string& latency, const std::string& topology) {
  return "topology: [ " + topology + " ]\nnpus_count: [ " + npus + " ]\nbandwidth: [ " + bandwidth +
         " ]\nlatency: [ " + latency + " ]\n";
}

std::string system_json(int splits, int active, int endpoint_delay = 10,
                        const std::string& optimization = "localBWAware") {
  const std::string rings = "[\"ring\", \"ring\"]";
  return "{\"scheduling-policy\": \"LIFO\", \"endpoint-delay\": " + std::to_string(endpoint_delay) +
         ", \"active-chunks-per-dimension\": " + std::to_string(active) +
         ", \"preferred-dataset-splits\": " + std::to_string(splits) +
         ", \"all-reduce-implementation\": " + rings + ", \"all-gather-implementation\": " + rings +
         ", \"reduce-scatter-implementation\": " + rings +
         ", \"all-to-all-implementation\": " + rings + ", \"collective-optimization\": \"" +
         optimization + "\", \"local-mem-bw\": " + std::to_string(kMemGbps) +
         ", \"roofline-enabled\": 0, \"peak-perf\": 989}";
}

MakespanResult run(const TraceSet& t) {
  MakespanOptions o;
  std::string error;
  EXPECT_TRUE(makespan_options_for(t.dir(), {}, {}, false, o, error)) << error;
  EXPECT_NE(o.network, nullptr);
  return makespan_dir(t.dir(), "", o, 1);
}

TEST(NetworkMakespan, SendsGoOnTheFirstDifferingDimensionOneAtATime) {
  TraceSet t;
  t.write_comm_groups(R"({"1": [0, 1, 2, 3]})");
  t.write_file("network.yml", network_yml("2, 2", "100, 25", "500, 2000", "Switch, Switch"));
  t.write_file("system.json", system_json(1, 1));
  const int64_t bytes = 1000000;
  // Rank 0 computes 2 us, then sends to rank 2 (dimension 1) and to rank 3
  // (ids 0 = (0,0) and 3 = (1,1) differ first in dimension 0): both are
  // ready at once, the lower id goes first and holds the slot until its
  // message arrives.
  t.write_rank(0, {busy(1, {}, 2), p2p_node(true, {2, {1}, {}, "_SEND"}, 2, 7, bytes),
                   p2p_node(true, {3, {1}, {}, "_SEND"}, 3, 8, bytes)});
  t.write_rank(1, {busy(1, {}, 1)});
  t.write_rank(2, {p2p_node(false, {1, {}, {}, "_RECV"}, 0, 7, bytes), busy(2, {1}, 3)});
  t.write_rank(3, {p2p_node(false, {1, {}, {}, "_RECV"}, 0, 8, bytes), busy(2, {1}, 1)});
  const MakespanResult r = run(t);
  ASSERT_TRUE(r.completed) << r.error;
  const uint64_t dim0 = switch_ns(500, 100, bytes), dim1 = switch_ns(2000, 25, bytes);
  EXPECT_EQ(r.end_ns,
            (std::vector<double>{double(2000 + dim1 + dim0), 1000, double(2000 + dim1 + 3000),
                                 double(2000 + dim1 + dim0 + 1000)}));
  EXPECT_NE(makespan_summary(r).find("messages on ASTRA-sim's network: network.yml, system.json"),
            std::string::npos);
}

// One chunk of an all-reduce on a ring of n, all members starting together.
uint64_t ring_all_reduce_ns(int n, uint64_t message_ns, uint64_t reduction) {
  return (2 * n - 1) * 10 + 2 * (n - 1) * message_ns + (n - 1) * reduction;
}

TEST(NetworkMakespan, GroupAllReduceIsOneRingOfChunksTwoAtATime) {
  TraceSet t;
  // Groups along dimension 1 of [2, 4]: neighbours differ first there.
  t.write_comm_groups(R"({"1": [0, 2, 4, 6], "2": [1, 3, 5, 7]})");
  t.write_file("network.yml", network_yml("2, 4", "400, 50", "100, 1000", "Switch, Switch"));
  t.write_file("system.json", system_json(4, 2));
  const int64_t bytes = 4000000;
  for (int rank = 0; rank < 8; ++rank)
    t.write_rank(rank,
                 {coll_node({1, {}, {}, "_AR"}, 0, bytes, rank % 2 ? "2" : "1"), busy(2, {1}, 5)});
  const MakespanResult r = run(t);
  ASSERT_TRUE(r.completed) << r.error;
  // 4 chunks of bytes / 4, two running at a time: twice one chunk's time.
  const uint64_t message = bytes / 4 / 4;
  const uint64_t chunk =
      ring_all_reduce_ns(4, switch_ns(1000, 50, message), reduction_ns(message, kMemGbps));
  for (double end : r.end_ns) EXPECT_EQ(end, double(2 * chunk + 5000));
}

TEST(NetworkMakespan, AllGatherReduceScatterAndAllToAllRings) {
  TraceSet t;
  t.write_comm_groups(R"({"1": [0, 2, 4, 6], "2": [1, 3, 5, 7]})");
  t.write_file("network.yml", network_yml("2, 4", "400, 50", "100, 1000", "Switch, Switch"));
  t.write_file("system.json", system_json(1, 1));  // one chunk each
  const uint64_t s = 1000000;
  // v0.0.4 numbering: ALL_GATHER 2, REDUCE_SCATTER 7, ALL_TO_ALL 6.
  for (int rank = 0; rank < 8; ++rank) {
    const std::string g = rank % 2 ? "2" : "1";
    t.write_rank(rank,
                 {coll_node({1, {}, {}, "_AG"}, 2, s, g), coll_node({2, {1}, {}, "_RS"}, 7, s, g),
                  coll_node({3, {2}, {}, "_A2A"}, 6, s, g)});
  }
  const MakespanResult r = run(t);
  ASSERT_TRUE(r.completed) << r.error;
  // On a ring of 4: an all-gather sends 3 messages of its data; a
  // reduce-scatter 3 of data/4, each reduced; an all-to-all 4 x 3 / 2 = 6 of
  // data/4. One endpoint delay per message and one more at the end.
  const uint64_t all_gather = 4 * 10 + 3 * switch_ns(1000, 50, s);
  const uint64_t reduce_scatter =
      4 * 10 + 3 * switch_ns(1000, 50, s / 4) + 3 * reduction_ns(s / 4, kMemGbps);
  const uint64_t all_to_all = 7 * 10 + 6 * switch_ns(1000, 50, s / 4);
  for (double end : r.end_ns) EXPECT_EQ(end, double(all_gather + reduce_scatter + all_to_all));
}

TEST(NetworkMakespan, TinyCollectivesAreCutIntoChunksOfTheNpuCount) {
  TraceSet t;
  t.write_comm_groups(R"({"1": [0, 1], "2": [2, 3], "3": [4, 5], "4": [6, 7]})");
  t.write_file("network.yml", network_yml("2, 4", "400, 50", "100, 1000", "Switch, Switch"));
  t.write_file("system.json", system_json(4, 2));
  for (int rank = 0; rank < 8; ++rank)
    t.write_rank(rank, {coll_node({1, {}, {}, "_AR"}, 0, 16, std::to_string(rank / 2 + 1))});
  const MakespanResult r = run(t);
  ASSERT_TRUE(r.completed) << r.error;
  // 16 bytes / 4 splits < 8 NPUs: 4 chunks of 8 bytes, messages of 4.
  const uint64_t chunk = ring_all_reduce_ns(2, switch_ns(100, 400, 4), reduction_ns(4, kMemGbps));
  for (double end : r.end_ns) EXPECT_EQ(end, double(2 * chunk));
}

TEST(NetworkMakespan, AllReduceOnEveryRankRunsRingsPerDimension) {
  TraceSet t;
  t.write_comm_groups(R"({"1": [0, 1, 2, 3]})");  // every rank: the network's dimensions
  t.write_file("network.yml", network_yml("2, 2", "100, 25", "500, 2000", "Switch, Switch"));
  const int delay = 7;  // endpoint-delay, on the dimensions' rings
  t.write_file("system.json", system_json(1, 1, delay));
  const uint64_t s = 4000000;
  for (int rank = 0; rank < 4; ++rank)
    t.write_rank(rank, {coll_node({1, {}, {}, "_AR"}, 0, s, "1")});
  const MakespanResult r = run(t);
  ASSERT_TRUE(r.completed) << r.error;
  // localBWAware: a reduce-scatter on dimension 0 (one message of s/2 and
  // its reduction), an all-reduce of s/2 on dimension 1 (two messages of
  // s/4, one reduction), an all-gather of s/2 back on dimension 0.
  const uint64_t reduce_scatter =
      2 * delay + switch_ns(500, 100, s / 2) + reduction_ns(s / 2, kMemGbps);
  const uint64_t all_reduce =
      3 * delay + 2 * switch_ns(2000, 25, s / 4) + reduction_ns(s / 4, kMemGbps);
  const uint64_t all_gather = 2 * delay + switch_ns(500, 100, s / 2);
  for (double end : r.end_ns) EXPECT_EQ(end, double(reduce_scatter + all_reduce + all_gather));
}

TEST(NetworkMakespan, ReadsBlockListsAndComments) {
  TraceSet t;
  t.write_file("network.yml",
               "# a two-level machine\ntopology:\n  - Switch\n  - Ring\nnpus_count: [ 2,\n  4 ]\n"
               "bandwidth: [ 400, 50 ]  # GB/s\nlatency: [500, 1000]\nother: [ 1 ]\n");
  t.write_file("system.json", system_json(4, 2));
  AstraSimConfig c;
  std::string error;
  ASSERT_TRUE(read_astra_sim_config(t.dir() + "/network.yml", t.dir() + "/system.json", c, error))
      << error;
  ASSERT_EQ(c.dims.size(), 2u);
  EXPECT_EQ(c.dims[1].topology, NetworkTopology::kRing);
  EXPECT_EQ(c.dims[1].npus, 4);
  EXPECT_EQ(c.dims[1].bandwidth_gbps, 50);
  EXPECT_EQ(c.dims[0].latency_ns, 500);
  EXPECT_EQ(c.npus(), 8);
  EXPECT_EQ(c.system.preferred_dataset_splits, 4);
  EXPECT_FALSE(c.system.roofline_enabled);
}

// `stg validate --replay` on a directory with a network description: a bad
// file or a conflicting flag is a one-line error (exit status 2).
TEST(NetworkMakespan, ValidateRefusesBadDescriptions) {
  TraceSet t;
  t.write_comm_groups(R"({"1": [0, 1, 2, 3]})");
  for (int rank = 0; rank < 4; ++rank) t.write_rank(rank, {busy(1, {}, 1)});
  const std::string net = t.dir() + "/network.yml";
  const stg_test::TempDir logs;
  const auto validate = [&](std::vector<std::string> extra) {
    std::vector<std::string> args{"validate", "--replay", t.dir()};
    args.insert(args.end(), extra.begin(), extra.end());
    return stg_test::run_stg(args, logs.path());
  };
  t.write_file("network.yml", network_yml("2, 2", "100, 50", "500, 500", "Switch, Switch"));
  auto r = validate({});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("no ASTRA-sim system file"), std::string::npos) << r.err;
  t.write_file("system.json", system_json(4, 2));
  r = validate({"--network", net, "--link_gbps", "10"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--network charges messages on ASTRA-sim's network, --link_gbps"),
            std::string::npos)
      << r.err;
  r = validate({"--link_gbps", "10"});  // the simple model, whatever DIR holds
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("messages at --link_gbps"), std::string::npos) << r.out;
  r = validate({});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("makespan: 1000 ns (compute from duration_micros"), std::string::npos)
      << r.out;
  t.write_file("network.yml", network_yml("2, 2", "100", "500, 500", "Switch, Switch"));
  r = validate({});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("network.yml: 'bandwidth' has 1 entries for 2 dimensions"),
            std::string::npos)
      << r.err;
  t.write_file("network.yml", network_yml("2, 2", "100, 50", "500, 500", "Switch, Switch"));
  t.write_file("system.json",
               "{\"preferred-dataset-splits\": 4, \"local-mem-bw\": 100, "
               "\"all-reduce-implementation\": [\"direct\"]}");
  r = validate({});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("system.json: 'all-reduce-implementation' entry \"direct\": the replay "
                       "models \"ring\" only"),
            std::string::npos)
      << r.err;
}

// A generated run with --astra_sim: --print_makespan (one rank per stage,
// the others of a ring mirroring it) equals the run of every rank.
TEST(NetworkMakespan, ByStageEqualsTheRunOfAllRanks) {
  stg_test::TempDir tmp;
  const std::string dir = tmp.sub("sim");
  const auto gen = stg_test::run_stg({"--framework",
                                      "megatron",
                                      "--model_type",
                                      "gpt",
                                      "--dp",
                                      "2",
                                      "--tp",
                                      "2",
                                      "--pp",
                                      "2",
                                      "--num_stacks",
                                      "4",
                                      "--dmodel",
                                      "512",
                                      "--dff",
                                      "2048",
                                      "--head",
                                      "8",
                                      "--seq",
                                      "512",
                                      "--batch",
                                      "16",
                                      "--micro_batch",
                                      "4",
                                      "--pipeline_schedule",
                                      "1f1b",
                                      "--astra_sim",
                                      dir,
                                      "--quiet"},
                                     tmp.path());
  ASSERT_EQ(gen.status, 0) << gen.err;
  MakespanOptions o;
  std::string error;
  ASSERT_TRUE(makespan_options_for(dir, {}, {}, false, o, error)) << error;
  ASSERT_NE(o.network, nullptr);
  const MakespanResult all = makespan_dir(dir, "", o, 2);
  const MakespanResult by_stage = makespan_by_stage(dir, "", 2, o, 2);
  ASSERT_TRUE(all.completed) << all.error;
  ASSERT_TRUE(by_stage.completed) << by_stage.error;
  EXPECT_EQ(by_stage.end_ns, (std::vector<double>{all.end_ns[0], all.end_ns[4]}));
  EXPECT_EQ(by_stage.makespan_ns, all.makespan_ns);
}

}  // namespace
}  // namespace stg::tools
