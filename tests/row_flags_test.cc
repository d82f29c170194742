// The component rows' flags (models/row_flag.h) from the rows' tables: every
// flag of a mixer or an MLP row is in --help and known to the command line;
// the experts row's --experts and --kexperts are listed where they always
// were; a flag that declares a dimension every decoder has (RowFlag::symbol)
// binds its symbol in every decoder (to the value given, else to its
// default), is read by a --module_csv sheet that uses the symbol, and is
// refused by the seed transformer, which has no such dimension.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "stg/models/mixers/mixer_row.h"
#include "stg/models/mlps/mlp_row.h"
#include "stg/models/row_flag.h"
#include "stg/models/workload.h"
#include "stg/options.h"
#include "stg/workloads/build_workload.h"
#include "support/refused.h"
#include "support/run_stg.h"
#include "support/temp_dir.h"
#include "support/tiny_model.h"

namespace {

using stg::models::component_row_flags;
using stg::models::RowFlag;
using stg_test::run_stg;
using stg_test::TempDir;

// The flags that declare a dimension of every decoder.
std::vector<const RowFlag*> decoder_dimension_flags() {
  std::vector<const RowFlag*> flags;
  for (const RowFlag* f : component_row_flags())
    if (f->symbol) flags.push_back(f);
  return flags;
}

TEST(RowFlags, EveryRowsFlagsAreInTheTable) {
  size_t count = 0;
  for (const stg::models::MixerRow* row : stg::models::mixer_rows()) count += row->flags.size();
  for (const stg::models::MlpRow* row : stg::models::mlp_rows()) count += row->flags.size();
  EXPECT_EQ(component_row_flags().size(), count);
  // The experts row declares its counts: --experts and --kexperts.
  std::vector<std::string> experts_flags;
  for (const RowFlag& f : stg::models::experts_row().flags) experts_flags.push_back(f.flag);
  EXPECT_NE(std::find(experts_flags.begin(), experts_flags.end(), "--experts"),
            experts_flags.end());
  EXPECT_NE(std::find(experts_flags.begin(), experts_flags.end(), "--kexperts"),
            experts_flags.end());
}

TEST(RowFlags, EveryFlagIsInTheHelpInItsPlace) {
  TempDir tmp;
  const stg_test::RunResult help = run_stg({"--help"}, tmp.path(), tmp.path());
  ASSERT_EQ(help.status, 0);
  for (const RowFlag* f : component_row_flags()) {
    EXPECT_NE(help.out.find(std::string(f->flag) + " INT"), std::string::npos) << f->flag;
    EXPECT_NE(help.out.find(f->help), std::string::npos) << f->flag;
  }
  // The experts' counts follow --num_stacks, as they did as the generator's
  // own flags, then the attention's --head_dim.
  const size_t stacks = help.out.find("--num_stacks INT"), experts = help.out.find("--experts INT"),
               kexperts = help.out.find("--kexperts INT"),
               head_dim = help.out.find("--head_dim INT");
  EXPECT_LT(stacks, experts);
  EXPECT_LT(experts, kexperts);
  EXPECT_LT(kexperts, head_dim);
  EXPECT_NE(help.out.find("experts per MoE layer [default: refused / 8]"), std::string::npos);
  EXPECT_NE(help.out.find("experts chosen per token [default: refused / 2]"), std::string::npos);
}

// A small llama (16 heads) with `flag` set to `value`.
stg::Options small_llama(const char* flag, int64_t value) {
  stg::Options o;
  o.model = "llama";
  o.num_stacks = 2;
  o.dmodel = 64;
  o.dff = 64;
  o.head = 16;
  o.seq = 32;
  o.batch = 2;
  if (flag) o.component_flags[flag] = value;
  return o;
}

TEST(RowFlags, EveryDecoderBindsTheDimensionsTheRowsDeclare) {
  const std::vector<const RowFlag*> flags = decoder_dimension_flags();
  ASSERT_GE(flags.size(), 3u);  // --kvhead, --experts, --kexperts
  for (const RowFlag* f : flags) {
    SCOPED_TRACE(f->flag);
    EXPECT_GE(f->decoder_default, 1);
    // Unset: the row's default; given: the value (2 divides the 16 heads).
    const stg::models::Workload unset = stg::workloads::build_workload(small_llama(nullptr, 0));
    EXPECT_EQ(unset.values.by_symbol.at(f->symbol), f->decoder_default);
    const stg::models::Workload given = stg::workloads::build_workload(small_llama(f->flag, 2));
    EXPECT_EQ(given.values.by_symbol.at(f->symbol), 2);
    EXPECT_EQ(given.values.flag_of.at(f->symbol), f->flag);
  }
}

TEST(RowFlags, TheSeedTransformerRefusesTheDecodersDimensions) {
  TempDir tmp;
  for (const RowFlag* f : decoder_dimension_flags()) {
    SCOPED_TRACE(f->flag);
    const std::vector<std::string> args =
        stg_test::tiny_transformer({"--output_dir", (tmp.path() / "out").string(), f->flag, "2"});
    stg_test::expect_refused(run_stg(args, tmp.path(), tmp.path()),
                             std::string(f->flag) + " does not apply to --model_type transformer");
  }
}

// tests/data/csv/mlp.csv with the symbol `symbol` as its FFN width.
std::string mlp_sheet(const std::string& symbol) {
  std::ifstream in(std::string(STG_TEST_DATA) + "/csv/mlp.csv");
  std::string sheet((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (size_t at = sheet.find("Dff"); at != std::string::npos; at = sheet.find("Dff", at))
    sheet.replace(at, 3, symbol);
  return sheet;
}

TEST(RowFlags, ModuleCsvSheetsReadTheDecodersDimensions) {
  TempDir tmp;
  for (const RowFlag* f : decoder_dimension_flags()) {
    SCOPED_TRACE(f->flag);
    const std::string sheet = (tmp.path() / (std::string(f->symbol) + ".csv")).string();
    std::ofstream(sheet) << mlp_sheet(f->symbol);
    const std::vector<std::string> args = {"--module_csv",
                                           sheet,
                                           "--dmodel",
                                           "64",
                                           "--batch",
                                           "4",
                                           "--seq",
                                           "16",
                                           "--quiet",
                                           "--output_dir",
                                           (tmp.path() / "out").string()};
    stg_test::expect_refused(run_stg(args, tmp.path(), tmp.path()),
                             "uses " + std::string(f->symbol) + ": give " + f->flag);
    std::vector<std::string> with_flag = args;
    with_flag.insert(with_flag.end(), {f->flag, "2"});
    const stg_test::RunResult run = run_stg(with_flag, tmp.path(), tmp.path());
    EXPECT_EQ(run.status, 0) << run.err;
  }
}

}  // namespace
