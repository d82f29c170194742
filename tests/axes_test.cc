// The table of parallel axes (mesh/axes.h): every row is a flag the command
// line accepts and checks, the rank numbering it gives is the one the
// comm-group file has always had, and each model takes its axes and their
// symbols from it.
#include "stg/mesh/axes.h"

#include <string>

#include "gtest/gtest.h"
#include "stg/models/decoder.h"
#include "stg/models/mlps/mlp_row.h"
#include "stg/models/parts/attention.h"
#include "stg/models/transformer.h"
#include "stg/report/step_figures.h"
#include "support/files.h"
#include "support/run_stg.h"
#include "support/temp_dir.h"

namespace {

using stg_test::read_file;
using stg_test::run_stg;
using stg_test::RunResult;
using stg_test::TempDir;

const std::vector<std::string> kSmall = {"--num_stacks", "2",  "--dmodel", "64", "--dff",   "128",
                                         "--head",       "4",  "--seq",    "16", "--batch", "4",
                                         "--din",        "64", "--dout",   "64", "--quiet"};

// A degree of 0 reaches the check of every row's degree (not "unknown
// flag"), under the flag's own name and its alias.
TEST(AxesTable, EveryRowIsAFlagWithItsCheck) {
  TempDir tmp;
  for (const stg::mesh::AxisSpec& a : stg::mesh::kAxes) {
    for (const std::string flag : {a.flag, a.alias, a.spelling}) {
      if (flag.empty()) continue;
      const RunResult r = run_stg({flag, "0", "--output_dir", tmp.sub("o")}, tmp.path());
      EXPECT_EQ(r.status, 2) << flag;
      // An alias is the flag; another spelling is named as given.
      const std::string named = flag == a.spelling ? flag : std::string(a.flag);
      EXPECT_EQ(r.err,
                "stg: error: " + named + " 0 is not a valid degree: use a whole number >= 1\n")
          << flag;
    }
  }
}

TEST(AxesTable, HelpListsEveryFlagInTheParallelismGroup) {
  TempDir tmp;
  const RunResult r = run_stg({"--help"}, tmp.path());
  ASSERT_EQ(r.status, 0);
  const size_t group = r.out.find("Parallelism:");
  ASSERT_NE(group, std::string::npos);
  for (const stg::mesh::AxisSpec& a : stg::mesh::kAxes) {
    const std::string alias = *a.alias ? std::string(",") + a.alias : "";
    const size_t at = r.out.find("\n  " + std::string(a.flag) + alias + " INT ");
    EXPECT_NE(at, std::string::npos) << a.flag;
    EXPECT_GT(at, group) << a.flag;
    if (!*a.spelling) continue;
    const size_t other = r.out.find("\n  " + std::string(a.spelling) + " INT ");
    EXPECT_NE(other, std::string::npos) << a.spelling;
    EXPECT_GT(other, group) << a.spelling;
  }
}

// Rank numbering from the table: dp fastest, then tp, sp (singletons at
// degree 1), and the stages slowest. Written out by hand for dp = tp = pp = 2.
TEST(AxesTable, RankOrderGivesTheKnownCommGroups) {
  TempDir tmp;
  std::vector<std::string> args = kSmall;
  args.insert(args.end(), {"--dp", "2", "--tp", "2", "--pp", "2", "--output_dir", tmp.sub("o")});
  const RunResult r = run_stg(args, tmp.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_file(tmp.sub("o") + "/workload.json"),
            "{\"1\": [0, 1], \"2\": [2, 3], \"3\": [4, 5], \"4\": [6, 7], "
            "\"5\": [0, 2], \"6\": [1, 3], \"7\": [4, 6], \"8\": [5, 7], "
            "\"9\": [0], \"10\": [2], \"11\": [1], \"12\": [3], "
            "\"13\": [4], \"14\": [6], \"15\": [5], \"16\": [7]}");
}

// moe has ep as a rank axis of its own, after dp, tp and sp.
TEST(AxesTable, ExpertAxisRanksAfterSequence) {
  TempDir tmp;
  const RunResult r = run_stg(
      {"--model_type", "moe", "--dp",    "2",   "--ep",     "2",  "--num_stacks", "1",
       "--dmodel",     "64",  "--dff",   "128", "--head",   "4",  "--kvhead",     "2",
       "--seq",        "16",  "--batch", "4",   "--dvocal", "64", "--quiet",      "--output_dir",
       tmp.sub("o")},
      tmp.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_file(tmp.sub("o") + "/workload.json"),
            "{\"1\": [0, 1], \"2\": [2, 3], \"3\": [0], \"4\": [2], \"5\": [1], \"6\": [3], "
            "\"7\": [0], \"8\": [2], \"9\": [1], \"10\": [3], \"11\": [0, 2], \"12\": [1, 3]}");
}

std::string axes_of(const stg::models::Model& m) {
  std::string out;
  for (const stg::models::ModelAxis& a : m.axes) out += a.name + ":" + a.symbol + " ";
  return out;
}

// A MoE block with grouped-query attention.
stg::models::BlockSpec gqa_moe_block() {
  stg::models::BlockSpec b;
  b.mlp = &stg::models::experts_row();
  b.mixer_options = stg::models::AttentionOptions{.grouped = true}.list();
  return b;
}

// --sp is the symbol sp in the seed's transformer and cp in the later models.
TEST(AxesTable, ModelsSpellTheirAxesFromTheTable) {
  using namespace stg::models;
  const Model gpt = build_decoder({.spec = uniform_decoder(1, BlockSpec{})});
  const Model moe =
      build_decoder({.spec = uniform_decoder(1, gqa_moe_block()), .experts_per_rank = 1});
  EXPECT_EQ(axes_of(build_transformer({.num_stacks = 1})), "dp:dp tp:tp sp:sp ");
  EXPECT_EQ(axes_of(gpt), "dp:dp tp:tp sp:cp ");
  EXPECT_EQ(axes_of(moe), "dp:dp tp:tp sp:cp ep:ep ");
  EXPECT_EQ(build_transformer({.num_stacks = 1}).degree_symbols,
            (std::vector<std::string>{"dp", "tp", "sp"}));
  EXPECT_EQ(gpt.degree_symbols, (std::vector<std::string>{"dp", "tp", "cp", "sp", "ep"}));
}

TEST(AxesTable, StepFiguresListLabelsInRankOrder) {
  const auto& names = stg::report::kAxisNames;
  EXPECT_EQ(
      std::vector<std::string>(names.begin(), names.end()),
      (std::vector<std::string>{"dp", "tp", "cp", "ep", "pp", "embedding", "dualpipe", "other"}));
}

}  // namespace
