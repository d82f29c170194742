// The one lowering path (lower/flat_stage.h, emit/flat_writer.h): a run
// lowers one micro-batch per stage and writes the others from it; its bytes
// are those of the full expansion (support/full_expansion.h: every
// micro-batch lowered, libprotobuf writers), over models, both node orders,
// pipeline schedules, micro-batch counts and the features that add nodes to
// a micro-batch or to the step; and a structure the derivation does not
// cover is refused, not guessed.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "stg/emit/flat_writer.h"
#include "stg/generate.h"
#include "stg/lower/expand_stage.h"
#include "stg/lower/flat_stage.h"
#include "stg/lower/schedule_row.h"
#include "stg/mesh/rank_layout.h"
#include "stg/models/families/registry.h"
#include "stg/options.h"
#include "stg/workloads/build_workload.h"
#include "support/files.h"
#include "support/full_expansion.h"
#include "support/temp_dir.h"

namespace stg {
namespace {

namespace fs = std::filesystem;
using stg_test::read_file;
using stg_test::TempDir;

struct FlatCase {
  std::string model;
  int pp = 2;
  lower::Schedule schedule = lower::Schedule::named("none");
  int chunks = 1;
  int micro_batches = 2;
  int feature = 0;  // see apply_feature
  bool megatron = false;
};

// The schedule's name as a test name ("zb_h1").
std::string schedule_name(lower::Schedule s) {
  std::string name = s->name();
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

// --framework megatron (issue order): its own features.
const char* const kMegatronFeatures[] = {"plain", "recompute_selective", "recompute_full",
                                         "sim_detail"};

void apply_megatron_feature(Options& o, int feature) {
  o.framework = "megatron";
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
  o.model = stg::models::find_family(c.model).name;
  o.output_dir = dir;
  o.num_stacks = 4;
  o.seq = 32;
  o.dmodel = 64;
  o.dff = 128;
  o.head = 8;
  o.dvocal = 256;
  if (c.model != "gpt") o.component_flags["--kvhead"] = 4;
  if (c.model == "moe") {
    o.component_flags["--experts"] = 4;
    o.component_flags["--kexperts"] = 2;
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

// generate() (one micro-batch lowered per stage, the others derived) against
// the full expansion (every micro-batch in the graph and lowered, written
// with libprotobuf): the same files byte for byte and the same figures.
void expect_same_as_full_expansion(const Options& o) {
  const RunSummary run = generate(o);
  const stg_test::FullExpansion full = stg_test::full_expansion(o);
  EXPECT_EQ(run.step, full.step);
  const auto files = files_of(o.output_dir);
  ASSERT_EQ(files.size(), full.files.size());
  int64_t bytes = 0;
  for (const auto& [name, content] : files) {
    const auto it = full.files.find(name);
    ASSERT_NE(it, full.files.end()) << name;
    bytes += static_cast<int64_t>(content.size());
    // Not EXPECT_EQ: a diff of two trace files helps nobody.
    EXPECT_TRUE(content == it->second)
        << name << " differs (" << content.size() << " vs " << it->second.size() << " bytes)";
  }
  EXPECT_EQ(run.bytes, bytes);
}

TEST_P(FlatMicroBatches, SameBytesAndFiguresAsTheFullExpansion) {
  TempDir tmp;
  expect_same_as_full_expansion(options_for(GetParam(), tmp.sub("run")));
}

std::vector<FlatCase> cases() {
  using lower::Schedule;
  struct Plan {
    int pp;
    Schedule schedule;
    int chunks;
  };
  const Plan plans[] = {{1, Schedule::named("none"), 1},    {2, Schedule::named("none"), 1},
                        {2, Schedule::named("gpipe"), 1},   {2, Schedule::named("1f1b"), 1},
                        {4, Schedule::named("1f1b"), 1},    {2, Schedule::named("interleaved"), 2},
                        {2, Schedule::named("zb-h1"), 1},   {2, Schedule::named("dualpipev"), 1},
                        {2, Schedule::named("dualpipe"), 1}};
  // One and two micro-batches, few, and more than ten ("mb10" sorts before
  // "mb2").
  // W apart (zb-h1, dualpipev, dualpipe): fewer; DualPipeV needs 2pp
  // micro-batches, DualPipe an even number of them (two per replica).
  auto counts = [](const Plan& p) {
    if (p.schedule == Schedule::named("zb-h1")) return std::vector{3, 11};
    if (p.schedule == Schedule::named("dualpipev")) return std::vector{4, 5};
    if (p.schedule == Schedule::named("dualpipe")) return std::vector{4, 6};
    return p.schedule == Schedule::named("interleaved") ? std::vector{2, 4, 12}
                                                        : std::vector{1, 2, 3, 11};
  };
  std::vector<FlatCase> out;
  int feature = 0;
  for (const char* model : {"gpt", "llama", "moe"})
    for (const Plan& p : plans)
      for (int micro_batches : counts(p)) {
        FlatCase c{model, p.pp, p.schedule, p.chunks, micro_batches, feature};
        feature = (feature + 1) % static_cast<int>(std::size(kFeatures));
        out.push_back(c);
      }
  // Issue order, with and without a schedule (without one, each micro-batch
  // runs whole before the next: lower/flat_stage.h).
  int megatron_feature = 0;
  for (const char* model : {"gpt", "llama", "moe"})
    for (const Plan& p : plans)
      for (int micro_batches : counts(p)) {
        FlatCase c{model, p.pp, p.schedule, p.chunks, micro_batches, megatron_feature, true};
        megatron_feature = (megatron_feature + 1) % static_cast<int>(std::size(kMegatronFeatures));
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

TEST(FlatMicroBatches, TheSeedModelAndTheOtherFormats) {
  TempDir tmp;
  Options o;
  o.output_dir = tmp.sub("seed");
  o.degree["dp"] = o.degree["tp"] = o.degree["pp"] = 2;
  o.pipeline_schedule = lower::Schedule::named("1f1b");
  expect_same_as_full_expansion(o);
  for (const emit::Schema schema : {emit::Schema::kV001, emit::Schema::kJson}) {
    Options f = options_for({"llama", 2, lower::Schedule::named("1f1b"), 1, 3, 0, true},
                            tmp.sub(schema == emit::Schema::kJson ? "json" : "v001"));
    f.schema = schema;
    expect_same_as_full_expansion(f);
  }
}

TEST(FlatMicroBatches, PartOfTheRanksIsThePartOfTheWholeRun) {
  TempDir tmp;
  Options whole =
      options_for({"gpt", 4, lower::Schedule::named("1f1b"), 1, 11, 0}, tmp.sub("whole"));
  Options part = whole;
  part.output_dir = tmp.sub("part");
  part.ranks = "5-9";
  generate(whole);
  generate(part);
  const auto all = files_of(whole.output_dir);
  for (const auto& [name, bytes] : files_of(part.output_dir))
    EXPECT_TRUE(all.at(name) == bytes) << name;
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
  one.nodes[1].phase = graph::Phase::kBackwardInput;
  const lower::FlatStage f(one, lower::RecvTags{{{0, 0, 0, 0}}}, 2,
                           {lower::Schedule::named("gpipe"), 1});
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

// As a stage that holds only Megatron-LM's embedding leaves it (issue 30
// point 6): a micro-batch node, the gradient sum and update written once,
// then a second run of the micro-batch (its SEND). In issue order every copy
// has an id of its own, 0 .. n-1.
TEST(FlatStage, IssueOrderGivesEveryCopyItsOwnId) {
  StageGraph one;
  one.nodes = {comp(0, 0), comp(1, -1, {0}), comp(2, -1, {1}), comp(3, 0)};
  for (const lower::NodeOrder order : {lower::NodeOrder::kReference, lower::NodeOrder::kIssue}) {
    const lower::FlatStage f(one, lower::RecvTags{{{0, 0, 0, 0}}}, 3, {}, order);
    ASSERT_EQ(f.num_nodes(), 3u + 1 + 1 + 3);
    std::set<uint64_t> ids;
    for (uint32_t node = 0; node < 4; ++node)
      for (int mb = 0; mb < (f.repeated(node) ? 3 : 1); ++mb) {
        const uint64_t id = f.id(node, mb);
        EXPECT_LT(id, f.num_nodes());
        EXPECT_TRUE(ids.insert(id).second) << "node " << node << " micro-batch " << mb;
      }
    EXPECT_EQ(ids.size(), f.num_nodes());
  }
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

namespace stg {
namespace {

// The template is micro-batch 0 as it is: printable names, and each name of
// the micro-batch knows where its number is (Tensor::number_at).
TEST(MicroBatchTemplate, NamesAreMicroBatchZerosWithTheNumberPlaced) {
  TempDir tmp;
  Options o = options_for({"llama", 2, lower::Schedule::named("1f1b"), 1, 3, 7}, tmp.sub("t"));
  models::Workload w = workloads::build_workload(o);
  graph::Graph g = std::move(w.model.graph);
  passes::Analyses analyses(w.mesh, w.values);
  build_pipeline(o, w, /*flat=*/true).run(g, analyses);
  int numbered = 0;
  for (const graph::Tensor& t : g.tensors()) {
    for (char c : t.name + t.comm.label) ASSERT_TRUE(c >= 0x20 && c < 0x7f) << t.name;
    if (t.number_at >= 0) {
      ++numbered;
      EXPECT_EQ(t.name.substr(t.number_at - 2, 4), "mb0.") << t.name;
    }
    if (t.comm.label_number_at >= 0)
      EXPECT_EQ(t.comm.label.substr(t.comm.label_number_at - 2, 4), "mb0.") << t.comm.label;
    // A tensor of the micro-batch (not a weight, sum or update) is numbered.
    if (t.micro_batch == 0 && t.role != graph::Role::kWeight) EXPECT_GE(t.number_at, 0) << t.name;
  }
  EXPECT_GT(numbered, 100);
}

}  // namespace
}  // namespace stg

namespace stg {
namespace {

// A ring along a mesh axis in the micro-batch (dp 2 x tp 4, one stage):
// x -> SEND to tp+1, RECV from tp-1 -> z, and a sum of no micro-batch.
StageGraph ring_template() {
  StageGraph s;
  LoweredNode x = comp(0, 0), z = comp(3, 0, {2}), sum = comp(4, -1, {3});
  LoweredNode send, recv;
  send.id = 1;
  send.kind = NodeKind::kSend;
  send.micro_batch = 0;
  send.data_deps = {0};
  send.peer = mesh::Peer::along(1, +1);
  send.tag = 5;
  send.comm_size = 8;
  recv = send;
  recv.id = 2;
  recv.kind = NodeKind::kRecv;
  recv.data_deps = {};
  recv.peer = mesh::Peer::along(1, -1);
  s.nodes = {x, send, recv, z, sum};
  return s;
}

TEST(FlatStage, RingAlongAMeshAxisHasTagsUniquePerSourceAndDestination) {
  const mesh::Mesh mesh({{"dp", "dp", 2, mesh::AxisKind::kData, "--dp"},
                         {"tp", "tp", 4, mesh::AxisKind::kTensor, "--tp"}},
                        1);
  const mesh::RankLayout layout(mesh);
  for (const lower::NodeOrder order : {lower::NodeOrder::kReference, lower::NodeOrder::kIssue}) {
    const StageGraph all = lower::expand(
        lower::FlatStage(ring_template(), lower::RecvTags{{{0, 0, 0, 0}}}, 3, {}, order));
    ASSERT_EQ(all.nodes.size(), 13u);
    // (src, dst, tag) of every send and every recv, over all ranks.
    std::multiset<std::tuple<int64_t, int64_t, int32_t>> sends, recvs;
    for (int64_t r = 0; r < layout.num_ranks(); ++r)
      for (const LoweredNode& n : all.nodes) {
        const int64_t peer = layout.binding(r).peer(n.peer);
        if (n.kind == NodeKind::kSend) sends.insert({r, peer, n.tag});
        if (n.kind == NodeKind::kRecv) recvs.insert({peer, r, n.tag});
      }
    EXPECT_EQ(sends.size(), 8u * 3);
    EXPECT_EQ(sends, recvs);
    for (const auto& link : sends) EXPECT_EQ(sends.count(link), 1u);
    // The copies of micro-batch 1 and 2 add 6 (the largest template tag + 1).
    std::set<int32_t> tags;
    for (const LoweredNode& n : all.nodes)
      if (n.kind == NodeKind::kSend) tags.insert(n.tag);
    EXPECT_EQ(tags, (std::set<int32_t>{5, 11, 17}));
  }
}

}  // namespace
}  // namespace stg
