// The command line's help for mistakes: unknown flags name the closest known
// one, the reference's --mp is --tp, --version, and a repeated flag takes
// its last value.
#include <filesystem>
#include <string>

#include "gtest/gtest.h"
#include "support/files.h"
#include "support/run_stg.h"
#include "support/temp_dir.h"

namespace {

using stg_test::read_file;
using stg_test::run_stg;
using stg_test::RunResult;
using stg_test::TempDir;

TEST(Cli, UnknownFlagSuggestsTheClosest) {
  TempDir tmp;
  RunResult r = run_stg({"--num_stack", "4", "--output_dir", tmp.sub("o")}, tmp.path());
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "stg: error: unknown flag --num_stack: did you mean --num_stacks? (see stg --help)\n");
  r = run_stg({"--pipeline_schedul=1f1b", "--output_dir", tmp.sub("o")}, tmp.path());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("did you mean --pipeline_schedule?"), std::string::npos) << r.err;
  r = run_stg({"--zzzzzzzz", "1", "--output_dir", tmp.sub("o")}, tmp.path());
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "stg: error: unknown flag --zzzzzzzz (see stg --help)\n");
  EXPECT_FALSE(std::filesystem::exists(tmp.sub("o")));
}

TEST(Cli, MpIsTp) {
  TempDir tmp;
  const std::vector<std::string> small = {"--num_stacks", "1",  "--dmodel", "64", "--dff",   "128",
                                          "--head",       "4",  "--seq",    "16", "--batch", "4",
                                          "--din",        "64", "--dout",   "64", "--quiet"};
  std::vector<std::string> a = small, b = small;
  a.insert(a.end(), {"--mp", "2", "--output_dir", tmp.sub("mp")});
  b.insert(b.end(), {"--tp", "2", "--output_dir", tmp.sub("tp")});
  ASSERT_EQ(run_stg(a, tmp.path()).status, 0);
  ASSERT_EQ(run_stg(b, tmp.path()).status, 0);
  for (const char* f : {"workload.0.et", "workload.1.et", "workload.json"})
    EXPECT_TRUE(read_file(tmp.sub("mp") + "/" + f) == read_file(tmp.sub("tp") + "/" + f)) << f;
  EXPECT_FALSE(std::filesystem::exists(tmp.sub("mp") + "/workload.2.et"));
}

TEST(Cli, RepeatedFlagTakesTheLastValue) {
  TempDir tmp;
  const RunResult r =
      run_stg({"--num_stacks", "1",  "--dmodel", "64", "--dff",        "128",       "--head", "4",
               "--seq",        "16", "--batch",  "4",  "--din",        "64",        "--dout", "64",
               "--dp",         "2",  "--dp",     "4",  "--output_dir", tmp.sub("o")},
              tmp.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(tmp.sub("o") + "/workload.3.et"));
  EXPECT_FALSE(std::filesystem::exists(tmp.sub("o") + "/workload.4.et"));
}

TEST(Cli, Version) {
  TempDir tmp;
  const RunResult r = run_stg({"--version"}, tmp.path());
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out.rfind("stg ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("v0.0.4, v0.0.1, json"), std::string::npos) << r.out;
}

}  // namespace

namespace {

// --micro_batch -1 is the reference's "no micro-batching": the same bytes as
// leaving the flag out.
TEST(Cli, MicroBatchMinusOneIsNoMicroBatching) {
  TempDir tmp;
  const std::vector<std::string> gpt = {
      "--model_type", "gpt", "--num_stacks", "1", "--dmodel", "64", "--dff",  "128", "--head", "4",
      "--seq",        "16",  "--batch",      "4", "--dp",     "2",  "--quiet"};
  std::vector<std::string> a = gpt, b = gpt;
  a.insert(a.end(), {"--micro_batch", "-1", "--output_dir", tmp.sub("a")});
  b.insert(b.end(), {"--output_dir", tmp.sub("b")});
  ASSERT_EQ(run_stg(a, tmp.path()).status, 0);
  ASSERT_EQ(run_stg(b, tmp.path()).status, 0);
  for (const char* f : {"workload.0.et", "workload.1.et", "workload.json"})
    EXPECT_TRUE(read_file(tmp.sub("a") + "/" + f) == read_file(tmp.sub("b") + "/" + f)) << f;
}

}  // namespace

// `stg infer` shares the generator's flags: its roofline's --peak_tflops and
// --mem_bw_gbps are the generator's (--print_makespan's) options, taken
// without --print_makespan (two registrations of one name abort at start).
namespace {
TEST(Cli, InferTakesTheRooflineFiguresOfTheGenerator) {
  TempDir tmp;
  const RunResult r =
      run_stg({"infer",     "--model_type",  "llama", "--num_stacks",  "1",    "--dmodel",
               "64",        "--dff",         "128",   "--head",        "4",    "--kvhead",
               "2",         "--requests",    "2",     "--prompt_len",  "8",    "--decode_steps",
               "2",         "--peak_tflops", "500",   "--mem_bw_gbps", "2000", "--output_dir",
               tmp.sub("o")},
              tmp.path());
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("roofline at 500 TFLOPS and 2000 GB/s"), std::string::npos) << r.out;
}
}  // namespace
