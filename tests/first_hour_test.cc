// What a new user meets in the first hour (issue 23, point 5): integer flags
// too large for their field or for the run, flags with one dash, `stg help`,
// choice values in any case, an output directory that is a file, the summary
// line of a shard, and stale rank files of an earlier run named in it.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "support/files.h"
#include "support/run_stg.h"
#include "support/temp_dir.h"
#include "support/tiny_model.h"

namespace {

namespace fs = std::filesystem;
using stg_test::read_file;
using stg_test::run_stg;
using stg_test::RunResult;
using stg_test::TempDir;

RunResult run_small(const TempDir& tmp, std::vector<std::string> extra) {
  return run_stg(stg_test::tiny_transformer(extra), tmp.path(), tmp.path());
}

// One line on stderr that starts with "stg: error: <flag>", exit 2, nothing
// on stdout and no output directory.
void expect_usage_error(const RunResult& r, const std::string& flag, const TempDir& tmp) {
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(r.err.rfind("stg: error: " + flag, 0), 0u) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(fs::exists(tmp.sub("o")));
}

// Too few blocks for the chunks: the flag that set them, or the schedule
// whose chunks they are (DualPipeV has no --virtual_stages).
TEST(FirstHour, ChunksBeyondTheBlocksNameWhatSetThem) {
  TempDir tmp;
  const std::string o = tmp.sub("o");
  const std::vector<std::string> gpt = {"--model_type",  "gpt", "--pp",         "2",
                                        "--num_stacks",  "2",   "--batch",      "8",
                                        "--micro_batch", "2",   "--output_dir", o};
  std::vector<std::string> args = gpt;
  args.insert(args.end(), {"--pipeline_schedule", "dualpipev"});
  expect_usage_error(run_stg(args, tmp.path(), tmp.path()),
                     "--pipeline_schedule dualpipev puts 2 chunks on each stage: --pp 2 x 2 is "
                     "larger than --num_stacks 2",
                     tmp);
  args = gpt;
  args.insert(args.end(), {"--pipeline_schedule", "interleaved", "--virtual_stages", "2"});
  expect_usage_error(run_stg(args, tmp.path(), tmp.path()),
                     "--pp 2 x --virtual_stages 2 is larger than --num_stacks 2", tmp);
}

TEST(FirstHour, IntegerFlagsBeyondTheirRangeAreUsageErrors) {
  TempDir tmp;
  const std::string o = tmp.sub("o");
  // The three of the issue: an abort, an internal error and a silent 2^63-1.
  RunResult r = run_small(tmp, {"--threads", "40000", "--output_dir", o});
  expect_usage_error(r, "--threads 40000 is too large: use an integer up to 1024", tmp);
  r = run_small(tmp, {"--batch", "9223372036854775807", "--output_dir", o});
  expect_usage_error(r, "size of tensor", tmp);
  EXPECT_NE(r.err.find("--batch 9223372036854775807"), std::string::npos) << r.err;
  // The micro-batch is the batch: not named after --micro_batch, not given.
  EXPECT_EQ(r.err.find("--micro_batch"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("use smaller values"), std::string::npos) << r.err;
  r = run_stg({"--dp", "99999999999999999999", "--output_dir", o}, tmp.path(), tmp.path());
  expect_usage_error(
      r, "--dp 99999999999999999999 is too large: use an integer from 1 to 2147483647", tmp);
  // Every integer flag: a value beyond 64 bits names the flag.
  for (const char* flag : {"--dp",
                           "--tp",
                           "--sp",
                           "--pp",
                           "--ep",
                           "--din",
                           "--dout",
                           "--dvocal",
                           "--dmodel",
                           "--dff",
                           "--batch",
                           "--micro_batch",
                           "--seq",
                           "--head",
                           "--kvhead",
                           "--num_stacks",
                           "--experts",
                           "--kexperts",
                           "--virtual_stages",
                           "--zero_stage",
                           "--make_vocab_size_divisible_by",
                           "--threads"}) {
    for (const char* value : {"99999999999999999999", "-99999999999999999999"}) {
      r = run_stg({flag, value, "--output_dir", o}, tmp.path(), tmp.path());
      expect_usage_error(r, std::string(flag) + " " + value + " is too", tmp);
    }
  }
  // Values that fit the field but not the run.
  r = run_small(tmp, {"--dp", "65536", "--tp", "65536", "--output_dir", o});
  expect_usage_error(r, "--dp 65536 * --tp 65536 is more than 2147483647 ranks", tmp);
  r = run_small(tmp, {"--num_stacks", "10001", "--output_dir", o});
  expect_usage_error(r, "--num_stacks 10001 is too large", tmp);
  r = run_stg(
      {"--model_type", "gpt", "--num_stacks", "1", "--seq", "4000000000000", "--output_dir", o},
      tmp.path(), tmp.path());
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("--seq 4000000000000"), std::string::npos) << r.err;
  const std::vector<std::string> moe = {
      "--model_type", "moe", "--num_stacks", "1", "--dmodel",     "64",
      "--dff",        "128", "--head",       "4", "--kvhead",     "2",
      "--seq",        "16",  "--batch",      "4", "--output_dir", o};
  std::vector<std::string> args = moe;
  args.insert(args.end(), {"--experts", "9223372036854775807"});
  expect_usage_error(run_stg(args, tmp.path(), tmp.path()),
                     "--experts 9223372036854775807 / --ep 1 is 9223372036854775807 experts per "
                     "rank: use at most 1024",
                     tmp);
  args = moe;
  args.insert(args.end(), {"--framework", "megatron", "--make_vocab_size_divisible_by",
                           "9223372036854775807", "--tp", "2"});
  expect_usage_error(run_stg(args, tmp.path(), tmp.path()),
                     "--make_vocab_size_divisible_by 9223372036854775807 x tp 2 pads the "
                     "vocabulary beyond 64 bits",
                     tmp);
  // validate and inspect read --threads the same way.
  r = run_stg({"validate", tmp.path(), "--threads", "40000"}, tmp.path(), tmp.path());
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.rfind("stg validate: error: --threads 40000 is too large", 0), 0u) << r.err;
  r = run_stg({"inspect", tmp.path(), "--threads", "99999999999999999999"}, tmp.path(), tmp.path());
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.rfind("stg inspect: error: --threads 99999999999999999999 is too large", 0), 0u)
      << r.err;
}

TEST(FirstHour, ManyThreadsWithinTheBoundRun) {
  TempDir tmp;
  const RunResult r =
      run_small(tmp, {"--threads", "1024", "--dp", "2", "--output_dir", tmp.sub("o")});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::exists(tmp.sub("o") + "/workload.1.et"));
}

TEST(FirstHour, FlagsWithOneDashAndWordsAreNamed) {
  TempDir tmp;
  RunResult r = run_stg({"-dp", "2", "--output_dir", tmp.sub("o")}, tmp.path(), tmp.path());
  expect_usage_error(
      r, "unknown flag -dp: flags start with two dashes, did you mean --dp? (see stg --help)", tmp);
  r = run_stg({"--dp", "2", "four", "--output_dir", tmp.sub("o")}, tmp.path(), tmp.path());
  expect_usage_error(r, "unexpected argument 'four': flags start with two dashes", tmp);
  // A value that starts with a dash is still a value.
  r = run_stg(
      {"--model_type", "gpt", "--num_stacks", "1", "--dmodel", "64", "--dff", "128", "--head", "4",
       "--seq", "16", "--batch", "4", "--micro_batch", "-1", "--output_dir", tmp.sub("m")},
      tmp.path(), tmp.path());
  EXPECT_EQ(r.status, 0) << r.err;
  // `stg help` is `stg --help`.
  r = run_stg({"help"}, tmp.path(), tmp.path());
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("--output_dir"), std::string::npos) << r.out;
  EXPECT_EQ(r.out, run_stg({"--help"}, tmp.path(), tmp.path()).out);
}

TEST(FirstHour, BatchNotDivisibleByDpNamesTheBatch) {
  TempDir tmp;
  const RunResult r =
      run_stg({"--model_type", "gpt", "--dp", "4", "--batch", "6", "--output_dir", tmp.sub("o")},
              tmp.path(), tmp.path());
  expect_usage_error(r, "--batch 6 is not divisible by --dp 4", tmp);
  EXPECT_EQ(r.err.find("--micro_batch"), std::string::npos) << r.err;
}

TEST(FirstHour, ChoiceValuesIgnoreCase) {
  TempDir tmp;
  const std::vector<std::string> gpt = {"--num_stacks", "1",      "--dmodel", "64",    "--dff",
                                        "128",          "--head", "4",        "--seq", "16",
                                        "--batch",      "4",      "--dp",     "2",     "--quiet"};
  std::vector<std::string> lower = gpt, upper = gpt;
  lower.insert(lower.end(), {"--model_type", "gpt", "--units", "physical", "--dtype", "fp16",
                             "--pipeline_schedule", "none", "--framework", "reference",
                             "--trace_detail", "sim", "--output_dir", tmp.sub("lower")});
  upper.insert(upper.end(), {"--model_type", "GPT", "--units", "Physical", "--dtype", "FP16",
                             "--pipeline_schedule", "None", "--framework", "Reference",
                             "--trace_detail", "SIM", "--output_dir", tmp.sub("upper")});
  ASSERT_EQ(run_stg(lower, tmp.path(), tmp.path()).status, 0);
  const RunResult r = run_stg(upper, tmp.path(), tmp.path());
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* f : {"workload.0.et", "workload.1.et", "workload.json"})
    EXPECT_TRUE(read_file(tmp.sub("lower") + "/" + f) == read_file(tmp.sub("upper") + "/" + f))
        << f;
  const RunResult preset = run_stg({"--model", "Llama3-8B", "--num_stacks", "1", "--seq", "128",
                                    "--batch", "1", "--output_dir", tmp.sub("p"), "--quiet"},
                                   tmp.path(), tmp.path());
  EXPECT_EQ(preset.status, 0) << preset.err;
}

TEST(FirstHour, OutputDirectoryThatIsAFileIsNamed) {
  TempDir tmp;
  tmp.write("afile", "");
  RunResult r = run_small(tmp, {"--output_dir", tmp.sub("afile")});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "stg: error: --output_dir: cannot create directory '" + tmp.sub("afile") +
                       "': '" + tmp.sub("afile") +
                       "' is a file, not a directory: give a directory that can be created and "
                       "written\n");
  r = run_small(tmp, {"--output_dir", tmp.sub("afile") + "/sub"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("'" + tmp.sub("afile") + "' is a file, not a directory"), std::string::npos)
      << r.err;
}

// "stg: ranks 1-1 of 2, 1 files, 1234 bytes, ..." -> {files, bytes}.
std::pair<int64_t, int64_t> files_and_bytes(const std::string& summary) {
  const size_t files_end = summary.find(" files, ");
  const size_t files_start = summary.rfind(' ', files_end - 1) + 1;
  const size_t bytes_start = files_end + 8;
  const size_t bytes_end = summary.find(" bytes", bytes_start);
  return {std::stoll(summary.substr(files_start, files_end - files_start)),
          std::stoll(summary.substr(bytes_start, bytes_end - bytes_start))};
}

// What is in `dir`: {files, bytes}.
std::pair<int64_t, int64_t> listing(const std::string& dir) {
  int64_t files = 0, bytes = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    ++files;
    bytes += static_cast<int64_t>(fs::file_size(e.path()));
  }
  return {files, bytes};
}

TEST(FirstHour, ShardSummaryCountsWhatTheShardWrote) {
  TempDir tmp;
  for (const char* shard : {"0/2", "1/2"}) {
    const std::string dir = tmp.sub(std::string("s") + shard[0]);
    const RunResult r = run_small(tmp, {"--dp", "4", "--shard", shard, "--output_dir", dir});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(files_and_bytes(r.out), listing(dir)) << r.out;
    EXPECT_EQ(fs::exists(dir + "/workload.json"), shard[0] == '0');
    const std::string ranks = shard[0] == '0' ? "stg: ranks 0-1 of 4, " : "stg: ranks 2-3 of 4, ";
    // The last line, after the step summary.
    EXPECT_NE(r.out.find("\n" + ranks), std::string::npos) << r.out;
  }
  const RunResult whole = run_small(tmp, {"--dp", "4", "--output_dir", tmp.sub("w")});
  EXPECT_NE(whole.out.find("\nstg: 4 ranks, 5 files, "), std::string::npos) << whole.out;
  EXPECT_EQ(files_and_bytes(whole.out), listing(tmp.sub("w")));
}

TEST(FirstHour, StaleRankFilesAreCountedInTheSummary) {
  TempDir tmp;
  ASSERT_EQ(run_small(tmp, {"--dp", "4", "--tp", "2", "--output_dir", tmp.sub("o")}).status, 0);
  RunResult r = run_small(tmp, {"--dp", "2", "--output_dir", tmp.sub("o")});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("-> " + tmp.sub("o") + " (removed 6 rank files of an earlier run)\n"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(listing(tmp.sub("o")).first, 3);
  r = run_small(tmp, {"--dp", "2", "--output_dir", tmp.sub("o")});
  EXPECT_EQ(r.out.find("removed"), std::string::npos) << r.out;
}

}  // namespace
