// --output_name and --comm_group_file: names ASTRA-sim can open (PREFIX.<rank>.et)
// for the protobuf schemas, unless --allow_any_name; "workload.et" completes to
// "workload.%d.et"; sub-directories are created up front, and refused with
// exit 2 when %d is in one or they cannot be created.
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "support/run_stg.h"
#include "support/temp_dir.h"

namespace {

namespace fs = std::filesystem;
using stg_test::run_stg;
using stg_test::RunResult;
using stg_test::TempDir;

const std::vector<std::string> kSmall = {
    "--num_stacks", "1", "--dmodel", "64", "--dff",  "128", "--head", "4", "--seq",  "16",
    "--batch",      "4", "--din",    "64", "--dout", "64",  "--dp",   "2", "--quiet"};

RunResult run_small(const TempDir& tmp, const std::string& dir, std::vector<std::string> extra) {
  std::vector<std::string> args = kSmall;
  args.insert(args.end(), {"--output_dir", tmp.sub(dir)});
  args.insert(args.end(), extra.begin(), extra.end());
  return run_stg(args, tmp.path(), tmp.path());
}

// Every file under `dir`, relative to it.
std::set<std::string> files_under(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out.insert(fs::relative(e.path(), dir).string());
  return out;
}

TEST(OutputNames, NameAstraSimCannotOpenIsRefused) {
  TempDir tmp;
  for (const char* name : {"workload_%d.et", "workload.%d", "%d.et", "x.%d.et.bak", "x.%d.json"}) {
    const RunResult r = run_small(tmp, "o", {"--output_name", name});
    EXPECT_EQ(r.status, 2) << name;
    EXPECT_EQ(r.err, "stg: error: --output_name '" + std::string(name) +
                         "' gives files ASTRA-sim cannot open: it reads PREFIX.<rank>.et, so the "
                         "name must be PREFIX.%d.et (e.g. workload.%d.et); --allow_any_name keeps "
                         "it\n");
    EXPECT_FALSE(fs::exists(tmp.sub("o"))) << name;
  }
  // The same name is refused for v0.0.1 too.
  EXPECT_EQ(
      run_small(tmp, "o", {"--output_name", "w_%d.et", "--chakra_schema_version", "v0.0.1"}).status,
      2);
}

TEST(OutputNames, AllowAnyNameKeepsIt) {
  TempDir tmp;
  const RunResult r = run_small(tmp, "o", {"--output_name", "workload_%d.et", "--allow_any_name"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(files_under(tmp.sub("o")),
            (std::set<std::string>{"workload_0.et", "workload_1.et", "workload_.json"}));
}

TEST(OutputNames, JsonKeepsItsNames) {
  TempDir tmp;
  ASSERT_EQ(
      run_small(tmp, "a", {"--output_name", "workload.%d.json", "--chakra_schema_version", "json"})
          .status,
      0);
  EXPECT_EQ(files_under(tmp.sub("a")),
            (std::set<std::string>{"workload.0.json", "workload.1.json", "workload.json"}));
  // Not read by ASTRA-sim: any name is allowed.
  ASSERT_EQ(
      run_small(tmp, "b", {"--output_name", "w_%d.json", "--chakra_schema_version", "json"}).status,
      0);
  EXPECT_EQ(files_under(tmp.sub("b")), (std::set<std::string>{"w_0.json", "w_1.json", "w_.json"}));
}

TEST(OutputNames, NameWithExtensionGetsTheRankBeforeIt) {
  TempDir tmp;
  ASSERT_EQ(run_small(tmp, "a", {"--output_name", "workload.et"}).status, 0);
  EXPECT_EQ(files_under(tmp.sub("a")),
            (std::set<std::string>{"workload.0.et", "workload.1.et", "workload.json"}));
  ASSERT_EQ(
      run_small(tmp, "b", {"--output_name", "workload.json", "--chakra_schema_version", "json"})
          .status,
      0);
  EXPECT_EQ(files_under(tmp.sub("b")),
            (std::set<std::string>{"workload.0.json", "workload.1.json", "workload.json"}));
}

TEST(OutputNames, SubDirectoriesAreCreated) {
  TempDir tmp;
  const RunResult r = run_small(
      tmp, "o", {"--output_name", "traces/w.%d.et", "--comm_group_file", "groups/cg.json"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(files_under(tmp.sub("o")),
            (std::set<std::string>{"traces/w.0.et", "traces/w.1.et", "groups/cg.json"}));
}

TEST(OutputNames, SubDirectoriesRefusedUpFront) {
  TempDir tmp;
  RunResult r = run_small(tmp, "o", {"--output_name", "rank%d/w.et", "--allow_any_name"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "stg: error: --output_name 'rank%d/w.et' has %d in a directory: put the rank in the "
            "file name (e.g. traces/workload.%d.et)\n");
  EXPECT_FALSE(fs::exists(tmp.sub("o")));
  // A file where the sub-directory would be: exit 2 before anything is written.
  fs::create_directories(tmp.sub("p"));
  tmp.write("p/sub", "");
  r = run_small(tmp, "p", {"--comm_group_file", "sub/cg.json"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("cannot create directory '" + tmp.sub("p") + "/sub'"), std::string::npos)
      << r.err;
  EXPECT_EQ(files_under(tmp.sub("p")), (std::set<std::string>{"sub"}));
  EXPECT_EQ(std::distance(fs::directory_iterator(tmp.sub("p")), fs::directory_iterator()), 1);
}

}  // namespace
