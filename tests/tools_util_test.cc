// Tests of the pieces the trace tools share: the graph utilities
// (src/stg/util/graph_algo.h), the send/recv key, TraceReader::open called
// again, and TraceSet on a directory written by the stg binary.
#include <dirent.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <vector>

#include "gtest/gtest.h"
#include "stg/tools/p2p_key.h"
#include "stg/tools/trace_reader.h"
#include "stg/tools/trace_set.h"
#include "stg/util/graph_algo.h"
#include "support/run_stg.h"
#include "support/temp_dir.h"

namespace stg::tools {
namespace {

namespace fs = std::filesystem;
using stg_test::RunResult;
using stg_test::TempDir;
using util::CsrAdjacency;
using util::has_cycle;
using util::mix64;
using util::stable_topological_order;
using util::topological_order;

using Adjacency = std::vector<std::vector<uint32_t>>;

// Every edge goes from an earlier to a later position of `order`.
void expect_parents_first(const Adjacency& children, const std::vector<uint32_t>& order) {
  std::vector<int> pos(children.size(), -1);
  for (size_t k = 0; k < order.size(); ++k) pos[order[k]] = static_cast<int>(k);
  for (size_t v = 0; v < children.size(); ++v)
    for (uint32_t c : children[v]) EXPECT_LT(pos[v], pos[c]) << v << " -> " << c;
}

// ---------------------------------------------------------------------------
// Topological order.

TEST(GraphAlgo, DiamondParentsComeFirst) {
  const Adjacency children = {{1, 2}, {3}, {3}, {}};
  const std::vector<uint32_t> order = topological_order(children);
  ASSERT_EQ(order.size(), 4u);
  expect_parents_first(children, order);
  EXPECT_EQ(stable_topological_order(children), (std::vector<uint32_t>{0, 1, 2, 3}));
  EXPECT_FALSE(has_cycle(children));
}

TEST(GraphAlgo, StableOrderTakesSmallestReadyIndex) {
  // 4 -> 0 and 2 -> 1: 2, 3 and 4 are ready at the start; 1 becomes ready
  // after 2 and comes before 3, 0 only after 4.
  const Adjacency children = {{}, {}, {1}, {}, {0}};
  EXPECT_EQ(stable_topological_order(children), (std::vector<uint32_t>{2, 1, 3, 4, 0}));
  const std::vector<uint32_t> any = topological_order(children);
  ASSERT_EQ(any.size(), 5u);
  expect_parents_first(children, any);
}

TEST(GraphAlgo, DuplicateEdgesCountTwice) {
  const Adjacency children = {{1, 1}, {}};
  EXPECT_EQ(stable_topological_order(children), (std::vector<uint32_t>{0, 1}));
  EXPECT_FALSE(has_cycle(children));
}

TEST(GraphAlgo, CycleStopsTheOrderShort) {
  // 0 -> 1 -> 2 -> 1, and 3 on its own: 1 and 2 never become ready.
  const Adjacency children = {{1}, {2}, {1}, {}};
  EXPECT_EQ(stable_topological_order(children), (std::vector<uint32_t>{0, 3}));
  const std::vector<uint32_t> any = topological_order(children);
  EXPECT_EQ(std::set<uint32_t>(any.begin(), any.end()), (std::set<uint32_t>{0, 3}));
  EXPECT_TRUE(has_cycle(children));
  EXPECT_TRUE(has_cycle(Adjacency{{0}}));  // a self dependency
  EXPECT_FALSE(has_cycle(Adjacency{}));
  EXPECT_TRUE(topological_order(Adjacency{}).empty());
}

TEST(GraphAlgo, CompressedAdjacencyGivesTheSameOrder) {
  const Adjacency children = {{}, {}, {1}, {}, {0}};
  const std::vector<uint32_t> offsets = {0, 0, 0, 1, 1, 2};
  const std::vector<uint32_t> targets = {1, 0};
  const CsrAdjacency csr{offsets, targets};
  ASSERT_EQ(csr.size(), 5u);
  EXPECT_EQ(stable_topological_order(csr), stable_topological_order(children));
  EXPECT_FALSE(has_cycle(csr));
}

TEST(GraphAlgo, IndexTypeFollowsTheAdjacencyAndKeepSkipsNodes) {
  const std::vector<std::vector<int>> children = {{2}, {2}, {}};
  const std::vector<int> order = stable_topological_order(children);
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2}));
  // Node 1 left out (removed): 2 never becomes ready either.
  EXPECT_EQ(stable_topological_order(children, [](size_t i) { return i != 1; }),
            (std::vector<int>{0}));
  const std::vector<std::vector<int>> chain = {{1}, {}, {}};
  EXPECT_EQ(topological_order(chain, [](size_t i) { return i != 2; }), (std::vector<int>{0, 1}));
}

// ---------------------------------------------------------------------------
// mix64 and the send/recv key.

TEST(GraphAlgo, Mix64IsDeterministicAndSpreadsBits) {
  static_assert(mix64(0) == 0xe220a8397b1dcdafULL, "SplitMix64's first output for seed 0");
  EXPECT_EQ(mix64(12345), mix64(12345));
  std::unordered_set<uint64_t> seen;
  for (uint64_t v = 0; v < 4096; ++v) seen.insert(mix64(v));
  EXPECT_EQ(seen.size(), 4096u);  // a bijection: no collisions
  // Neighbouring inputs differ in about half of the output bits.
  const int flipped = __builtin_popcountll(mix64(1) ^ mix64(2));
  EXPECT_GT(flipped, 16);
  EXPECT_LT(flipped, 48);
}

TEST(P2PKey, EqualityOrderAndHash) {
  const P2PKey a{0, 1, 7, 50}, b{0, 1, 7, 50}, c{0, 1, 8, 50}, d{1, 0, 7, 50};
  EXPECT_EQ(a, b);
  EXPECT_FALSE(a == c);
  EXPECT_EQ(P2PHash()(a), P2PHash()(b));
  EXPECT_NE(P2PHash()(a), P2PHash()(c));
  EXPECT_NE(P2PHash()(a), P2PHash()(d));  // a send 0 -> 1 is not a send 1 -> 0
  EXPECT_TRUE(a < c);                     // ordered by (src, dst, tag, size)
  EXPECT_TRUE(c < d);
}

// ---------------------------------------------------------------------------
// A directory written by stg: 2 data-parallel x 2 pipeline ranks.

class ToolsUtilGenerated : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    tmp_ = std::make_unique<TempDir>(
        stg_test::TempDirOptions{.prefix = "stg_tools_util_test", .tag = std::string("generated")});
    const RunResult r =
        stg_test::run_stg({"--output_dir", out(),    "--quiet",      "--dp",   "2",
                           "--pp",         "2",      "--num_stacks", "2",      "--dmodel",
                           "256",          "--dff",  "1024",         "--head", "4",
                           "--seq",        "128",    "--batch",      "4",      "--din",
                           "1000",         "--dout", "1000"},
                          tmp_->path());
    status_ = r.status;
    err_ = r.err;
  }
  static void TearDownTestSuite() { tmp_.reset(); }
  void SetUp() override { ASSERT_EQ(status_, 0) << err_; }

  static std::string out() { return tmp_->sub("out"); }

  static std::unique_ptr<TempDir> tmp_;
  static int status_;
  static std::string err_;
};
std::unique_ptr<TempDir> ToolsUtilGenerated::tmp_;
int ToolsUtilGenerated::status_ = -1;
std::string ToolsUtilGenerated::err_;

TEST_F(ToolsUtilGenerated, TraceSetListsRanksAndCommGroups) {
  TraceSet set;
  ASSERT_TRUE(set.open(out())) << set.error();
  EXPECT_EQ(set.dir(), out());
  ASSERT_EQ(set.files().size(), 4u);
  EXPECT_EQ(set.rank_files(), set.files());
  for (int64_t r = 0; r < 4; ++r) {
    EXPECT_EQ(set.files()[static_cast<size_t>(r)].first, r);
    EXPECT_EQ(fs::path(set.files()[static_cast<size_t>(r)].second).filename(),
              "workload." + std::to_string(r) + ".et");
  }
  EXPECT_EQ(set.last_file_rank(), 3);
  EXPECT_EQ(fs::path(set.comm_group_file()).filename(), "workload.json");
  EXPECT_TRUE(set.comm_groups().groups.empty());  // not read yet
  ASSERT_TRUE(set.read_comm_groups()) << set.error();
  EXPECT_FALSE(set.comm_groups().groups.empty());
  for (const auto& [id, members] : set.comm_groups().groups)
    for (int64_t m : members) {
      EXPECT_GE(m, 0) << "group " << id;
      EXPECT_LT(m, 4) << "group " << id;
    }
  EXPECT_EQ(set.ranks(), 4);
}

TEST_F(ToolsUtilGenerated, ForEachRankVisitsEveryRankOnceInParallel) {
  TraceSet set;
  ASSERT_TRUE(set.open(out())) << set.error();
  for (int threads : {0, 1, 2, 16}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    std::mutex mutex;
    std::map<int64_t, int> visits;
    std::map<int64_t, int64_t> nodes;
    set.for_each_rank(threads, [&](int64_t rank, const std::string& path) {
      std::vector<TraceNode> read;
      TraceFormat format;
      std::string error;
      const bool ok = read_trace(path, read, format, error);
      std::lock_guard lock(mutex);
      ++visits[rank];
      nodes[rank] = ok ? static_cast<int64_t>(read.size()) : -1;
    });
    EXPECT_EQ(visits, (std::map<int64_t, int>{{0, 1}, {1, 1}, {2, 1}, {3, 1}}));
    for (const auto& [rank, n] : nodes) EXPECT_GT(n, 0) << "rank " << rank;
  }
}

TEST_F(ToolsUtilGenerated, ForEachRankRethrowsAfterAllWorkersStop) {
  TraceSet set;
  ASSERT_TRUE(set.open(out())) << set.error();
  std::atomic<int> started{0};
  EXPECT_THROW(set.for_each_rank(2,
                                 [&](int64_t rank, const std::string&) {
                                   ++started;
                                   if (rank == 1) throw std::runtime_error("rank 1");
                                 }),
               std::runtime_error);
  EXPECT_GE(started.load(), 2);
}

TEST_F(ToolsUtilGenerated, SecondFileOfARankIsListedButNotIterated) {
  TempDir tmp;
  for (const auto& entry : fs::directory_iterator(out()))
    fs::copy_file(entry.path(), tmp.path() / entry.path().filename());
  fs::copy_file(tmp.path() / "workload.1.et", tmp.path() / "zz.1.et");
  TraceSet set;
  ASSERT_TRUE(set.open(tmp.path().string())) << set.error();
  ASSERT_EQ(set.files().size(), 5u);
  ASSERT_EQ(set.rank_files().size(), 4u);
  EXPECT_EQ(fs::path(set.rank_files()[1].second).filename(), "workload.1.et");
  std::atomic<int> files{0}, ranks{0};
  set.for_each_file(2, [&](int64_t, const std::string&) { ++files; });
  set.for_each_rank(2, [&](int64_t, const std::string&) { ++ranks; });
  EXPECT_EQ(files.load(), 5);
  EXPECT_EQ(ranks.load(), 4);
}

TEST_F(ToolsUtilGenerated, NamedCommGroupFileAndItsErrors) {
  TempDir tmp;
  const std::string groups = tmp.write("groups.json", R"({"1": [0, 1], "2": [2, 7]})");
  TraceSet set;
  ASSERT_TRUE(set.open(out(), groups)) << set.error();
  EXPECT_EQ(set.comm_group_file(), groups);
  ASSERT_TRUE(set.read_comm_groups()) << set.error();
  EXPECT_EQ(set.comm_groups().groups.size(), 2u);
  EXPECT_EQ(set.ranks(), 8);  // rank 7 named by a group, beyond the files

  const std::string bad = tmp.write("bad.json", R"({"1": "not a list"})");
  ASSERT_TRUE(set.open(out(), bad)) << set.error();
  EXPECT_FALSE(set.read_comm_groups());
  EXPECT_EQ(set.error(), bad + ": group 1 is not a list of ranks");
}

TEST(TraceSet, UnusableDirectories) {
  TempDir tmp;
  TraceSet set;
  EXPECT_FALSE(set.open(tmp.sub("absent")));
  EXPECT_EQ(set.error(), tmp.sub("absent") + ": not a directory");
  EXPECT_FALSE(set.open(tmp.path().string()));
  EXPECT_EQ(set.error(), tmp.path().string() + ": no trace files (NAME.<rank>.et / .json)");
  EXPECT_TRUE(set.files().empty());
  tmp.write("a.json", R"({"1": [0, 1]})");
  tmp.write("b.json", R"({"2": [0, 1]})");
  tmp.write("workload.0.et", "x");
  EXPECT_FALSE(set.open(tmp.path().string()));
  EXPECT_EQ(set.error(), tmp.path().string() +
                             ": several comm-group files (a.json, b.json); name one with "
                             "--comm_group");
}

TEST(TraceSet, WorkerThreads) {
  EXPECT_EQ(worker_threads(8, 3), 3);
  EXPECT_EQ(worker_threads(2, 3), 2);
  EXPECT_EQ(worker_threads(2, 0), 1);
  const int all = worker_threads(0, 1000);
  EXPECT_GE(all, 1);
  EXPECT_LE(all, 1000);
  EXPECT_EQ(worker_threads(-1, 1000), all);
}

// ---------------------------------------------------------------------------
// TraceReader::open again.

// Open descriptors of this process.
int open_fds() {
  int n = 0;
  DIR* d = ::opendir("/proc/self/fd");
  if (!d) return -1;
  while (const dirent* e = ::readdir(d))
    if (e->d_name[0] != '.') ++n;
  ::closedir(d);
  return n - 1;  // opendir's own descriptor
}

TEST_F(ToolsUtilGenerated, ReopeningAReaderDoesNotLeakDescriptors) {
  if (open_fds() < 0) GTEST_SKIP() << "no /proc/self/fd";
  const std::string path = out() + "/workload.0.et";
  std::vector<TraceNode> all;
  TraceFormat format;
  std::string error;
  ASSERT_TRUE(read_trace(path, all, format, error)) << error;

  const int before = open_fds();
  {
    TraceReader reader;
    for (int i = 0; i < 200; ++i) {
      ASSERT_TRUE(reader.open(path)) << reader.error();
      // Read part of the file before opening it again.
      TraceNode n;
      for (int k = 0; k < i % 5 && reader.next(n); ++k) {
      }
    }
    EXPECT_EQ(open_fds(), before + 1);  // the one file still open
    // Opening again starts afresh: the whole file is read again.
    ASSERT_TRUE(reader.open(path)) << reader.error();
    int64_t count = 0;
    TraceNode n;
    while (reader.next(n)) ++count;
    EXPECT_EQ(reader.error(), "");
    EXPECT_EQ(count, static_cast<int64_t>(all.size()));
    EXPECT_TRUE(reader.has_metadata());

    // After a failed open the next one works and the count stays put.
    EXPECT_FALSE(reader.open(out() + "/absent.0.et"));
    EXPECT_NE(reader.error(), "");
    ASSERT_TRUE(reader.open(path)) << reader.error();
    EXPECT_EQ(reader.error(), "");
    EXPECT_EQ(open_fds(), before + 1);
  }
  EXPECT_EQ(open_fds(), before);
}

}  // namespace
}  // namespace stg::tools
