// What a new user meets (issue 33, points 2, 4 and 5): --json on generate,
// infer and plans; the subcommands named in full; stg models --help; stg
// infer --quiet; non-finite and absurd hardware figures refused; plans
// --gpus 0 called too small; stg validate's input errors on stderr and a
// malformed comm-group file refused; the HF reader's strict types and a note
// for every field it does not model.
#include <filesystem>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "support/files.h"
#include "support/refused.h"
#include "support/run_stg.h"
#include "support/temp_dir.h"
#include "support/tiny_model.h"

namespace {

using stg_test::expect_refused;

namespace fs = std::filesystem;
using stg_test::run_stg;
using stg_test::RunResult;
using stg_test::TempDir;

std::vector<std::string> small(const std::vector<std::string>& extra) {
  return stg_test::tiny_transformer(extra);
}

// A serving iteration of a one-block llama: 2 requests of 8 tokens, 2 decode steps.
std::vector<std::string> tiny_infer(std::vector<std::string> extra) {
  std::vector<std::string> args = {
      "infer", "--model_type",   "llama", "--num_stacks", "1", "--dmodel",   "64", "--dff",
      "128",   "--head",         "4",     "--kvhead",     "2", "--requests", "2",  "--prompt_len",
      "8",     "--decode_steps", "2"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(NewUser, GenerateJsonIsTheRunSummary) {
  TempDir tmp;
  const RunResult r = run_stg(
      small({"--dp", "2", "--tp", "2", "--pp", "2", "--json", "--output_dir", tmp.sub("o")}),
      tmp.path(), tmp.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["ranks"], 8);
  EXPECT_EQ(j["files"], 9);  // 8 traces and the comm-group file
  EXPECT_EQ(j["output_dir"], tmp.sub("o"));
  // The bytes it reports are the bytes in the directory.
  int64_t bytes = 0;
  for (const auto& e : fs::directory_iterator(tmp.sub("o")))
    bytes += static_cast<int64_t>(fs::file_size(e.path()));
  EXPECT_EQ(j["bytes"], bytes);
  EXPECT_TRUE(j.contains("step"));
}

TEST(NewUser, InferJsonHasTheServingFigures) {
  TempDir tmp;
  const RunResult r =
      run_stg(tiny_infer({"--json", "--output_dir", tmp.sub("o")}), tmp.path(), tmp.path());
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("serving")) << r.out;
  EXPECT_EQ(j["serving"]["requests"], 2);
}

TEST(NewUser, InferQuietPrintsNothing) {
  TempDir tmp;
  const RunResult r =
      run_stg(tiny_infer({"--quiet", "--output_dir", tmp.sub("o")}), tmp.path(), tmp.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(fs::exists(fs::path(tmp.sub("o")) / "workload.0.et"));
}

TEST(NewUser, PlansJsonListsThePlans) {
  TempDir tmp;
  const RunResult r =
      run_stg({"plans", "--model_type", "llama", "--num_stacks", "2", "--dmodel", "64", "--dff",
               "128", "--head", "4", "--kvhead", "2", "--batch", "4", "--gpus", "4", "--json"},
              tmp.path(), tmp.path());
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.is_array());
  ASSERT_FALSE(j.empty());
  for (const auto& plan : j)
    EXPECT_EQ(plan["dp"].get<int>() * plan["tp"].get<int>() * plan["pp"].get<int>() *
                  plan["cp"].get<int>() * plan["ep"].get<int>(),
              4);
  expect_refused(run_stg({"plans", "--model_type", "llama", "--gpus", "4", "--json", "--csv"},
                         tmp.path(), tmp.path()),
                 "--csv and --json");
}

TEST(NewUser, UnknownWordsListEverySubcommand) {
  TempDir tmp;
  const RunResult r = run_stg({"foo"}, tmp.path(), tmp.path());
  EXPECT_EQ(r.status, 2);
  for (const char* sub : {"generate", "infer", "plans", "models", "validate", "inspect", "dot"})
    EXPECT_NE(r.err.find(sub), std::string::npos) << sub << ": " << r.err;
}

TEST(NewUser, ModelsHelpIsUsageNotTheTable) {
  TempDir tmp;
  const RunResult table = run_stg({"models"}, tmp.path(), tmp.path());
  ASSERT_EQ(table.status, 0);
  const RunResult help = run_stg({"models", "--help"}, tmp.path(), tmp.path());
  EXPECT_EQ(help.status, 0);
  EXPECT_EQ(help.out.rfind("usage: stg models", 0), 0u) << help.out;
  EXPECT_NE(help.out, table.out);
  expect_refused(run_stg({"models", "llama"}, tmp.path(), tmp.path()), "takes no arguments");
}

TEST(NewUser, NonFiniteAndAbsurdFiguresAreRefused) {
  TempDir tmp;
  for (const auto& [flag, value] :
       std::vector<std::pair<std::string, std::string>>{{"--link_gbps", "1e-300"},
                                                        {"--peak_tflops", "inf"},
                                                        {"--mem_bw_gbps", "nan"},
                                                        {"--peak_tflops", "1e300"}}) {
    SCOPED_TRACE(flag + " " + value);
    const RunResult r =
        run_stg(small({"--print_makespan", flag, value, "--output_dir", tmp.sub("o")}), tmp.path(),
                tmp.path());
    expect_refused(r, flag);
    EXPECT_NE(r.err.find("from 0.001 to 1e9"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(tmp.sub("o")));
  }
  // validate's own figures too.
  ASSERT_EQ(run_stg(small({"--output_dir", tmp.sub("v")}), tmp.path(), tmp.path()).status, 0);
  const RunResult r = run_stg({"validate", "--replay", "--link_gbps", "1e-300", tmp.sub("v")},
                              tmp.path(), tmp.path());
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_EQ(r.out.find("inf"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("nan"), std::string::npos) << r.out;
}

TEST(NewUser, PlansOnZeroGpusAreTooFew) {
  TempDir tmp;
  const RunResult r =
      run_stg({"plans", "--model_type", "llama", "--gpus", "0"}, tmp.path(), tmp.path());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--gpus 0 is too small"), std::string::npos) << r.err;
}

TEST(NewUser, ValidateInputErrorsGoToStderr) {
  TempDir tmp;
  RunResult r = run_stg({"validate", tmp.sub("absent")}, tmp.path(), tmp.path());
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("not a directory"), std::string::npos) << r.err;
  // A comm-group file that starts as one but is cut short: refused, not
  // taken as absent (which would make every collective a violation).
  ASSERT_EQ(
      run_stg(small({"--dp", "2", "--output_dir", tmp.sub("o")}), tmp.path(), tmp.path()).status,
      0);
  const fs::path groups = fs::path(tmp.sub("o")) / "workload.json";
  const std::string text = stg_test::read_file(groups);
  stg_test::write_file(groups, text.substr(0, text.size() / 2));
  r = run_stg({"validate", tmp.sub("o")}, tmp.path(), tmp.path());
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("workload.json"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--comm_group"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("R2"), std::string::npos) << r.err;
}

// The step summary after a run: a line per stage with what its first rank
// computes and sends (as `stg inspect` reads them back from the traces),
// its memory (as --print_gpu_vram prints it) and when its step ends (the
// longest is --print_makespan's makespan).
TEST(NewUser, TheStepSummaryIsPrintedByDefault) {
  TempDir tmp;
  const std::vector<std::string> run = {
      "--framework", "megatron", "--model_type", "gpt", "--dp",     "2",   "--tp",          "2",
      "--pp",        "2",        "--num_stacks", "2",   "--dmodel", "256", "--dff",         "1024",
      "--head",      "8",        "--seq",        "128", "--batch",  "8",   "--micro_batch", "2"};
  std::vector<std::string> args = run;
  args.insert(args.end(),
              {"--print_gpu_vram", "1", "--print_makespan", "--output_dir", tmp.sub("o")});
  const RunResult r = run_stg(args, tmp.path(), tmp.path());
  ASSERT_EQ(r.status, 0) << r.err;
  const size_t head = r.out.find("step per rank, by pipeline stage (FLOPs and bytes");
  ASSERT_NE(head, std::string::npos) << r.out;
  // The two stage lines: stage, ranks, TFLOP, GB per axis..., GiB, ms.
  std::vector<std::vector<std::string>> rows;
  size_t at = r.out.find('\n', r.out.find('\n', head) + 1) + 1;
  for (int s = 0; s < 2; ++s) {
    const size_t end = r.out.find('\n', at);
    std::istringstream line(r.out.substr(at, end - at));
    rows.emplace_back(std::istream_iterator<std::string>(line),
                      std::istream_iterator<std::string>());
    at = end + 1;
  }
  EXPECT_EQ(rows[0][1], "0-3");
  EXPECT_EQ(rows[1][1], "4-7");
  const auto inspected = nlohmann::json::parse(
      run_stg({"inspect", tmp.sub("o"), "--json"}, tmp.path(), tmp.path()).out);
  // Rank 0 and rank 4 (the stages' first ranks) are the min and max ranks of FLOPs here.
  const auto& flops = inspected["step"]["flops"];
  for (int s = 0; s < 2; ++s) {
    const int64_t want = flops[s == 0 ? "min" : "max"].get<int64_t>();
    ASSERT_EQ(flops[s == 0 ? "min_rank" : "max_rank"].get<int>(), 4 * s);
    EXPECT_NEAR(std::stod(rows[s][2]), want / 1e12, 0.006) << rows[s][2];
  }
  // Memory: --print_gpu_vram's "total X GiB" of each stage, rounded.
  for (int s = 0; s < 2; ++s) {
    const size_t m = r.out.find("memory stage " + std::to_string(s));
    ASSERT_NE(m, std::string::npos) << r.out;
    const double gib = std::stod(r.out.substr(r.out.find("total ", m) + 6));
    EXPECT_NEAR(std::stod(rows[s][rows[s].size() - 2]), gib, 0.006);
  }
  // The later of the two "done at" is the makespan.
  const size_t ms = r.out.find("makespan: ");
  ASSERT_NE(ms, std::string::npos) << r.out;
  const double makespan_ms = std::stod(r.out.substr(ms + 10)) / 1e6;
  EXPECT_NEAR(std::max(std::stod(rows[0].back()), std::stod(rows[1].back())), makespan_ms, 0.006);
  // --quiet: nothing; the reference's units: the heading says so.
  args = run;
  args.insert(args.end(), {"--quiet", "--output_dir", tmp.sub("q")});
  EXPECT_EQ(run_stg(args, tmp.path(), tmp.path()).out, "");
  const RunResult reference =
      run_stg(small({"--output_dir", tmp.sub("r")}), tmp.path(), tmp.path());
  EXPECT_NE(reference.out.find("num_ops in multiply-accumulates, sizes in elements; --units "
                               "physical gives FLOPs and bytes"),
            std::string::npos)
      << reference.out;
}

// stg dot's default picture stays readable: the first 60 nodes, and a note
// that says how to draw the whole rank.
TEST(NewUser, DotDrawsAReadablePictureByDefault) {
  TempDir tmp;
  ASSERT_EQ(run_stg({"--model_type", "gpt", "--num_stacks", "2", "--dmodel", "64", "--dff", "128",
                     "--head", "4", "--seq", "16", "--batch", "4", "--quiet", "--output_dir",
                     tmp.sub("o")},
                    tmp.path(), tmp.path())
                .status,
            0);
  const RunResult r = run_stg({"dot", tmp.sub("o")}, tmp.path(), tmp.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("drew the first 60 of "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--max_nodes 0 all"), std::string::npos) << r.err;
}

// A config of a Llama-style model with `extra` fields.
std::string llama_config(const std::string& extra) {
  return R"({"architectures": ["MistralForCausalLM"], "hidden_size": 64,
    "intermediate_size": 128, "num_attention_heads": 4, "num_key_value_heads": 2,
    "num_hidden_layers": 1, "vocab_size": 256, "rms_norm_eps": 1e-5, "torch_dtype": "bfloat16")" +
         extra + "}";
}

TEST(NewUser, HfConfigTypesAreStrictAndUnmodelledFieldsNoted) {
  TempDir tmp;
  const std::string cfg = tmp.sub("config.json");
  stg_test::write_file(cfg, llama_config(R"(, "tie_word_embeddings": "yes")"));
  expect_refused(
      run_stg({"--hf_config", cfg, "--output_dir", tmp.sub("o")}, tmp.path(), tmp.path()),
      "field 'tie_word_embeddings' is \"yes\": expected true or false");
  EXPECT_FALSE(fs::exists(tmp.sub("o")));

  stg_test::write_file(cfg,
                       llama_config(R"(, "attention_bias": true, "tie_word_embeddings": false)"));
  RunResult r = run_stg({"--hf_config", cfg, "--quiet", "--output_dir", tmp.sub("o")}, tmp.path(),
                        tmp.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("does not model"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("attention_bias true"), std::string::npos) << r.err;
  // The value stg models (untied embeddings) is no note.
  EXPECT_EQ(r.err.find("tie_word_embeddings"), std::string::npos) << r.err;

  // Mistral v0.3's null window and fields without effect: no note at all.
  stg_test::write_file(cfg, llama_config(R"(, "sliding_window": null, "rope_theta": 1000000.0)"));
  r = run_stg({"--hf_config", cfg, "--quiet", "--output_dir", tmp.sub("o")}, tmp.path(),
              tmp.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

}  // namespace
