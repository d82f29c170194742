// `stg plans`: every plan it lists has the figures of stg::plan() (the run
// lowered, the memory report), every plan it leaves out is refused by
// stg::plan(), the bubble is the schedule's, and the command's flags.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>

#include "gtest/gtest.h"
#include "stg/generate.h"
#include "stg/lower/schedule_timeline.h"
#include "stg/sweep/sweep.h"
#include "support/run_stg.h"
#include "support/small_dims.h"
#include "support/temp_dir.h"

namespace {

using stg::Options;
using stg::sweep::PlanRow;

// A small model of each kind: reference and Megatron-LM, dense and MoE.
Options small(const std::string& type, const std::string& framework = "reference") {
  Options o;
  o.model = type;
  o.framework = framework;
  o.num_stacks = 4;
  o.dmodel = 256;
  o.dff = 512;
  o.head = 8;
  o.component_flags["--kvhead"] = 4;
  o.dvocal = 1024;
  o.seq = 256;
  o.batch = 16;
  if (type == "moe") o.component_flags["--experts"] = 8;
  return o;
}

// The plan of `row` as generate's options.
Options options_of(const Options& base, const PlanRow& row) {
  Options o = base;
  o.degree = row.degree;
  o.virtual_stages = row.virtual_stages;
  o.micro_batch = row.micro_batch;
  o.zero_stage = row.zero_stage;
  o.units = stg::Units::kPhysical;
  o.pipeline_schedule = row.virtual_stages > 1 ? stg::lower::Schedule::named("interleaved")
                                               : stg::lower::Schedule::named("1f1b");
  return o;
}

// Plans spread over the sweep (`samples` of them) against the lowered run.
void expect_plans_match_runs(const Options& base, int64_t gpus, size_t samples,
                             const std::map<std::string, int64_t>& fixed = {}) {
  const stg::sweep::SweepResult sweep = stg::sweep::sweep(base, {gpus, fixed, 1});
  ASSERT_GT(sweep.plans.size(), samples);
  const size_t stride = sweep.plans.size() / samples;
  for (size_t i = 0; i < sweep.plans.size(); i += stride) {
    const PlanRow& row = sweep.plans[i];
    SCOPED_TRACE(::testing::Message()
                 << "dp " << row.degree["dp"] << " tp " << row.degree["tp"] << " pp "
                 << row.degree["pp"] << " cp " << row.degree["sp"] << " ep " << row.degree["ep"]
                 << " vp " << row.virtual_stages << " micro_batch " << row.micro_batch << " zero "
                 << row.zero_stage);
    const stg::PlanSummary run = stg::plan(options_of(base, row));
    double memory = 0;
    for (const stg::report::StageMemory& m : run.memory) memory = std::max(memory, m.total());
    EXPECT_NEAR(row.memory, memory, memory * 1e-12);
    EXPECT_EQ(std::llround(row.flops), run.step.flops.max);
    std::map<std::string, int64_t> axes;
    for (const auto& a : run.step.axes) axes[a.axis] = a.bytes.max;
    for (const auto& [axis, bytes] : row.bytes) EXPECT_EQ(std::llround(bytes), axes[axis]) << axis;
    for (const auto& [axis, bytes] : axes)
      if (bytes > 0) EXPECT_TRUE(row.bytes.count(axis)) << axis;
    EXPECT_EQ(row.micro_batches, run.micro_batches);
  }
}

TEST(Plans, LlamaPlansHaveTheFiguresOfTheirRuns) { expect_plans_match_runs(small("llama"), 8, 24); }

TEST(Plans, MegatronGptPlansHaveTheFiguresOfTheirRuns) {
  Options o = small("gpt", "megatron");
  o.num_stacks = 5;
  expect_plans_match_runs(o, 8, 24);
}

TEST(Plans, MegatronMoePlansHaveTheFiguresOfTheirRuns) {
  expect_plans_match_runs(small("moe", "megatron"), 4, 12);
}

TEST(Plans, RingAttentionWithRecomputationHasTheFiguresOfItsRuns) {
  Options o = small("llama");
  o.num_stacks = 6;
  o.batch = 8;
  o.cp_algo = "ring";
  o.activation_recompute = stg::Recompute::kFull;
  o.mixed_precision = true;
  expect_plans_match_runs(o, 8, 20);
}

// DeepSeek with two multi-token prediction modules (blocks after the last,
// on the last stage, with their own activations and output layers).
TEST(Plans, MultiTokenPredictionPlansHaveTheFiguresOfTheirRuns) {
  for (const char* framework : {"reference", "megatron"}) {
    SCOPED_TRACE(framework);
    Options o = small("deepseek", framework);
    o.component_flags.erase("--kvhead");
    o.num_stacks = 2;
    o.dmodel = 128;
    o.dff = 256;
    o.head = 4;
    o.dvocal = 512;
    o.seq = 64;
    o.batch = 8;
    o.dense_blocks = 1;
    stg_test::set_small_mla_moe(o, /*experts=*/4, /*dff_expert=*/64);
    o.mtp_depth = 2;
    expect_plans_match_runs(o, 2, 7);
  }
}

// More pipeline stages than blocks (up to blocks + 2): the embedding and
// the output layer on stages of their own.
TEST(Plans, PlansWithMoreStagesThanBlocksHaveTheFiguresOfTheirRuns) {
  Options llama = small("llama");
  llama.num_stacks = 2;
  expect_plans_match_runs(llama, 4, 3, {{"pp", 4}});
  Options gpt = small("gpt", "megatron");
  gpt.num_stacks = 2;
  gpt.batch = 6;
  expect_plans_match_runs(gpt, 3, 2, {{"pp", 3}});
}

// Every degree split, micro-batch, virtual stage count and ZeRO stage the
// sweep leaves out is one stg::plan() refuses.
TEST(Plans, PlansLeftOutAreRefused) {
  const Options base = small("llama");
  const stg::sweep::SweepResult sweep = stg::sweep::sweep(base, {8, {}, 1});
  std::set<std::tuple<int64_t, int64_t, int64_t, int64_t, int, int64_t, int>> listed;
  for (const PlanRow& r : sweep.plans)
    listed.insert({r.degree["dp"], r.degree["tp"], r.degree["pp"], r.degree["sp"], r.virtual_stages,
                   r.micro_batch, r.zero_stage});
  int refused = 0;
  for (int64_t tp : {1, 2, 4, 8})
    for (int64_t cp : {1, 2, 4, 8})
      for (int64_t pp : {1, 2, 4, 8}) {
        if (tp * cp * pp > 8) continue;
        const int64_t dp = 8 / (tp * cp * pp);
        for (int64_t m : {1, 2, 4, 8, 16})
          for (int v = 1; v <= 4; ++v)
            for (int zero = 0; zero <= 3; ++zero) {
              if ((v > 1 && pp == 1) || (zero > 0 && dp == 1) || (v > 1 && pp * v > 4)) continue;
              if (listed.count({dp, tp, pp, cp, v, m, zero})) continue;
              PlanRow row;
              row.degree["dp"] = dp, row.degree["tp"] = tp, row.degree["pp"] = pp;
              row.degree["sp"] = cp, row.virtual_stages = v;
              row.micro_batch = m, row.zero_stage = zero;
              EXPECT_THROW(stg::plan(options_of(base, row)), stg::UsageError)
                  << "dp " << dp << " tp " << tp << " pp " << pp << " cp " << cp << " vp " << v
                  << " micro_batch " << m << " zero " << zero;
              ++refused;
            }
      }
  EXPECT_GT(refused, 10);
}

// The bubble is the most idle stage's share of the makespan, as the
// schedule's own timeline (stg inspect --schedule) measures it, and the
// textbook (p - 1) / (v m + p - 1).
TEST(Plans, BubbleIsTheSchedules) {
  for (int pp = 2; pp <= 6; ++pp)
    for (int m = 1; m <= 12; ++m)
      for (int v = 1; v <= 3; ++v) {
        if (v > 1 && m % pp != 0) continue;
        const stg::lower::Timeline t =
            stg::lower::run_schedule(v > 1 ? stg::lower::Schedule::named("interleaved")
                                           : stg::lower::Schedule::named("1f1b"),
                                     pp, m, v, {});
        const double measured = *std::max_element(t.idle.begin(), t.idle.end()) / t.makespan;
        EXPECT_DOUBLE_EQ(stg::sweep::bubble_fraction(pp, m, v), measured)
            << pp << " " << m << " " << v;
        EXPECT_DOUBLE_EQ(stg::sweep::bubble_fraction(pp, m, v), (pp - 1.0) / (v * m + pp - 1.0));
      }
}

// The pipeline traffic of a plan from the textbook: each stage boundary
// carries, per micro-batch and direction, micro_batch/dp sequences of seq x
// dmodel bf16 values split over tp (sequence parallel); a middle stage
// sends forward and backward.
TEST(Plans, PipelineBytesFollowTheTextbook) {
  const Options base = small("llama");
  stg::sweep::SweepOptions s{8, {{"dp", 2}, {"tp", 1}, {"pp", 4}, {"micro_batch", 4}}, 1};
  const stg::sweep::SweepResult sweep = stg::sweep::sweep(base, s);
  ASSERT_FALSE(sweep.plans.empty());
  for (const PlanRow& r : sweep.plans) {
    const double per_micro_batch = (4 / 2) * 256 * 256 * 2;
    const double micro_batches = 16 / 4;
    EXPECT_EQ(r.bytes.at("pp"), 2 * micro_batches * per_micro_batch);
  }
}

TEST(PlansCli, TableCsvSortAndFilter) {
  stg_test::TempDir tmp;
  const std::vector<std::string> model = {
      "plans", "--model_type", "llama", "--num_stacks", "4", "--dmodel", "256",  "--dff",
      "512",   "--head",       "8",     "--kvhead",     "4", "--dvocal", "1024", "--seq",
      "256",   "--batch",      "16",    "--gpus",       "8"};
  auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = model;
    args.insert(args.end(), extra.begin(), extra.end());
    return stg_test::run_stg(args, tmp.path());
  };
  stg_test::RunResult csv = run({"--csv", "--sort", "comm_gib", "--fits_gb", "0.05"});
  ASSERT_EQ(csv.status, 0) << csv.err;
  std::istringstream lines(csv.out);
  std::string header, line;
  std::getline(lines, header);
  EXPECT_EQ(header.rfind("dp,tp,pp,cp,ep,virtual_stages,micro_batch,zero_stage,", 0), 0u);
  std::vector<std::string> names;
  std::istringstream h(header);
  for (std::string name; std::getline(h, name, ',');) names.push_back(name);
  const size_t memory = std::find(names.begin(), names.end(), "memory_gib") - names.begin();
  const size_t comm = std::find(names.begin(), names.end(), "comm_gib") - names.begin();
  ASSERT_LT(comm, names.size());
  int rows = 0;
  double previous = -1;
  while (std::getline(lines, line)) {
    std::vector<std::string> cells;
    std::istringstream c(line);
    for (std::string cell; std::getline(c, cell, ',');) cells.push_back(cell);
    ASSERT_EQ(cells.size(), names.size());
    EXPECT_LE(std::stod(cells[memory]), 0.05);
    EXPECT_GE(std::stod(cells[comm]), previous);
    previous = std::stod(cells[comm]);
    ++rows;
  }
  EXPECT_GT(rows, 0);
  const stg_test::RunResult all = run({"--csv"});
  EXPECT_GT(std::count(all.out.begin(), all.out.end(), '\n'), rows + 1);

  const stg_test::RunResult table = run({"--tp", "2", "--top", "3"});
  ASSERT_EQ(table.status, 0) << table.err;
  EXPECT_EQ(std::count(table.out.begin(), table.out.end(), '\n'), 5);  // header, 3, summary
  EXPECT_NE(table.out.find("(3 printed;"), std::string::npos) << table.out;
}

TEST(PlansCli, BadInputIsOneLineExitTwo) {
  stg_test::TempDir tmp;
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"plans", "--model", "llama3-8b"}, "stg plans: error: --gpus is required"},
      {{"plans", "--model", "llama3-8b", "--gpus", "0"}, "stg plans: error: --gpus 0"},
      {{"plans", "--model", "llama3-8b", "--gpus", "8", "--sort", "speed"},
       "stg plans: error: --sort 'speed' is not a column"},
      {{"plans", "--model", "llama3-8b", "--gpus", "8", "--fits_gb", "-1"},
       "stg plans: error: --fits_gb"},
      {{"plans", "--model_type", "transformer", "--gpus", "8"},
       "stg plans: error: stg plans evaluates decoder models"},
      {{"plans", "--model", "llama3-8b", "--gpus", "8", "--pipeline_schedule", "gpipe"},
       "stg plans: error: --pipeline_schedule is chosen by stg plans"},
      {{"plans", "--model", "llama3-9b", "--gpus", "8"}, "stg plans: error: --model 'llama3-9b'"},
      {{"plans", "--model", "llama3-8b", "--gpus", "8", "--pp_balance", "cost"},
       "stg plans: error: --pp_balance cost is not evaluated by stg plans"},
  };
  for (const auto& [args, start] : cases) {
    const stg_test::RunResult r = stg_test::run_stg(args, tmp.path());
    EXPECT_EQ(r.status, 2) << args.back();
    EXPECT_EQ(r.err.rfind(start, 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

}  // namespace
