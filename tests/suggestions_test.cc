// Mistyped values get the closest valid one; a number that is not whole is
// named in the flag's words (not CLI11's "Could not convert"); --help groups
// the flags as docs/*.md do and shows every default.
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "support/run_stg.h"
#include "support/temp_dir.h"

namespace {

using stg_test::run_stg;
using stg_test::RunResult;
using stg_test::TempDir;

struct Mistake {
  std::vector<std::string> args;
  std::string error;  // the whole line after "stg: error: "
};

TEST(Suggestions, ClosestValueAndWholeNumbers) {
  TempDir tmp;
  const Mistake cases[] = {
      {{"--model", "lama3-8b"},
       "--model 'lama3-8b' is unknown: did you mean llama3-8b? run `stg models` for the list"},
      {{"--model", "qwen"}, "--model 'qwen' is unknown: run `stg models` for the list"},
      {{"--model_type", "lama"},
       "--model_type 'lama' is unknown: did you mean llama? (use transformer, gpt (dense), llama, "
       "moe, qwen2, qwen3, qwen3-moe or deepseek)"},
      {{"--pipeline_schedule", "1f1c"},
       "--pipeline_schedule '1f1c' is unknown: did you mean 1f1b? (use none, gpipe, 1f1b, "
       "interleaved, zb-h1, dualpipe or dualpipev)"},
      {{"--units", "phisical"},
       "--units 'phisical' is unknown: did you mean physical? (use stg or physical)"},
      {{"--units", "physical", "--dtype", "bf61"},
       "--dtype 'bf61' is unknown: did you mean bf16? (use fp32, bf16, fp16 or fp8)"},
      {{"--chakra_schema_version", "v0.04"},
       "--chakra_schema_version 'v0.04' is unknown: did you mean v0.0.4? (use v0.0.4, v0.0.1 or "
       "json)"},
      {{"--chakra_schema_version", "v9"},
       "--chakra_schema_version 'v9' is unknown: use v0.0.4, v0.0.1 or json"},
      {{"--dp", "2.5"}, "--dp 2.5 is not a whole number: use an integer from 1 to 2147483647"},
      {{"--num_stacks", "four"},
       "--num_stacks four is not a whole number: use an integer from 1 to 10000"},
      {{"--seq", "1e3"}, "--seq 1e3 is not a whole number: use an integer >= 1"},
      {{"--zero_stage", "1.0"},
       "--zero_stage 1.0 is not a whole number: use an integer from 0 to 3"},
  };
  for (const Mistake& m : cases) {
    std::vector<std::string> args = m.args;
    args.insert(args.end(), {"--output_dir", tmp.sub("o")});
    const RunResult r = run_stg(args, tmp.path());
    EXPECT_EQ(r.status, 2) << m.args[0];
    EXPECT_EQ(r.err, "stg: error: " + m.error + "\n");
  }
  EXPECT_FALSE(std::filesystem::exists(tmp.sub("o")));
}

TEST(Suggestions, HelpShowsEveryDefaultInReadmeGroups) {
  TempDir tmp;
  const RunResult r = run_stg({"--help"}, tmp.path());
  ASSERT_EQ(r.status, 0);
  for (const char* group :
       {"Output:", "Parallelism:", "Model (defaults: transformer / gpt, llama, moe):",
        "Model presets and Hugging Face configs:", "Pipeline schedules:", "ZeRO stages:",
        "Physical units:", "Custom modules:", "Realistic training step (--framework megatron):"})
    EXPECT_NE(r.out.find(std::string("\n") + group + "\n"), std::string::npos) << group;
  EXPECT_EQ(r.out.find("\nOther:"), std::string::npos) << "a flag without a README group";
  // Every flag line but --help and --version shows its default.
  // An entry is its flag line and the indented lines that continue it (a
  // long flag name puts the whole description on the next line).
  std::istringstream lines(r.out);
  std::vector<std::string> entries;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("  --", 0) == 0) {
      entries.push_back(line);
    } else if (!entries.empty() && line.rfind("   ", 0) == 0) {
      entries.back() += line;
    }
  }
  int flags = 0;
  for (const std::string& entry : entries) {
    if (entry.rfind("  --help", 0) == 0 || entry.rfind("  --version", 0) == 0) continue;
    ++flags;
    EXPECT_NE(entry.find("[default: "), std::string::npos) << entry;
  }
  EXPECT_GE(flags, 40);
  EXPECT_NE(r.out.find("--dp INT"), std::string::npos);
  EXPECT_NE(r.out.find("[default: 32 / 80]"), std::string::npos);
}

}  // namespace
