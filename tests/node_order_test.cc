// How the nodes of a stage are numbered (lower::NodeOrder, docs/facts.md
// §5.8): both orders on a tiny two-stage graph, the issue order on whole
// models (valid, replayable, comm behind its producer), and the reference
// order against the reference generator's own traces when this machine has
// them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "stg/emit/trace_writer.h"
#include "stg/generate.h"
#include "stg/graph/csv_module.h"
#include "stg/lower/lower_stage.h"
#include "stg/mesh/rank_layout.h"
#include "stg/models/families/registry.h"
#include "stg/options.h"
#include "stg/passes/insert_send_recv.h"
#include "stg/tools/trace_reader.h"
#include "stg/tools/validate.h"
#include "stg/workloads/build_workload.h"
#include "support/filecheck.h"
#include "support/files.h"
#include "support/reference_outputs.h"
#include "support/run_stg.h"
#include "support/stage_schedule.h"
#include "support/temp_dir.h"

namespace stg {
namespace {

namespace fs = std::filesystem;
using lower::NodeOrder;
using stg_test::file_check;
using stg_test::TempDir;

// ---------------------------------------------------------------------------
// A tiny two-stage graph.
//
// Stage 0: x (input, no work) -> a -> b, which stage 1 reads (link b);
// g = a + 1, read by h through an ALL_REDUCE (gc, written after its reader,
// as insert-collectives places it); u reads h and dy from stage 1 (link dy);
// v reads x through an ALL_GATHER (vc), which has no input node once x (no
// work) is dropped.
// Stage 1: c reads b, dy reads c.
// Links get tags in order of first use, consumer stage by stage: dy (read on
// stage 0) is tag 0, b is tag 1.
graph::Graph two_stage_graph() {
  graph::Graph g = graph::parse_module_csv(
      "id,require_grads,x1,x2,op_type,op_attr,x1_shape,x1_hidden,x2_shape,x2_hidden,grad_of,"
      "extra_attr\n"
      R"(x,N,,,T,,"B, D",1
a,N,x,,E,1,"B, D",1
b,N,a,,E,1,"B, D",1
g,N,a,,E,1,"B, D",1
h,N,gc,,E,1,"B, D",1
gc,N,g,,COLL,ALL_REDUCE,"B, D",1,"B, D",1,,"{""comm_axis"": 0, ""label"": ""h@0_X1COMM""}"
c,N,b,,E,1,"B, D",1,,,,"{""stage"": 1}"
dy,N,c,,E,1,"B, D",1,,,,"{""stage"": 1}"
u,N,h,dy,E2,1,"B, D",1,"B, D",1,,
v,N,vc,,E,1,"B, D",1
vc,N,x,,COLL,ALL_GATHER,"B, D",1,"B, D",1,,"{""comm_axis"": 0, ""label"": ""v@0_X1COMM""}"
)",
      "two_stage.csv");
  passes::insert_send_recv(g);
  return g;
}

// One line per node: "<id> <kind> <name> <- <data deps>".
std::string listing(const StageGraph& s) {
  static const char* const kKinds[] = {"COMP", "COLL", "SEND", "RECV"};
  std::ostringstream out;
  for (const LoweredNode& n : s.nodes) {
    out << n.id << ' ' << kKinds[static_cast<int>(n.kind)] << ' ' << n.name << " <-";
    for (uint64_t d : n.data_deps) out << ' ' << d;
    out << '\n';
  }
  return out.str();
}

StageGraph lower_tiny(int stage, NodeOrder order) {
  const graph::Graph g = two_stage_graph();
  const std::vector<std::vector<int>> members = graph::tensors_by_stage(g, 2);
  expr::Values values;
  values.by_symbol = {{"B", 4}, {"D", 8}};
  lower::LowerOptions o;
  o.order = order;
  StageGraph s = lower::lower_stage(g, members[stage], stage, values, o);
  stg_test::schedule_and_order(s, o, 2);
  return s;
}

// Created order: per op in graph order its compute node then its
// collectives, then the links in tag order. gc comes after h, which reads
// it; on stage 1, c reads the RECV numbered after it.
TEST(NodeOrder, ReferenceNumbersInCreationOrderLinksLast) {
  EXPECT_TRUE(file_check(listing(lower_tiny(0, NodeOrder::kReference)), R"(
    CHECK: 0 COMP a@0_COMP <-
    CHECK-NEXT: 1 COMP b@0_COMP <- 0
    CHECK-NEXT: 2 COMP g@0_COMP <- 0
    CHECK-NEXT: 3 COMP h@0_COMP <- 4
    CHECK-NEXT: 4 COLL h@0_X1COMM <- 2
    CHECK-NEXT: 5 COMP u@0_COMP <- 3 8
    CHECK-NEXT: 6 COMP v@0_COMP <- 7
    CHECK-NEXT: 7 COLL v@0_X1COMM <-
    CHECK-NEXT: 8 RECV shadow_dy@0_Y_RECV <-
    CHECK-NEXT: 9 SEND b@0_Y_SEND <- 1
  )"));
  EXPECT_TRUE(file_check(listing(lower_tiny(1, NodeOrder::kReference)), R"(
    CHECK: 0 COMP c@0_COMP <- 3
    CHECK-NEXT: 1 COMP dy@0_COMP <- 0
    CHECK-NEXT: 2 SEND dy@0_Y_SEND <- 1
    CHECK-NEXT: 3 RECV shadow_b@0_Y_RECV <-
  )"));
}

// Compute in graph order; the SEND of b right behind b, the collective on g
// right behind g, each RECV right before its first reader; the collective
// with no input node first. Topological.
TEST(NodeOrder, IssuePutsCommBehindItsProducerAndRecvBeforeItsReader) {
  EXPECT_TRUE(file_check(listing(lower_tiny(0, NodeOrder::kIssue)), R"(
    CHECK: 0 COLL v@0_X1COMM <-
    CHECK-NEXT: 1 COMP a@0_COMP <-
    CHECK-NEXT: 2 COMP b@0_COMP <- 1
    CHECK-NEXT: 3 SEND b@0_Y_SEND <- 2
    CHECK-NEXT: 4 COMP g@0_COMP <- 1
    CHECK-NEXT: 5 COLL h@0_X1COMM <- 4
    CHECK-NEXT: 6 COMP h@0_COMP <- 5
    CHECK-NEXT: 7 RECV shadow_dy@0_Y_RECV <-
    CHECK-NEXT: 8 COMP u@0_COMP <- 6 7
    CHECK-NEXT: 9 COMP v@0_COMP <- 0
  )"));
  EXPECT_TRUE(file_check(listing(lower_tiny(1, NodeOrder::kIssue)), R"(
    CHECK: 0 RECV shadow_b@0_Y_RECV <-
    CHECK-NEXT: 1 COMP c@0_COMP <- 0
    CHECK-NEXT: 2 COMP dy@0_COMP <- 1
    CHECK-NEXT: 3 SEND dy@0_Y_SEND <- 2
  )"));
}

// ---------------------------------------------------------------------------
// Whole models in the issue order, through the library (the command line
// has no switch for it).

Options small_model(const std::string& type) {
  Options o;
  o.model = stg::models::find_family(type).name;
  o.num_stacks = 4;
  o.batch = 8;
  o.micro_batch = 2;
  o.seq = 64;
  o.dmodel = 64;
  o.dff = 128;
  o.head = 8;
  o.component_flags["--kvhead"] = 4;
  o.dvocal = 256;
  o.degree["dp"] = o.degree["tp"] = o.degree["pp"] = 2;
  o.threads = 2;
  if (type == "moe") {
    o.component_flags["--experts"] = 4;
    o.component_flags["--kexperts"] = 2;
    o.degree["ep"] = 2;
  }
  return o;
}

// Generates `o` with the issue order into `dir` (workload.<rank>.et and
// workload.json) and returns the stages.
std::vector<StageGraph> write_issue_order(const Options& o, const fs::path& dir) {
  models::Workload w = workloads::build_workload(o);
  lower::LowerOptions lo = lower_options(o, w);
  lo.order = NodeOrder::kIssue;
  graph::Graph g = std::move(w.model.graph);
  passes::Analyses analyses(w.mesh, w.values);
  build_pipeline(o, w).run(g, analyses);
  std::vector<StageGraph> stages = lower_stages(g, w, lo, 1);
  for (StageGraph& s : stages)
    stg_test::schedule_and_order(s, lo, static_cast<int>(w.mesh.stages()));
  const mesh::RankLayout layout(w.mesh);
  std::ofstream(dir / "workload.json") << layout.comm_group_json();
  for (int64_t r = 0; r < layout.num_ranks(); ++r) {
    std::string content;
    emit::append_trace(content, stages[layout.coords_of(r).stage], layout.binding(r),
                       emit::Schema::kV004);
    std::ofstream(dir / ("workload." + std::to_string(r) + ".et"), std::ios::binary) << content;
  }
  return stages;
}

// The issue order's promises on a lowered stage: parents first; nothing but
// comm nodes between a SEND or collective and the node it reads, or between
// a RECV and its first reader.
void expect_issue_order(const StageGraph& s) {
  const auto& nodes = s.nodes;
  std::vector<uint64_t> first_reader(nodes.size(), UINT64_MAX);
  for (const LoweredNode& n : nodes) {
    for (const auto* deps : {&n.data_deps, &n.ctrl_deps})
      for (uint64_t d : *deps) {
        EXPECT_LT(d, n.id) << n.name << " reads a later node";
        first_reader[d] = std::min(first_reader[d], n.id);
      }
  }
  auto only_comm_between = [&](uint64_t from, uint64_t to) {
    for (uint64_t k = from + 1; k < to; ++k)
      if (nodes[k].kind == NodeKind::kComp) return false;
    return true;
  };
  int checked = 0;
  for (const LoweredNode& n : nodes) {
    if ((n.kind == NodeKind::kSend || n.kind == NodeKind::kColl) && n.data_deps.size() == 1) {
      EXPECT_TRUE(only_comm_between(n.data_deps[0], n.id))
          << "stage " << s.stage << ": " << n.name << " is not right behind its producer";
      ++checked;
    }
    if (n.kind == NodeKind::kRecv && first_reader[n.id] != UINT64_MAX) {
      EXPECT_TRUE(only_comm_between(n.id, first_reader[n.id]))
          << "stage " << s.stage << ": " << n.name << " is not right before its first reader";
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
}

TEST(NodeOrder, IssueOrderOfWholeModelsIsValidAndReplays) {
  struct Case {
    const char* type;
    lower::Schedule schedule;
  };
  for (const Case& c :
       {Case{"gpt", lower::Schedule::named("none")}, Case{"gpt", lower::Schedule::named("1f1b")},
        Case{"llama", lower::Schedule::named("gpipe")},
        Case{"moe", lower::Schedule::named("none")}}) {
    SCOPED_TRACE(c.type);
    Options o = small_model(c.type);
    o.pipeline_schedule = c.schedule;
    TempDir tmp;
    for (const StageGraph& s : write_issue_order(o, tmp.path())) expect_issue_order(s);
    tools::ValidateOptions v;
    v.replay = true;
    v.require_pg_name = true;
    const tools::ValidationReport r = tools::validate_dir(tmp.path().string(), v);
    EXPECT_EQ(r.exit_status(), 0) << r.verdict();
  }
}

// ---------------------------------------------------------------------------
// The reference generator's traces (when this machine has them): for every
// case of its cases.tsv compared rank by rank ("rank" mode: the later
// reference, whose names stg shares), the sequence of (type, name) in id
// order is the reference's.

std::vector<std::pair<tools::NodeKind, std::string>> by_id(const fs::path& file) {
  std::vector<tools::TraceNode> nodes;
  tools::TraceFormat format;
  std::string error;
  if (!tools::read_trace(file.string(), nodes, format, error)) throw std::runtime_error(error);
  std::sort(nodes.begin(), nodes.end(),
            [](const tools::TraceNode& a, const tools::TraceNode& b) { return a.id < b.id; });
  std::vector<std::pair<tools::NodeKind, std::string>> out;
  for (const tools::TraceNode& n : nodes) out.emplace_back(n.kind, n.name);
  return out;
}

TEST(NodeOrder, ReferenceCasesNumberedAsTheReference) {
  const fs::path cases = stg_test::kReferenceRoot / "cases.tsv";
  if (!fs::exists(cases)) GTEST_SKIP() << "no reference outputs at " << stg_test::kReferenceRoot;
  std::istringstream lines(stg_test::read_file(cases));
  std::string line;
  int compared = 0;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string name, mode, flag;
    std::getline(fields, name, '\t');
    std::getline(fields, mode, '\t');
    const fs::path ref = stg_test::kReferenceRoot / name / "traces";
    if (mode != "rank" || !fs::is_directory(ref)) continue;
    SCOPED_TRACE(name);
    TempDir tmp;
    std::vector<std::string> args = {"--quiet", "--output_dir", tmp.sub("out")};
    while (fields >> flag) args.push_back(flag);
    const stg_test::RunResult run = stg_test::run_stg(args, tmp.path());
    ASSERT_EQ(run.status, 0) << run.err;
    for (int rank = 0; fs::exists(ref / ("workload." + std::to_string(rank) + ".et")); ++rank) {
      const std::string file = "workload." + std::to_string(rank) + ".et";
      EXPECT_EQ(by_id(ref / file), by_id(fs::path(tmp.sub("out")) / file)) << file;
    }
    ++compared;
  }
  EXPECT_GT(compared, 0);
}

}  // namespace
}  // namespace stg
