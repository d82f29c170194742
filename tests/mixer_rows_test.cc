// The mixer row registry (models/mixers/mixer_row.h): every row's flags are
// registered in the command line and its --help, the default block's mixer
// is the multi-head attention row, each row says its serving state, and the
// attention rows' activation terms are Korthikanti et al.'s (2022, §4.1)
// counts, written out here.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "stg/models/blocks/block_spec.h"
#include "stg/models/mixers/mixer_row.h"
#include "stg/models/parts/attention.h"
#include "support/run_stg.h"
#include "support/temp_dir.h"

namespace {

using stg::models::mixer_rows;
using stg::models::MixerRow;
using stg_test::run_stg;
using stg_test::TempDir;

TEST(MixerRows, EveryRowIsComplete) {
  std::set<std::string> names;
  for (const MixerRow* row : mixer_rows()) {
    EXPECT_TRUE(names.insert(row->name).second) << row->name;
    EXPECT_NE(row->build, nullptr) << row->name;
    EXPECT_NE(row->activations, nullptr) << row->name;
    EXPECT_NE(row->check, nullptr) << row->name;
    // A row of flags places itself, but for multi-head latent attention,
    // whose flags are its dimensions: the families put it on their blocks.
    if (!row->flags.empty() && row != &stg::models::mla_row())
      EXPECT_NE(row->place, nullptr) << row->name;
  }
  EXPECT_EQ(stg::models::BlockSpec{}.mixer, &stg::models::mha_row());
  EXPECT_EQ(stg::models::mha_row().serving, stg::models::ServingState::kKvCache);
  EXPECT_EQ(stg::models::mla_row().serving, stg::models::ServingState::kLatentCache);
}

TEST(MixerRows, EveryRowFlagIsInTheHelpAndAccepted) {
  TempDir tmp;
  const stg_test::RunResult help = run_stg({"--help"}, tmp.path(), tmp.path());
  ASSERT_EQ(help.status, 0);
  int flags = 0;
  for (const MixerRow* row : mixer_rows())
    for (const stg::models::RowFlag& f : row->flags) {
      ++flags;
      EXPECT_NE(help.out.find(std::string(f.flag) + " INT"), std::string::npos) << f.flag;
      EXPECT_NE(help.out.find(f.help), std::string::npos) << f.flag;
      // The command line knows the flag: a run with it is not refused as unknown.
      const stg_test::RunResult run = run_stg({"--model_type",
                                               "llama",
                                               "--num_stacks",
                                               "2",
                                               "--dmodel",
                                               "64",
                                               "--dff",
                                               "64",
                                               "--head",
                                               "4",
                                               "--kvhead",
                                               "2",
                                               "--seq",
                                               "32",
                                               "--batch",
                                               "2",
                                               "--quiet",
                                               "--output_dir",
                                               (tmp.path() / "out").string(),
                                               f.flag,
                                               "1"},
                                              tmp.path(), tmp.path());
      EXPECT_EQ(run.err.find("unknown flag"), std::string::npos) << f.flag << ": " << run.err;
    }
  EXPECT_GE(flags, 10);  // the window's 2 and Mamba-2's 8
}

// Q, K and V of a grouped-query block and the attention output, 2 bytes per
// element: 2sbh (Q) + 4sbh·KVHead/Head (K, V) + 2sbh (output).
TEST(MixerRows, AttentionActivationTermsAreKorthikantis) {
  stg::expr::Values v;
  v.by_symbol = {{"Dmodel", 4096}, {"Head", 32}, {"KVHead", 8}};
  const double s = 2048, b = 2, h = 4096;
  const stg::models::AttentionOptions gqa{.grouped = true};
  const stg::report::ActivationBytes a = stg::models::mha_row().activations(gqa.list(), v, s, b);
  EXPECT_DOUBLE_EQ(a.split, 2 * s * b * h + 4 * s * b * h * 8 / 32 + 2 * s * b * h);
  EXPECT_EQ(a.whole, 0);
  // Multi-head latent attention (DeepSeek-V3's dims): the latents, normed and
  // not, whole on every tp rank; Q, K of nope + rope dims, V and the output.
  v.by_symbol = {{"Head", 128},      {"QLoraRank", 1536}, {"KvLoraRank", 512},
                 {"QkNopeDim", 128}, {"QkRopeDim", 64},   {"VHeadDim", 128}};
  const stg::report::ActivationBytes m = stg::models::mla_row().activations({}, v, s, b);
  EXPECT_DOUBLE_EQ(m.whole, 2 * s * b * (1536 + 1536 + 512 + 64 + 512));
  EXPECT_DOUBLE_EQ(m.split, 2 * s * b * 128 * (192 + 192 + 128 + 128));
}

}  // namespace
