// --shard i/n and --shard auto (issue: many machines through an existing
// launcher): the union of the shards is byte-identical to a single run, only
// shard 0 writes the comm-group file, and mpirun (Open MPI) can launch it.
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "cli/flag_text.h"
#include "stg/options.h"
#include "support/files.h"
#include "support/run_stg.h"
#include "support/temp_dir.h"

namespace stg {
namespace {

namespace fs = std::filesystem;
using stg_test::read_file;
using stg_test::run_program;
using stg_test::run_stg;
using stg_test::TempDir;

using Env = std::map<std::string, std::string>;

std::pair<int64_t, int64_t> shard_of(const std::string& text, const Env& env = {}) {
  return cli::parse_shard(text, [&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

std::string usage_error(const std::string& text, const Env& env = {}) {
  try {
    shard_of(text, env);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ShardParse, IndexOverCount) {
  EXPECT_EQ(shard_of("0/1"), std::make_pair(int64_t{0}, int64_t{1}));
  EXPECT_EQ(shard_of("3/4"), std::make_pair(int64_t{3}, int64_t{4}));
  for (const char* bad : {"4/4", "1", "-1/4", "1/0", "a/b", "1/4x", "/4", ""})
    EXPECT_NE(usage_error(bad).find("--shard"), std::string::npos) << bad;
}

TEST(ShardParse, AutoReadsTheLaunchersVariables) {
  EXPECT_EQ(shard_of("auto", {{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}}),
            std::make_pair(int64_t{1}, int64_t{2}));
  EXPECT_EQ(shard_of("auto", {{"PMI_RANK", "5"}, {"PMI_SIZE", "8"}}),
            std::make_pair(int64_t{5}, int64_t{8}));
  EXPECT_EQ(shard_of("auto", {{"SLURM_PROCID", "2"}, {"SLURM_NTASKS", "3"}}),
            std::make_pair(int64_t{2}, int64_t{3}));
  // A job array --array=1-4 numbers its tasks 1..4.
  EXPECT_EQ(shard_of("auto", {{"SLURM_ARRAY_TASK_ID", "3"},
                              {"SLURM_ARRAY_TASK_COUNT", "4"},
                              {"SLURM_ARRAY_TASK_MIN", "1"}}),
            std::make_pair(int64_t{2}, int64_t{4}));
  // Open MPI's variables win over Slurm's (mpirun inside an allocation).
  EXPECT_EQ(shard_of("auto", {{"OMPI_COMM_WORLD_RANK", "0"},
                              {"OMPI_COMM_WORLD_SIZE", "2"},
                              {"SLURM_PROCID", "7"},
                              {"SLURM_NTASKS", "9"}}),
            std::make_pair(int64_t{0}, int64_t{2}));
  EXPECT_NE(usage_error("auto").find("no launcher variables"), std::string::npos);
  EXPECT_NE(usage_error("auto", {{"PMI_RANK", "8"}, {"PMI_SIZE", "8"}}).find("PMI_RANK=8"),
            std::string::npos);
}

const std::vector<std::string> kRun = {
    "--model_type", "gpt", "--dp",     "2",   "--tp",   "2",   "--pp",   "2",
    "--num_stacks", "2",   "--dmodel", "256", "--dff",  "512", "--head", "8",
    "--seq",        "64",  "--batch",  "8",   "--quiet"};

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// Every file of `a` is in `b` with the same bytes, and nothing else is.
void expect_same_files(const fs::path& a, const fs::path& b) {
  std::map<std::string, std::string> left, right;
  for (const auto& e : fs::directory_iterator(a)) left[e.path().filename()] = read_file(e.path());
  for (const auto& e : fs::directory_iterator(b)) right[e.path().filename()] = read_file(e.path());
  EXPECT_EQ(left.size(), right.size());
  for (const auto& [name, bytes] : left) {
    auto it = right.find(name);
    ASSERT_NE(it, right.end()) << name << " missing";
    EXPECT_TRUE(it->second == bytes) << name << " differs";
  }
}

TEST(Shard, UnionOfShardsIsTheSingleRunAndOnlyShardZeroWritesTheGroups) {
  TempDir tmp;
  ASSERT_EQ(run_stg(with(kRun, {"--output_dir", tmp.sub("full")}), tmp.path()).status, 0);
  fs::create_directories(tmp.sub("union"));
  for (int i = 0; i < 3; ++i) {
    const std::string dir = tmp.sub("shard" + std::to_string(i));
    const stg_test::RunResult r =
        run_stg(with(kRun, {"--output_dir", dir, "--shard", std::to_string(i) + "/3"}), tmp.path());
    ASSERT_EQ(r.status, 0) << r.err;
    // 8 ranks over 3 shards: 2, 3 and 3 rank files; the groups only in 0.
    const size_t ranks = i == 0 ? 2 : 3;
    size_t files = 0;
    for (const auto& e : fs::directory_iterator(dir)) {
      ++files;
      fs::copy_file(e.path(), tmp.sub("union") + "/" + e.path().filename().string());
    }
    EXPECT_EQ(files, ranks + (i == 0 ? 1 : 0)) << dir;
  }
  expect_same_files(tmp.sub("full"), tmp.sub("union"));
}

TEST(Shard, RefusedWithRanksAndOutOfRange) {
  TempDir tmp;
  stg_test::RunResult r = run_stg(
      with(kRun, {"--output_dir", tmp.sub("o"), "--shard", "0/2", "--ranks", "0-1"}), tmp.path());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--shard and --ranks"), std::string::npos) << r.err;
  r = run_stg(with(kRun, {"--output_dir", tmp.sub("o"), "--shard", "2/2"}), tmp.path());
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.rfind("stg: error: --shard '2/2'", 0), 0u) << r.err;
  EXPECT_FALSE(fs::exists(tmp.sub("o")));
}

// The first mpirun on PATH, or empty.
std::string find_mpirun() {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t colon = dirs.find(':', start);
    if (colon == std::string::npos) colon = dirs.size();
    const fs::path candidate = fs::path(dirs.substr(start, colon - start)) / "mpirun";
    if (!candidate.parent_path().empty() && fs::exists(candidate)) return candidate.string();
    start = colon + 1;
  }
  return "";
}

// scripts/setup.sh installs Debian's openmpi-bin, so CI runs this; elsewhere
// it is skipped (and says so) when mpirun is missing.
TEST(Shard, TwoProcessesUnderMpirunWriteTheSingleRun) {
  const std::string mpirun = find_mpirun();
  if (mpirun.empty()) GTEST_SKIP() << "mpirun not found (apt-get install openmpi-bin)";
  TempDir tmp;
  ASSERT_EQ(run_stg(with(kRun, {"--output_dir", tmp.sub("full")}), tmp.path()).status, 0);
  std::vector<std::string> argv = {mpirun,    "--allow-run-as-root", "--oversubscribe", "-np", "2",
                                   STG_BINARY};
  argv = with(argv, with(kRun, {"--output_dir", tmp.sub("mpi"), "--shard", "auto"}));
  const stg_test::RunResult r = run_program(argv, tmp.path());
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  expect_same_files(tmp.sub("full"), tmp.sub("mpi"));
}

}  // namespace
}  // namespace stg
