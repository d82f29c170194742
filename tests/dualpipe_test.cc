// DualPipe generated (--pipeline_schedule dualpipe; docs/pipeline_schedules.md):
// the mirrored copy of the model (passes/mirror_model.h), the sums of the two
// copies' gradients over stages i and pp-1-i (passes/sum_mirrored_gradients.h)
// and the memory report's two copies of the parameters. The schedule's order
// and its bubble are tests/pipeline_schedules_test.cc's; every configuration
// of tests/matrix_test.cc under dualpipe is replayed and compared with the
// full expansion.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "stg/generate.h"
#include "stg/graph/csv_module.h"
#include "stg/models/families/registry.h"
#include "stg/passes/mirror_model.h"
#include "stg/passes/pipeline.h"
#include "stg/report/step_figures.h"
#include "stg/tools/trace_reader.h"
#include "stg/tools/trace_set.h"
#include "support/run_stg.h"
#include "support/temp_dir.h"

namespace stg {
namespace {

using lower::Schedule;
using stg_test::TempDir;

// Four blocks of one weight each, chained, with the weights' gradients.
graph::Graph four_blocks() {
  std::string csv =
      "id,require_grads,x1,x2,op_type,op_attr,x1_shape,x1_hidden,x2_shape,x2_hidden,grad_of,"
      "extra_attr\n"
      "x,N,,,T,,\"B, D\",1,,,,{\"placement\": \"block:0\"}\n";
  std::string in = "x";
  for (int b = 0; b < 4; ++b) {
    const std::string k = std::to_string(b), place = "{\"placement\": \"block:" + k + "\"}";
    csv += "w" + k + ",Y,,,T,,\"D, D\",1,,,," + place + "\n";
    csv +=
        "y" + k + ",N," + in + ",w" + k + ",M,\"bd,de->be\",\"B, D\",1,\"D, D\",1,," + place + "\n";
    csv += "dw" + k + ",N," + in + ",y" + k + ",M,\"bd,be->de\",\"B, D\",1,\"B, D\",1,w" + k + "," +
           place + "\n";
    in = "y" + k;
  }
  return graph::parse_module_csv(csv, "four_blocks.csv");
}

// Every tensor is followed by its copy: on stage pp-1-s, chunk 1, named
// "mirror." + its name, reading the copies of its inputs.
TEST(DualPipe, MirrorModelCopiesEveryTensorOntoTheMirroredStage) {
  graph::Graph g = four_blocks();
  const int pp = 4, n = static_cast<int>(g.size());
  passes::assign_stages(g, pp, 4);
  const graph::Graph original = g;
  passes::mirror_model(g, pp);
  ASSERT_EQ(static_cast<int>(g.size()), 2 * n);
  auto copy_of = [](int i) { return i < 0 ? -1 : 2 * i + 1; };
  for (int i = 0; i < n; ++i) {
    const graph::Tensor &a = g[2 * i], &b = g[2 * i + 1], &o = original[i];
    EXPECT_EQ(a.name, o.name);
    EXPECT_EQ(a.stage, o.stage);
    EXPECT_EQ(a.chunk, 0);
    EXPECT_EQ(b.name, "mirror." + o.name);
    EXPECT_EQ(b.stage, pp - 1 - o.stage) << b.name;
    EXPECT_EQ(b.chunk, 1);
    EXPECT_EQ(a.x1, o.x1 < 0 ? -1 : 2 * o.x1);
    EXPECT_EQ(b.x1, copy_of(o.x1));
    EXPECT_EQ(b.x2, copy_of(o.x2));
    EXPECT_EQ(b.grad_of, copy_of(o.grad_of));
    EXPECT_EQ(g.result(2 * i + 1).y_shape, g.result(2 * i).y_shape);
  }
  // Block b's copy is on stage 3 - b: each stage holds blocks s and 3 - s.
  for (int b = 0; b < 4; ++b) EXPECT_EQ(g[g.at("mirror.w" + std::to_string(b))].stage, 3 - b);
}

// gpt (reference framework), pp 4, one block per stage, 8 micro-batches.
Options gpt_pp4(const std::string& dir, Schedule schedule, const std::string& framework) {
  Options o;
  o.model = models::find_family("gpt").name;
  o.framework = framework;
  o.output_dir = dir;
  o.degree["pp"] = 4;
  o.degree["dp"] = 2;
  o.num_stacks = 4;
  o.batch = 16;
  o.micro_batch = 2;
  o.seq = 512;
  o.dmodel = 1024;
  o.dff = 4096;
  o.head = 8;
  o.dvocal = 4096;
  o.print_gpu_vram = true;
  o.pipeline_schedule = schedule;
  o.threads = 2;
  return o;
}

// Stage s holds pipeline stage s and a copy of pipeline stage pp-1-s: its
// parameters, gradients and optimizer state are 1F1B's of both. It holds
// pp + 1 micro-batch x chunk activations at once (DeepSeek-V3 report,
// Table 2), a chunk of each direction per replica: (pp + 1) / 2 replicas,
// each the activations of one micro-batch on both pipeline stages.
TEST(DualPipe, MemoryHoldsBothCopies) {
  for (const std::string framework : {"reference", "megatron"}) {
    SCOPED_TRACE(framework);
    TempDir tmp;
    const int pp = 4;
    const RunSummary one = generate(gpt_pp4(tmp.sub("1f1b"), Schedule::named("1f1b"), framework));
    const RunSummary dual =
        generate(gpt_pp4(tmp.sub("dualpipe"), Schedule::named("dualpipe"), framework));
    ASSERT_EQ(one.memory.size(), 4u);
    ASSERT_EQ(dual.memory.size(), 4u);
    for (int s = 0; s < pp; ++s) {
      SCOPED_TRACE("stage " + std::to_string(s));
      const report::StageMemory &a = one.memory[s], &b = one.memory[pp - 1 - s],
                                &d = dual.memory[s];
      EXPECT_DOUBLE_EQ(d.params, a.params + b.params);
      EXPECT_DOUBLE_EQ(d.grads, a.grads + b.grads);
      EXPECT_DOUBLE_EQ(d.optimizer, a.optimizer + b.optimizer);
      EXPECT_DOUBLE_EQ(d.in_flight, (pp + 1) / 2.0);
      // 1F1B holds pp - s micro-batches on stage s.
      EXPECT_DOUBLE_EQ(a.in_flight, pp - s);
      const double per_micro_batch = a.activations / a.in_flight + b.activations / b.in_flight;
      EXPECT_NEAR(d.activations, per_micro_batch * (pp + 1) / 2.0, 1e-9 * d.activations);
    }
  }
}

// The comm-group file lists stages i and pp-1-i at each rank position; each
// rank all-reduces the gradient of every parameter it holds once on its
// pair's group (comm_size in elements: params / 4 B under --units stg).
TEST(DualPipe, GradientsSummedOverTheMirroredStages) {
  TempDir tmp;
  const std::string dir = tmp.sub("dualpipe");
  const RunSummary run = generate(gpt_pp4(dir, Schedule::named("dualpipe"), "reference"));
  tools::TraceSet set;
  ASSERT_TRUE(set.open(dir) && set.read_comm_groups()) << set.error();
  const int pp = 4, per_stage = 2;
  std::map<std::string, std::set<int64_t>> pair_groups;  // id -> members
  for (const auto& [id, members] : set.comm_groups().groups) {
    if (members.size() != 2) continue;
    const int64_t a = members[0], b = members[1];
    if (a % per_stage == b % per_stage && a / per_stage + b / per_stage == pp - 1)
      pair_groups[id] = {a, b};
  }
  // Stages 0 and 3 at positions 0 and 1, stages 1 and 2 at both.
  std::set<std::set<int64_t>> pairs;
  for (const auto& [id, members] : pair_groups) pairs.insert(members);
  EXPECT_EQ(pairs, (std::set<std::set<int64_t>>{{0, 6}, {1, 7}, {2, 4}, {3, 5}}));
  for (const auto& [rank, path] : set.rank_files()) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    std::vector<tools::TraceNode> nodes;
    tools::TraceFormat format;
    std::string error;
    ASSERT_TRUE(tools::read_trace(path, nodes, format, error)) << error;
    int64_t summed = 0;
    for (const tools::TraceNode& n : nodes)
      if (n.kind == tools::NodeKind::kColl && pair_groups.count(n.group.value_or(""))) {
        EXPECT_EQ(n.comm_type.value_or(-1), tools::kCollAllReduce);
        EXPECT_TRUE(pair_groups.at(*n.group).count(rank));
        summed += n.comm_size.value_or(0);
      }
    EXPECT_EQ(static_cast<double>(summed) * 4, run.memory.at(rank / per_stage).params);
  }
}

// `stg inspect` reads the same figures from the files: the pairs' sums on
// "dualpipe", the transfers between the middle stages (which share a pair
// group) on "pp".
TEST(DualPipe, InspectNamesTheGroupsAsTheRunDoes) {
  for (const std::string framework : {"reference", "megatron"}) {
    SCOPED_TRACE(framework);
    TempDir tmp;
    const std::string dir = tmp.sub("dualpipe");
    const RunSummary run = generate(gpt_pp4(dir, Schedule::named("dualpipe"), framework));
    const stg_test::RunResult js = stg_test::run_stg({"inspect", "--json", dir}, tmp.path());
    ASSERT_EQ(js.status, 0) << js.err;
    nlohmann::ordered_json step = nlohmann::ordered_json::parse(js.out)["step"];
    nlohmann::ordered_json own = report::to_json(run.step);
    step.erase("units");
    own.erase("units");
    EXPECT_EQ(own, step);
    EXPECT_TRUE(step["axes"].contains("dualpipe")) << step;
    EXPECT_EQ(step["axes"].contains("embedding"), framework == "megatron") << step;
  }
}

}  // namespace
}  // namespace stg
