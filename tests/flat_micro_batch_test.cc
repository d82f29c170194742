// Flat micro-batches (lower/flat_stage.h, emit/flat_writer.h): a run that
// lowers one micro-batch per stage and writes the others from it gives the
// bytes of the run that lowers every micro-batch, over models, pipeline
// schedules, micro-batch counts (ten and more: "mb10" sorts before "mb2")
// and the features that add nodes to a micro-batch or to the step; and a
// structure the derivation does not cover is refused, not guessed.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "stg/emit/flat_writer.h"
#include "stg/generate.h"
#include "stg/lower/flat_stage.h"
#include "stg/options.h"
#include "support/files.h"
#include "support/temp_dir.h"

namespace stg {
namespace {

namespace fs = std::filesystem;
using stg_test::read_file;
using stg_test::TempDir;

struct FlatCase {
  std::string model;
  int pp = 2;
  lower::Schedule schedule = lower::Schedule::kNone;
  int chunks = 1;
  int micro_batches = 2;
  int feature = 0;  // see apply_feature
  bool megatron = false;
};

std::string schedule_name(lower::Schedule s) {
  switch (s) {
    case lower::Schedule::kNone:
      return "none";
    case lower::Schedule::kGpipe:
      return "gpipe";
    case lower::Schedule::k1F1B:
      return "1f1b";
    case lower::Schedule::kInterleaved:
      return "interleaved";
  }
  return "?";
}

// --framework megatron (issue order): its own features.
const char* const kMegatronFeatures[] = {"plain", "recompute_selective", "recompute_full",
                                         "sim_detail"};

void apply_megatron_feature(Options& o, int feature) {
  o.framework = Framework::kMegatron;
  switch (feature) {
    case 1:
      o.activation_recompute = Recompute::kSelective;
      break;
    case 2:
      o.activation_recompute = Recompute::kFull;
      break;
    case 3:
      o.trace_detail = emit::TraceDetail::kSim;
      break;
  }
}

const char* const kFeatures[] = {"plain",           "sp2_tpsp",       "zero3", "physical_full",
                                 "physical_sim",    "zero1",          "zero2", "recompute_full",
                                 "sim_detail_only", "mixed_precision"};

void apply_feature(Options& o, int feature) {
  switch (feature) {
    case 1:
      o.degree["sp"] = 2;
      o.tpsp = true;
      break;
    case 2:
      o.zero_stage = 3;
      break;
    case 3:
      o.units = Units::kPhysical;
      break;
    case 4:
      o.units = Units::kPhysical;
      o.trace_detail = emit::TraceDetail::kSim;
      break;
    case 5:
      o.zero_stage = 1;
      break;
    case 6:
      o.zero_stage = 2;
      break;
    case 7:
      o.activation_recompute = Recompute::kFull;
      break;
    case 8:
      o.trace_detail = emit::TraceDetail::kSim;
      break;
    case 9:
      o.mixed_precision = true;
      break;
  }
}

Options options_for(const FlatCase& c, const std::string& dir) {
  Options o;
  o.model = parse_model_kind(c.model);
  o.output_dir = dir;
  o.num_stacks = 4;
  o.seq = 32;
  o.dmodel = 64;
  o.dff = 128;
  o.head = 8;
  o.dvocal = 256;
  if (c.model != "gpt") o.kvhead = 4;
  if (c.model == "moe") {
    o.experts = 4;
    o.kexperts = 2;
    o.degree["ep"] = 2;
  }
  o.degree["dp"] = 2;
  o.degree["tp"] = 2;
  o.degree["pp"] = c.pp;
  // One sample per dp rank (dp x ep under --framework megatron).
  o.micro_batch = c.megatron && c.model == "moe" ? 4 : 2;
  o.batch = *o.micro_batch * c.micro_batches;
  o.pipeline_schedule = c.schedule;
  o.virtual_stages = c.chunks;
  o.threads = 2;
  if (c.megatron)
    apply_megatron_feature(o, c.feature);
  else
    apply_feature(o, c.feature);
  return o;
}

std::map<std::string, std::string> files_of(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out[e.path().filename()] = read_file(e.path());
  return out;
}

class FlatMicroBatches : public ::testing::TestWithParam<FlatCase> {};

TEST_P(FlatMicroBatches, SameBytesAndFiguresAsLoweringEveryMicroBatch) {
  const FlatCase& c = GetParam();
  TempDir tmp;
  Options flat = options_for(c, tmp.sub("flat"));
  flat.print_gpu_vram = true;
  Options every = flat;
  every.output_dir = tmp.sub("every");
  every.flat_micro_batches = false;
  const RunSummary a = generate(flat);
  const RunSummary b = generate(every);
  EXPECT_TRUE(a.flat_micro_batches);
  EXPECT_FALSE(b.flat_micro_batches);
  EXPECT_EQ(a.nodes, b.nodes);
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_EQ(a.step, b.step);
  EXPECT_EQ(a.memory_report, b.memory_report);
  const auto left = files_of(flat.output_dir), right = files_of(every.output_dir);
  ASSERT_EQ(left.size(), right.size());
  for (const auto& [name, bytes] : left) {
    const auto it = right.find(name);
    ASSERT_NE(it, right.end()) << name;
    // Not EXPECT_EQ: a diff of two trace files helps nobody.
    EXPECT_TRUE(bytes == it->second)
        << name << " differs (" << bytes.size() << " vs " << it->second.size() << " bytes)";
  }
}

std::vector<FlatCase> cases() {
  using lower::Schedule;
  struct Plan {
    int pp;
    Schedule schedule;
    int chunks;
  };
  const Plan plans[] = {{1, Schedule::kNone, 1},  {2, Schedule::kNone, 1},
                        {2, Schedule::kGpipe, 1}, {2, Schedule::k1F1B, 1},
                        {4, Schedule::k1F1B, 1},  {2, Schedule::kInterleaved, 2}};
  std::vector<FlatCase> out;
  int feature = 0;
  for (const char* model : {"gpt", "llama", "moe"})
    for (const Plan& p : plans)
      for (int micro_batches :
           p.schedule == Schedule::kInterleaved ? std::vector{4, 12} : std::vector{3, 11}) {
        FlatCase c{model, p.pp, p.schedule, p.chunks, micro_batches, feature};
        feature = (feature + 1) % static_cast<int>(std::size(kFeatures));
        out.push_back(c);
      }
  // Issue order needs a schedule (without one the stage's order is not a
  // sequence of steps).
  int megatron_feature = 0;
  for (const char* model : {"gpt", "llama", "moe"})
    for (const Plan& p : plans)
      if (p.schedule != Schedule::kNone)
        for (int micro_batches :
             p.schedule == Schedule::kInterleaved ? std::vector{4, 12} : std::vector{3, 11}) {
          FlatCase c{model, p.pp, p.schedule, p.chunks, micro_batches, megatron_feature, true};
          megatron_feature =
              (megatron_feature + 1) % static_cast<int>(std::size(kMegatronFeatures));
          out.push_back(c);
        }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Matrix, FlatMicroBatches, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<FlatCase>& info) {
                           const FlatCase& c = info.param;
                           return std::string(c.megatron ? "megatron_" : "") + c.model + "_pp" +
                                  std::to_string(c.pp) + "_" + schedule_name(c.schedule) + "_mb" +
                                  std::to_string(c.micro_batches) + "_" +
                                  (c.megatron ? kMegatronFeatures : kFeatures)[c.feature];
                         });

TEST(FlatMicroBatches, PartOfTheRanksIsThePartOfTheWholeRun) {
  TempDir tmp;
  Options whole = options_for({"gpt", 4, lower::Schedule::k1F1B, 1, 11, 0}, tmp.sub("whole"));
  Options part = whole;
  part.output_dir = tmp.sub("part");
  part.ranks = "5-9";
  generate(whole);
  const RunSummary s = generate(part);
  EXPECT_TRUE(s.flat_micro_batches);
  const auto all = files_of(whole.output_dir);
  for (const auto& [name, bytes] : files_of(part.output_dir))
    EXPECT_TRUE(all.at(name) == bytes) << name;
}

TEST(FlatMicroBatches, NotUsedWhereTheOrderIsNotDerived) {
  TempDir tmp;
  // Issue order without a schedule: ready nodes of all micro-batches mix.
  Options o = options_for({"gpt", 2, lower::Schedule::kNone, 1, 4, 0, true}, tmp.sub("megatron"));
  EXPECT_FALSE(generate(o).flat_micro_batches);
  o = options_for({"gpt", 2, lower::Schedule::k1F1B, 1, 4, 0}, tmp.sub("json"));
  o.schema = emit::Schema::kJson;
  EXPECT_FALSE(generate(o).flat_micro_batches);
  // Two micro-batches: the check's own count, nothing to derive.
  o = options_for({"gpt", 2, lower::Schedule::k1F1B, 1, 2, 0}, tmp.sub("two"));
  EXPECT_FALSE(generate(o).flat_micro_batches);
}

// ---- the derivation's own checks, on small lowered stages

LoweredNode comp(uint64_t id, int micro_batch, std::vector<uint64_t> deps = {}) {
  LoweredNode n;
  n.id = id;
  n.kind = NodeKind::kComp;
  n.num_ops = 1;
  n.micro_batch = micro_batch;
  n.data_deps = std::move(deps);
  return n;
}

TEST(FlatStage, SegmentsIdsAndDependencies) {
  // weight-side node, two micro-batch nodes, a sum of the second.
  StageGraph one;
  one.nodes = {comp(0, -1), comp(1, 0, {0}), comp(2, 0, {1}), comp(3, -1, {2})};
  const lower::FlatStage f(one, lower::RecvTags{{{0, 0, 0, 0}}}, 3, {});
  EXPECT_EQ(f.num_nodes(), 1u + 3 * 2 + 1);
  EXPECT_EQ(f.id(1, 0), 1u);
  EXPECT_EQ(f.id(2, 2), 6u);
  EXPECT_EQ(f.id(3, 0), 7u);
  std::vector<uint64_t> deps;
  f.data_deps(2, 1, deps);
  EXPECT_EQ(deps, (std::vector<uint64_t>{3}));
  deps.clear();
  f.data_deps(3, 0, deps);  // the sum waits for every micro-batch's copy
  EXPECT_EQ(deps, (std::vector<uint64_t>{2, 4, 6}));
}

TEST(FlatStage, ScheduleCtrlDepsFollowTheStepOrder) {
  // One forward and one backward node per micro-batch on the only stage of
  // GPipe: F0 F1 B0 B1.
  StageGraph one;
  one.nodes = {comp(0, 0), comp(1, 0, {0})};
  one.nodes[0].scheduled = one.nodes[1].scheduled = true;
  one.nodes[1].backward = true;
  const lower::FlatStage f(one, lower::RecvTags{{{0, 0, 0, 0}}}, 2,
                           {lower::Schedule::kGpipe, 1, 1});
  auto ctrl = [&](uint32_t node, int mb) {
    std::vector<uint64_t> out;
    f.ctrl_deps(node, mb, out);
    return out;
  };
  // ids: F0 = 0, B0 = 1, F1 = 2, B1 = 3.
  EXPECT_TRUE(ctrl(0, 0).empty());
  EXPECT_EQ(ctrl(0, 1), (std::vector<uint64_t>{0}));  // F1 after F0
  EXPECT_EQ(ctrl(1, 0), (std::vector<uint64_t>{2}));  // B0 after F1
  EXPECT_EQ(ctrl(1, 1), (std::vector<uint64_t>{1}));  // B1 after B0
}

TEST(FlatStage, EachRunOfTheMicroBatchIsWrittenPerMicroBatchInPlace) {
  // As recomputation leaves it: the micro-batch, a sum, the micro-batch's
  // recomputed part (appended after the sums).
  StageGraph one;
  one.nodes = {comp(0, 0), comp(1, -1, {0}), comp(2, 0, {0})};
  const lower::FlatStage f(one, lower::RecvTags{{{0, 0, 0, 0}}}, 3, {});
  ASSERT_EQ(f.lists().size(), 3u);
  EXPECT_EQ(f.id(0, 2), 2u);
  EXPECT_EQ(f.id(1, 0), 3u);
  EXPECT_EQ(f.id(2, 0), 4u);
  EXPECT_EQ(f.id(2, 2), 6u);
  std::vector<uint64_t> deps;
  f.data_deps(2, 1, deps);
  EXPECT_EQ(deps, (std::vector<uint64_t>{1}));
}

TEST(FlatStage, RefusesAMicroBatchNodeReadingASum) {
  StageGraph one;
  one.nodes = {comp(0, 0), comp(1, -1, {0}), comp(2, 0, {1})};
  EXPECT_THROW(lower::FlatStage(one, lower::RecvTags{{{0, 0, 0, 0}}}, 2, {}),
               lower::FlatUnsupported);
}

TEST(FlatStageWriter, HandsOutBoundedPieces) {
  // 20,000 micro-batches of 8 nodes: megabytes in pieces near kChunk.
  StageGraph one;
  for (uint64_t i = 0; i < 8; ++i)
    one.nodes.push_back(comp(i, 0, i ? std::vector<uint64_t>{i - 1} : std::vector<uint64_t>{}));
  const lower::FlatStage f(one, lower::RecvTags{{{0, 0, 0, 0}}}, 20000, {});
  const emit::FlatStageWriter w(f, emit::TraceDetail::kSim);
  size_t pieces = 0, total = 0, largest = 0;
  w.write_rank(RankBinding{}, [&](std::string_view piece) {
    ++pieces;
    total += piece.size();
    largest = std::max(largest, piece.size());
  });
  EXPECT_GT(pieces, 2u);
  EXPECT_LT(largest, emit::FlatStageWriter::kChunk + 1024);
  EXPECT_GT(total, 160000u * 5);
}

}  // namespace
}  // namespace stg
