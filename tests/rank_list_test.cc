// --ranks as a list of ranges ("0-1,4,6-7"): the files of exactly those
// ranks, byte-identical to a run of every rank, and --print_makespan from
// the first rank of each pipeline stage without writing the others.
#include <filesystem>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "support/files.h"
#include "support/run_stg.h"
#include "support/temp_dir.h"

namespace stg {
namespace {

namespace fs = std::filesystem;
using stg_test::read_file;
using stg_test::run_stg;
using stg_test::TempDir;

// 8 ranks: dp 2, pp 4 (2 ranks per stage; stage s starts at rank 2s).
std::vector<std::string> run_flags(const std::string& dir) {
  return {"--model_type",
          "gpt",
          "--dp",
          "2",
          "--pp",
          "4",
          "--num_stacks",
          "4",
          "--batch",
          "8",
          "--micro_batch",
          "2",
          "--seq",
          "64",
          "--dmodel",
          "128",
          "--dff",
          "512",
          "--head",
          "4",
          "--dvocal",
          "256",
          "--pipeline_schedule",
          "1f1b",
          "--units",
          "physical",
          "--output_dir",
          dir};
}

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::string rank_file(const std::string& dir, int rank) {
  return dir + "/workload." + std::to_string(rank) + ".et";
}

TEST(RankList, WritesExactlyTheListedRanksAsTheWholeRunDoes) {
  TempDir tmp;
  const std::string all = tmp.sub("all"), part = tmp.sub("part");
  ASSERT_EQ(run_stg(run_flags(all), tmp.path()).status, 0);
  const stg_test::RunResult r =
      run_stg(with(run_flags(part), {"--ranks", "0-1,4,6-7"}), tmp.path());
  ASSERT_EQ(r.status, 0) << r.err;
  for (int rank = 0; rank < 8; ++rank) {
    const bool listed = rank <= 1 || rank == 4 || rank >= 6;
    EXPECT_EQ(fs::exists(rank_file(part, rank)), listed) << rank;
    if (listed)
      EXPECT_EQ(read_file(rank_file(part, rank)), read_file(rank_file(all, rank))) << rank;
  }
  EXPECT_EQ(read_file(part + "/workload.json"), read_file(all + "/workload.json"));
  EXPECT_NE(r.out.find("stg: ranks 0-1,4,6-7 of 8, 6 files"), std::string::npos) << r.out;
}

TEST(RankList, BadListsAreRefusedBeforeWriting) {
  TempDir tmp;
  for (const char* bad : {"4,2", "0-3,3", "0-1,,4", "0-8", "1-0", "0,x", "0-1,"}) {
    SCOPED_TRACE(bad);
    const std::string dir = tmp.sub(std::string("bad") + std::to_string(bad[0]));
    const stg_test::RunResult r = run_stg(with(run_flags(dir), {"--ranks", bad}), tmp.path());
    EXPECT_EQ(r.status, 2) << r.out;
    EXPECT_EQ(r.err.rfind("stg: error: --ranks '" + std::string(bad) + "' is not a list", 0), 0u)
        << r.err;
    EXPECT_FALSE(fs::exists(dir));
  }
}

TEST(RankList, MakespanFromTheFirstRankOfEachStage) {
  TempDir tmp;
  const std::vector<std::string> timed = {"--print_makespan", "--link_gbps", "50", "--quiet"};
  const stg_test::RunResult whole = run_stg(with(run_flags(tmp.sub("all")), timed), tmp.path());
  ASSERT_EQ(whole.status, 0) << whole.err;
  const stg_test::RunResult firsts =
      run_stg(with(with(run_flags(tmp.sub("firsts")), timed), {"--ranks", "0,2,4,6"}), tmp.path());
  ASSERT_EQ(firsts.status, 0) << firsts.err;
  EXPECT_EQ(firsts.out, whole.out);
  EXPECT_NE(whole.out.find("makespan: "), std::string::npos) << whole.out;
  EXPECT_FALSE(fs::exists(rank_file(tmp.sub("firsts"), 1)));
  // Stage 3's first rank left out: refused, naming it, nothing written.
  const stg_test::RunResult missing =
      run_stg(with(with(run_flags(tmp.sub("missing")), timed), {"--ranks", "0-5"}), tmp.path());
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.err.find("--print_makespan replays: add 6 to --ranks"), std::string::npos)
      << missing.err;
  EXPECT_FALSE(fs::exists(tmp.sub("missing")));
}

}  // namespace
}  // namespace stg
