// `stg validate --replay`'s timed run (stg/tools/makespan.h): hand-written
// trace sets whose times are worked out here, and pipelines written from a
// schedule's order (lower::schedule_slots) with unit times, whose bubble is
// the papers' formula (docs/pipeline_schedules.md).
#include "stg/tools/makespan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "stg/generate.h"
#include "stg/lower/schedule.h"
#include "stg/lower/schedule_timeline.h"
#include "stg/models/families/registry.h"
#include "support/run_stg.h"
#include "support/temp_dir.h"
#include "support/trace_nodes.h"
#include "support/trace_set.h"

namespace stg::tools {
namespace {

namespace v4 = ChakraProtoMsg;
using stg_test::comp_node;
using stg_test::p2p_node;

// One operation per ns: 0.001 TFLOPS, memory never the bound (tensor_size 1).
// Roofline times are truncated doubles, so figures may miss by 1 ns a node.
MakespanOptions unit_hardware(double link_gbps = 100) {
  MakespanOptions o;
  o.roofline.peak_tflops = 0.001;
  o.link_gbps = link_gbps;
  return o;
}

class TraceSet : public stg_test::TraceSet {
 public:
  TraceSet() : stg_test::TraceSet("stg_makespan_test") {}
};

v4::Node comp(uint64_t id, std::vector<uint64_t> deps, int64_t ns,
              std::vector<uint64_t> ctrl = {}) {
  return comp_node({id, std::move(deps), std::move(ctrl), "_COMP"}, ns, 1);
}

TEST(Makespan, ComputeThenMessageThenCompute) {
  TraceSet t;
  t.write_comm_groups(R"({"1": [0, 1]})");
  // Rank 0: 1000 ns of compute, then a 100,000-byte send at 100 GB/s (1000
  // ns); rank 1 receives it, then computes 3000 ns.
  t.write_rank(0, {comp(1, {}, 1000), p2p_node(true, {2, {1}, {}, "_SEND"}, 1, 5, 100000)});
  t.write_rank(1, {p2p_node(false, {1, {}, {}, "_RECV"}, 0, 5, 100000), comp(2, {1}, 3000)});
  const MakespanResult r = makespan_dir(t.dir(), "", unit_hardware(), 1);
  ASSERT_TRUE(r.completed) << r.error;
  const double expected = 1000 + 100000 / 100.0 + 3000;
  EXPECT_NEAR(r.makespan_ns, expected, 3);
  EXPECT_NEAR(r.idle_ns[0], expected - 1000, 3);
  EXPECT_NEAR(r.idle_ns[1], expected - 3000, 3);
}

TEST(Makespan, OneComputeAtATimeLowestIdFirst) {
  TraceSet t;
  t.write_comm_groups(R"({"1": [0, 1]})");
  // Three independent nodes run one after the other: 600 ns.
  t.write_rank(0, {comp(3, {}, 100), comp(1, {}, 200), comp(2, {}, 300)});
  t.write_rank(1, {comp(1, {}, 50)});
  const MakespanResult r = makespan_dir(t.dir(), "", unit_hardware(), 1);
  ASSERT_TRUE(r.completed) << r.error;
  EXPECT_NEAR(r.makespan_ns, 600, 3);
  EXPECT_NEAR(r.idle_ns[1], 550, 3);
}

TEST(Makespan, CollectiveWaitsForItsLastMember) {
  TraceSet t;
  t.write_comm_groups(R"({"1": [0, 1]})");
  // Rank 1 reaches the all-reduce 4000 ns after rank 0; it then takes
  // 200,000 B / 100 GB/s = 2000 ns on both.
  t.write_rank(0, {comp(1, {}, 1000), stg_test::coll_node({2, {1}, {}, "_COLL"}, 0, 200000, "1")});
  t.write_rank(1, {comp(1, {}, 5000), stg_test::coll_node({2, {1}, {}, "_COLL"}, 0, 200000, "1")});
  const MakespanResult r = makespan_dir(t.dir(), "", unit_hardware(), 1);
  ASSERT_TRUE(r.completed) << r.error;
  EXPECT_NEAR(r.makespan_ns, 5000 + 2000, 3);
  EXPECT_NEAR(r.end_ns[0], 7000, 3);
}

// A pipeline written from a schedule's order: per stage, each step one
// compute node (F, B or W, chained by ctrl_deps in the order), activations
// and gradients sent between stages as zero-byte messages (free).
constexpr int64_t kUnit = 100000;                           // ns per unit of time
constexpr int64_t F = 2 * kUnit, B = 2 * kUnit, W = kUnit;  // B: a whole backward

void write_pipeline(const TraceSet& t, lower::Schedule schedule, int pp, int micro_batches) {
  using graph::Phase;
  const int chunks = lower::schedule_chunks(schedule, 1);
  const bool split = lower::separates_weight_gradients(schedule);
  const int length = lower::pipeline_length(schedule, pp, chunks);
  // The stage that holds pipeline position `at` (inverse of pipeline_position)
  // for a micro-batch on chunk `chunk`: under DualPipe every stage holds
  // every position, one per direction (chunk), and a micro-batch keeps its
  // direction.
  auto stage_at = [&](int at, int chunk) {
    for (int s = 0; s < pp; ++s)
      for (int c = 0; c < chunks; ++c)
        if ((schedule != lower::Schedule::kDualPipe || c == chunk) &&
            lower::pipeline_position(schedule, pp, chunks, s, c) == at)
          return s;
    return -1;
  };
  std::string groups = "{\"1\": [";
  for (int s = 0; s < pp; ++s) groups += (s ? ", " : "") + std::to_string(s);
  t.write_comm_groups(groups + "]}");
  // Node ids of each (phase, micro-batch, position) pass, per stage.
  std::map<std::tuple<int, int, int>, uint64_t> pass_id;
  auto tag = [](int phase, int mb, int at) { return (phase * 1000 + mb) * 100 + at; };
  for (int s = 0; s < pp; ++s) {
    std::vector<v4::Node> nodes;
    uint64_t id = 1, previous = 0;
    for (const lower::Slot& slot : lower::schedule_slots(schedule, s, pp, micro_batches, 1))
      for (const lower::Step& st : slot) {
        const int at = lower::pipeline_position(schedule, pp, chunks, s, st.chunk);
        const int mb = st.micro_batch;
        const int f = static_cast<int>(Phase::kForward),
                  b = static_cast<int>(Phase::kBackwardInput);
        std::vector<uint64_t> deps;
        auto input = [&](int phase, int from) {  // the pass `phase` at position `from`
          const int peer = stage_at(from, st.chunk);
          if (peer == s) {
            deps.push_back(pass_id.at({phase, mb, from}));
          } else {
            nodes.push_back(p2p_node(false, {id, {}, {}, "_RECV"}, peer, tag(phase, mb, from), 0));
            deps.push_back(id++);
          }
        };
        int64_t ns = W;
        if (st.phase == Phase::kForward) {
          ns = F;
          if (at > 0) input(f, at - 1);
        } else if (st.phase == Phase::kBackwardInput) {
          ns = split ? B - W : B;
          deps.push_back(pass_id.at({f, mb, at}));
          if (at < length - 1) input(b, at + 1);
        } else {
          deps.push_back(pass_id.at({b, mb, at}));
        }
        std::vector<uint64_t> ctrl;
        if (previous) ctrl.push_back(previous);
        nodes.push_back(comp(id, deps, ns, ctrl));
        pass_id[{static_cast<int>(st.phase), mb, at}] = id;
        previous = id++;
        const int to = st.phase == Phase::kForward ? at + 1 : at - 1;
        if (st.phase != Phase::kBackwardWeight && to >= 0 && to < length &&
            stage_at(to, st.chunk) != s)
          nodes.push_back(p2p_node(true, {id++, {previous}, {}, "_SEND"}, stage_at(to, st.chunk),
                                   tag(static_cast<int>(st.phase), mb, at), 0));
      }
    t.write_rank(s, nodes);
  }
}

double largest_idle(lower::Schedule schedule, int pp, int micro_batches) {
  TraceSet t;
  write_pipeline(t, schedule, pp, micro_batches);
  const MakespanResult r = makespan_dir(t.dir(), "", unit_hardware(), 1);
  EXPECT_TRUE(r.completed) << r.error;
  return *std::max_element(r.idle_ns.begin(), r.idle_ns.end());
}

// Tolerance: a few ns of truncated roofline times per node on the path.
constexpr double kSlack = 500;

TEST(MakespanPipeline, OneFOneBBubbleIsTheTables) {
  for (int pp : {2, 4})
    EXPECT_NEAR(largest_idle(lower::Schedule::k1F1B, pp, 8), (pp - 1) * (F + B), kSlack);
}

TEST(MakespanPipeline, ZbH1BubbleIsTheTables) {
  for (int pp : {2, 4})
    EXPECT_NEAR(largest_idle(lower::Schedule::kZbH1, pp, 8), (pp - 1) * (F + B - 2 * W), kSlack);
}

// The traces run DualPipe's pairs one pass after the other, each as soon as
// its input is there, which leaves at most the table's bubble (whose F&B
// pair waits for both inputs; with F&B = F + B).
TEST(MakespanPipeline, DualPipeVBubbleAtMostTheTables) {
  for (int pp : {2, 4}) {
    const int stages = 2 * pp;
    const double table = (stages / 2 - 1) * ((F + B) + B - 3 * W);
    const double idle = largest_idle(lower::Schedule::kDualPipeV, pp, 2 * pp + 2);
    EXPECT_LE(idle, table + kSlack);
    EXPECT_LT(idle, (stages - 1) * (F + B));  // less than 1F1B's over as many stages
  }
}

// DualPipe's two directions: micro-batches 0..m/2-1 enter at stage 0,
// m/2..m-1 at stage pp-1; the table's bubble (pp/2-1)(F&B+B-3W) with
// F&B = F + B.
TEST(MakespanPipeline, DualPipeBubbleAtMostTheTables) {
  for (int pp : {4, 8}) {
    const double table = (pp / 2 - 1) * ((F + B) + B - 3 * W);
    const double idle = largest_idle(lower::Schedule::kDualPipe, pp, 2 * pp);
    EXPECT_LE(idle, table + kSlack) << pp;
    EXPECT_LT(idle, (pp - 1) * (F + B)) << pp;  // less than 1F1B's
  }
}

// ---------------------------------------------------------------------------
// One rank per pipeline stage (makespan_by_stage, the generator's
// --print_makespan): the ranks of a stage run alike, so the figures are the
// all-rank run's for the first rank of each stage.

Options small_run(const std::string& dir, const std::string& model, lower::Schedule schedule) {
  Options o;
  o.model = models::find_family(model).name;
  o.output_dir = dir;
  o.degree["dp"] = 2;
  o.degree["tp"] = 2;
  o.degree["pp"] = 4;
  o.num_stacks = 8;  // DualPipeV: two chunks of layers per stage
  o.batch = 16;
  o.micro_batch = 2;
  o.seq = 256;
  o.dmodel = 512;
  o.dff = 2048;
  o.head = 8;
  o.component_flags["--kvhead"] = 4;
  o.dvocal = 1024;
  o.pipeline_schedule = schedule;
  o.threads = 2;
  return o;
}

TEST(MakespanByStage, EqualsTheRunOfAllRanks) {
  struct Case {
    std::string model, framework;
    lower::Schedule schedule;
    int zero;
  };
  for (const Case& c : {Case{"gpt", "megatron", lower::Schedule::k1F1B, 1},
                        Case{"llama", "reference", lower::Schedule::kZbH1, 2},
                        Case{"gpt", "megatron", lower::Schedule::kDualPipe, 0},
                        Case{"llama", "reference", lower::Schedule::kDualPipeV, 3}}) {
    SCOPED_TRACE(c.model + " " + c.framework + " " + std::to_string(static_cast<int>(c.schedule)));
    stg_test::TempDir tmp;
    const std::string dir = tmp.sub("out");
    Options o = small_run(dir, c.model, c.schedule);
    o.framework = c.framework;
    if (c.zero == 3)
      o.weight_sharded = true;
    else
      o.zero_stage = c.zero;
    const RunSummary run = generate(o);
    ASSERT_EQ(run.stages, 4);
    MakespanOptions hw;
    hw.link_gbps = 50;
    const MakespanResult all = makespan_dir(dir, "", hw, 2);
    const MakespanResult by_stage = makespan_by_stage(dir, "", 4, hw, 2);
    ASSERT_TRUE(all.completed) << all.error;
    ASSERT_TRUE(by_stage.completed) << by_stage.error;
    EXPECT_EQ(by_stage.ranks, (std::vector<int64_t>{0, 4, 8, 12}));
    EXPECT_EQ(by_stage.makespan_ns, all.makespan_ns);
    for (int s = 0; s < 4; ++s) {
      EXPECT_EQ(by_stage.idle_ns[s], all.idle_ns[4 * s]) << s;
      EXPECT_EQ(by_stage.compute_ns[s], all.compute_ns[4 * s]) << s;
    }
  }
}

// A SEND whose peer is not the first rank of its stage: the peer is run
// too, and the figures are the all-rank run's (issue 30 point 4).
TEST(MakespanByStage, RunsThePeersOfItsSendsAndReceives) {
  TraceSet t;
  t.write_comm_groups(R"({"1": [0, 1, 2, 3]})");
  // Two stages of two ranks: rank 0 sends to rank 3 (not the first of stage
  // 1), which then computes 3000 ns: 1000 + 1000 (the message) + 3000.
  t.write_rank(0, {comp(1, {}, 1000), p2p_node(true, {2, {1}, {}, "_SEND"}, 3, 5, 100000)});
  t.write_rank(1, {comp(1, {}, 10)});
  t.write_rank(2, {comp(1, {}, 10)});
  t.write_rank(3, {p2p_node(false, {1, {}, {}, "_RECV"}, 0, 5, 100000), comp(2, {1}, 3000)});
  const MakespanResult r = makespan_by_stage(t.dir(), "", 2, unit_hardware(), 1);
  ASSERT_TRUE(r.completed) << r.error;
  EXPECT_EQ(r.ranks, (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(r.ranks_run, 3);
  EXPECT_NEAR(r.makespan_ns, 5000, 3);
  EXPECT_NEAR(r.idle_ns[1], 5000 - 10, 3);  // stage 1's first rank
  EXPECT_NE(makespan_by_stage_summary(r).find("(3 ranks run)"), std::string::npos);
  EXPECT_NE(makespan_by_stage(t.dir(), "", 3, unit_hardware(), 1).error, "");  // 4 ranks, 3 stages
}

// Context parallelism over dp 2, cp 2, pp 2 (training and serving, each
// --cp_algo): ring attention's SENDs and RECVs go to the other cp rank of
// the stage, whose own pipeline peers are not the stages' first ranks. The
// per-stage run equals the run of all ranks (stg validate --replay).
TEST(MakespanByStage, ContextParallelRingsEqualTheRunOfAllRanks) {
  for (const bool serving : {false, true})
    for (const CpAlgo algo : {CpAlgo::kRing, CpAlgo::kUlysses, CpAlgo::kAllGather}) {
      SCOPED_TRACE(std::string(serving ? "serving " : "training ") +
                   std::to_string(static_cast<int>(algo)));
      stg_test::TempDir tmp;
      const std::string dir = tmp.sub("out");
      Options o =
          small_run(dir, "llama", serving ? lower::Schedule::kNone : lower::Schedule::k1F1B);
      o.framework = "megatron";
      o.degree["tp"] = 1;
      o.degree["sp"] = 2;
      o.degree["pp"] = 2;
      o.num_stacks = 2;
      o.cp_algo = algo;
      if (serving) {
        Serving s;
        s.requests = 8;
        s.prompt_len = 256;
        s.decode_steps = 2;
        o.serving = s;
        o.micro_batch = 4;  // 2 requests per replica and micro-batch, split over cp
      }
      ASSERT_EQ(generate(o).stages, 2);
      MakespanOptions hw;
      hw.link_gbps = 50;
      const MakespanResult all = makespan_dir(dir, "", hw, 2);
      const MakespanResult by_stage = makespan_by_stage(dir, "", 2, hw, 2);
      ASSERT_TRUE(all.completed) << all.error;
      ASSERT_TRUE(by_stage.completed) << by_stage.error;
      EXPECT_EQ(by_stage.ranks, (std::vector<int64_t>{0, 4}));
      // Ring: the cp peer of each stage's first rank is run too.
      EXPECT_EQ(by_stage.ranks_run, algo == CpAlgo::kRing ? 4 : 2);
      EXPECT_EQ(by_stage.makespan_ns, all.makespan_ns);
      for (int s = 0; s < 2; ++s) EXPECT_EQ(by_stage.idle_ns[s], all.idle_ns[4 * s]) << s;
    }
}

// The generator prints the per-stage figures only when asked, and refuses
// the hardware flags without --print_makespan, and a part of a run.
TEST(MakespanByStage, GeneratorPrintsItWhenAsked) {
  stg_test::TempDir tmp;
  const std::string dir = tmp.sub("out");
  const std::vector<std::string> base = {"--model_type",
                                         "gpt",
                                         "--pp",
                                         "4",
                                         "--num_stacks",
                                         "4",
                                         "--batch",
                                         "8",
                                         "--micro_batch",
                                         "1",
                                         "--seq",
                                         "256",
                                         "--dmodel",
                                         "512",
                                         "--dff",
                                         "2048",
                                         "--head",
                                         "8",
                                         "--dvocal",
                                         "1024",
                                         "--pipeline_schedule",
                                         "zb-h1",
                                         "--output_dir",
                                         dir};
  const stg_test::RunResult plain = stg_test::run_stg(base, tmp.path());
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_EQ(plain.out.find("makespan"), std::string::npos) << plain.out;

  std::vector<std::string> asked = base;
  for (const char* a : {"--print_makespan", "--link_gbps", "1000000", "--quiet"})
    asked.push_back(a);
  const stg_test::RunResult timed = stg_test::run_stg(asked, tmp.path());
  ASSERT_EQ(timed.status, 0) << timed.err;
  MakespanOptions free_messages;
  free_messages.link_gbps = 1000000;
  const std::string expected =
      makespan_by_stage_summary(makespan_by_stage(dir, "", 4, free_messages, 1));
  // The makespan, then where each stage's time goes (time_breakdown_test.cc).
  EXPECT_EQ(timed.out.substr(0, expected.size()), expected);
  EXPECT_NE(timed.out.find("time per rank, by pipeline stage", expected.size()), std::string::npos)
      << timed.out;
  EXPECT_NE(expected.find("over one rank per pipeline stage"), std::string::npos) << expected;
  EXPECT_NE(expected.find("compute idle per stage (ns): "), std::string::npos) << expected;

  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{"--link_gbps", "10"},
        std::vector<std::string>{"--print_makespan", "--ranks", "0-1"}}) {
    std::vector<std::string> args = base;
    args.back() = dir + "_refused";
    args.insert(args.end(), extra.begin(), extra.end());
    const stg_test::RunResult r = stg_test::run_stg(args, tmp.path());
    EXPECT_EQ(r.status, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("--print_makespan"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir + "_refused"));
  }
}

}  // namespace
}  // namespace stg::tools
