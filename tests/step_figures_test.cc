// Tests of the per-step figures (src/stg/report/step_figures.h): the axis
// of every comm group read from hand-written comm-group files
// (tools/group_axes.h), and on small generated runs the FLOPs per rank and
// bytes per axis that `stg inspect` (text and --json) and the end-of-run
// summary report, against sums the test takes over the traces itself and
// gradient/activation sizes it derives from the model's dimensions.
#include "stg/report/step_figures.h"

#include <google/protobuf/io/coded_stream.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "et_def_v004.pb.h"
#include "stg/generate.h"
#include "stg/options.h"
#include "stg/report/stage_figures.h"
#include "stg/tools/group_axes.h"
#include "support/files.h"
#include "support/run_stg.h"
#include "support/temp_dir.h"

namespace stg {
namespace {

namespace fs = std::filesystem;
namespace v4 = ChakraProtoMsg;
using json = nlohmann::ordered_json;
using stg_test::read_file;
using stg_test::run_stg;
using stg_test::RunResult;
using stg_test::TempDir;

// ---------------------------------------------------------------------------
// group_axes on hand-written comm-group files.

tools::CommGroups groups_of(const std::string& text) {
  tools::CommGroups g;
  const json file = json::parse(text);
  for (const auto& [id, members] : file.items())
    g.groups.emplace_back(id, members.get<std::vector<int64_t>>());
  return g;
}

// "dp dp tp tp ..." in the order of the file's ids 1, 2, ...
std::string axes_text(const std::string& file, int64_t ranks_per_stage) {
  const std::map<std::string, std::string> axes =
      tools::group_axes(groups_of(file), ranks_per_stage);
  std::string out;
  for (size_t id = 1; id <= axes.size(); ++id) {
    const auto it = axes.find(std::to_string(id));
    out += (out.empty() ? "" : " ") + (it == axes.end() ? std::string("?") : it->second);
  }
  return out;
}

TEST(GroupAxes, DpOnly) {
  // gpt dp2: dp {0,1}, tp and cp singletons.
  EXPECT_EQ(axes_text(R"({"1": [0, 1], "2": [0], "3": [1], "4": [0], "5": [1]})", 2),
            "dp tp tp cp cp");
}

TEST(GroupAxes, DpTimesTp) {
  // dp2 tp2, one stage: dp {0,1} {2,3}, tp {0,2} {1,3}, cp singletons.
  EXPECT_EQ(axes_text(R"({"1": [0, 1], "2": [2, 3], "3": [0, 2], "4": [1, 3],
                          "5": [0], "6": [2], "7": [1], "8": [3]})",
                      4),
            "dp dp tp tp cp cp cp cp");
}

TEST(GroupAxes, TpOnlyWithDpOne) {
  // dp1 tp2: the dp block is two singletons, then tp {0,1}.
  EXPECT_EQ(axes_text(R"({"1": [0], "2": [1], "3": [0, 1], "4": [0], "5": [1]})", 2),
            "dp dp tp cp cp");
}

TEST(GroupAxes, PipelineWithEmbeddingGroups) {
  // README's dp2 tp2 pp2 file, then one tied-embedding group per rank
  // position of a stage (first and last stage), then a pair that is not one
  // (different positions).
  const std::string file =
      R"({"1": [0, 1], "2": [2, 3], "3": [4, 5], "4": [6, 7], "5": [0, 2], "6": [1, 3],
          "7": [4, 6], "8": [5, 7], "9": [0], "10": [2], "11": [1], "12": [3], "13": [4],
          "14": [6], "15": [5], "16": [7], "17": [0, 4], "18": [1, 5], "19": [2, 6],
          "20": [3, 7], "21": [0, 5]})";
  EXPECT_EQ(axes_text(file, 4),
            "dp dp dp dp tp tp tp tp cp cp cp cp cp cp cp cp "
            "embedding embedding embedding embedding other");
}

TEST(GroupAxes, EmbeddingNeedsFirstAndLastStage) {
  // pp3 of one rank each: {0,2} pairs stage 0 and stage 2, {0,1} does not.
  EXPECT_EQ(axes_text(R"({"1": [0], "2": [1], "3": [2], "4": [0], "5": [1], "6": [2],
                          "7": [0], "8": [1], "9": [2], "10": [0, 2], "11": [0, 1]})",
                      1),
            "dp dp dp tp tp tp cp cp cp embedding other");
}

TEST(GroupAxes, DualPipePairsMirroredStages) {
  // pp 4 of one rank each: dp, tp, cp singletons, then Megatron's embedding
  // group {0, 3} and DualPipe's groups {0, 3} and {1, 2}.
  const std::string singletons =
      R"("1": [0], "2": [1], "3": [2], "4": [3], "5": [0], "6": [1], "7": [2], "8": [3],
         "9": [0], "10": [1], "11": [2], "12": [3])";
  EXPECT_EQ(axes_text("{" + singletons + R"(, "13": [0, 3], "14": [0, 3], "15": [1, 2]})", 1),
            "dp dp dp dp tp tp tp tp cp cp cp cp embedding dualpipe dualpipe");
  // Without the embedding group ({0, 3} once): both are DualPipe's.
  EXPECT_EQ(axes_text("{" + singletons + R"(, "13": [0, 3], "14": [1, 2]})", 1),
            "dp dp dp dp tp tp tp tp cp cp cp cp dualpipe dualpipe");
  // pp 2 (one pair of stages): listed twice, the embedding group, then DualPipe's.
  EXPECT_EQ(axes_text(R"({"1": [0], "2": [1], "3": [0], "4": [1], "5": [0], "6": [1],
                          "7": [0, 1], "8": [0, 1]})",
                      1),
            "dp dp tp tp cp cp embedding dualpipe");
}

TEST(GroupAxes, MoeWithEp) {
  // moe dp2 tp2 ep2, one stage (N = 8): dp, tp, cp singletons, ep {r, r+4}.
  const std::string file =
      R"({"1": [0, 1], "2": [2, 3], "3": [4, 5], "4": [6, 7], "5": [0, 2], "6": [1, 3],
          "7": [4, 6], "8": [5, 7], "9": [0], "10": [2], "11": [1], "12": [3], "13": [4],
          "14": [6], "15": [5], "16": [7], "17": [0, 4], "18": [1, 5], "19": [2, 6],
          "20": [3, 7]})";
  EXPECT_EQ(axes_text(file, 8), "dp dp dp dp tp tp tp tp cp cp cp cp cp cp cp cp ep ep ep ep");
  // The same file with the ranks in two stages of four: embedding groups.
  EXPECT_EQ(axes_text(file, 4),
            "dp dp dp dp tp tp tp tp cp cp cp cp cp cp cp cp "
            "embedding embedding embedding embedding");
}

TEST(GroupAxes, DensePp2AndMoeEp2Pp1ReadTheSameFileApart) {
  // dp2 over 4 ranks, tp and cp singletons, then {0,2} {1,3}: dense dp2 pp2
  // with its embedding groups (R = 2), or moe dp2 ep2 on one stage (R = 4).
  const std::string file =
      R"({"1": [0, 1], "2": [2, 3], "3": [0], "4": [1], "5": [2], "6": [3], "7": [0], "8": [1],
          "9": [2], "10": [3], "11": [0, 2], "12": [1, 3]})";
  EXPECT_EQ(axes_text(file, 2), "dp dp tp tp tp tp cp cp cp cp embedding embedding");
  EXPECT_EQ(axes_text(file, 4), "dp dp tp tp tp tp cp cp cp cp ep ep");
}

TEST(GroupAxes, OneRankAndIdsOutOfOrder) {
  EXPECT_EQ(axes_text(R"({"3": [0], "1": [0], "2": [0]})", 1), "dp tp cp");
  // R outside 1..N counts as N.
  EXPECT_EQ(axes_text(R"({"1": [0, 1], "2": [0], "3": [1]})", 0), "dp tp tp");
  EXPECT_EQ(axes_text(R"({"1": [0, 1], "2": [0], "3": [1]})", 7), "dp tp tp");
}

TEST(GroupAxes, OtherLayoutsAreOther) {
  // Not a partition of the ranks (rank 1 twice): no spatial block at all.
  EXPECT_EQ(axes_text(R"({"1": [0, 1], "2": [1, 2], "3": [3]})", 4), "other other other");
  // An empty group and a file without members.
  EXPECT_EQ(axes_text(R"({"1": [], "2": [0, 1]})", 2), "other other");
  EXPECT_EQ(axes_text(R"({"1": []})", 1), "other");
}

// ---------------------------------------------------------------------------
// The lowered stages' axis names.

TEST(StepFigures, ReportedAxisNames) {
  mesh::Mesh m({{"dp", "dp", 2, mesh::AxisKind::kData},
                {"tp", "tp", 1, mesh::AxisKind::kTensor},
                {"sp", "cp", 1, mesh::AxisKind::kSequence},
                {"ep", "ep", 2, mesh::AxisKind::kExpert}},
               2);
  EXPECT_EQ(report::reported_axis(m, 4), "other");  // no stage group yet
  m.add_stage_group({"embedding", {0, 1}});
  EXPECT_EQ(report::reported_axis(m, 0), "dp");
  EXPECT_EQ(report::reported_axis(m, 1), "tp");
  EXPECT_EQ(report::reported_axis(m, 2), "cp");
  EXPECT_EQ(report::reported_axis(m, 3), "ep");
  EXPECT_EQ(report::reported_axis(m, 4), "embedding");
  EXPECT_EQ(report::reported_axis(m, -1), "other");
}

TEST(StepFigures, SpreadKeepsTheLowestRankOfATie) {
  report::RankSpread s;
  s.add(5, 7);
  s.add(3, 7);
  s.add(9, 2);
  EXPECT_EQ(s.total, 16);
  EXPECT_EQ(s.min, 2);
  EXPECT_EQ(s.min_rank, 9);
  EXPECT_EQ(s.max, 7);
  EXPECT_EQ(s.max_rank, 3);
}

TEST(StepFigures, TotalsBeyondInt64StayExact) {
  // DeepSeek-V3's FLOPs on 2,048 ranks: 2,048 x 9e15 = 18,432,000,000,000,000,000,
  // past int64 (9,223,372,036,854,775,807) but within uint64.
  report::StepFigures f;
  f.units = "FLOPs";
  report::RankStep step;
  step.flops = 9'000'000'000'000'000;
  step.axes["ep"] = {1, 900'000'000'000, 0, 0};
  for (int64_t rank = 0; rank < 2048; ++rank) f.add(rank, step);
  EXPECT_EQ(f.flops.total.text(), "18432000000000000000");
  EXPECT_FALSE(f.flops.total.fits_int64());
  EXPECT_EQ(f.axes.at(0).bytes.total.text(), "1843200000000000");
  const json j = report::to_json(f);
  EXPECT_TRUE(j["flops"]["total"].is_number_unsigned());
  EXPECT_EQ(j["flops"]["total"].get<uint64_t>(), 18'432'000'000'000'000'000u);
  EXPECT_TRUE(j["axes"]["ep"]["bytes"]["total"].is_number_integer());
  EXPECT_EQ(report::step_figures_from_json(j), f);
  EXPECT_NE(report::format_step_figures(f).find("compute num_ops: 18432000000000000000 total"),
            std::string::npos);
  // Past uint64 (18,446,744,073,709,551,615): a string of digits, read back.
  report::RankSpread big;
  for (int64_t rank = 0; rank < 3; ++rank) big.add(rank, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(big.total.text(), "27670116110564327421");
  const json k = report::to_json(big.total);
  EXPECT_TRUE(k.is_string());
  EXPECT_EQ(k.get<std::string>(), "27670116110564327421");
  EXPECT_EQ(report::exact_total_from_json(k), big.total);
  EXPECT_EQ(report::exact_total_from_json(json::parse("-12")), report::ExactTotal(-12));
  EXPECT_EQ(report::ExactTotal::parse("-170141183460469231731687303715884105728").text(),
            "-170141183460469231731687303715884105728");
  EXPECT_THROW(report::ExactTotal::parse("170141183460469231731687303715884105728"),
               std::invalid_argument);
  EXPECT_THROW(report::ExactTotal::parse("12a"), std::invalid_argument);
  EXPECT_THROW(big.total.as_int64(), std::overflow_error);
}

// ---------------------------------------------------------------------------
// Generated runs: gpt dp2 tp2 pp2, 2 blocks (one per stage), physical units.

constexpr int64_t kDp = 2, kTp = 2, kPp = 2, kBatch = 8, kSeq = 64, kDmodel = 64, kDff = 128,
                  kVocab = 256, kBf16 = 2;

std::vector<std::string> gpt_args(const std::string& dir) {
  return {"--model_type", "gpt", "--dp",         "2", "--tp",     "2",   "--pp",     "2",
          "--num_stacks", "2",   "--batch",      "8", "--seq",    "64",  "--dmodel", "64",
          "--dff",        "128", "--head",       "8", "--dvocal", "256", "--units",  "physical",
          "--threads",    "2",   "--output_dir", dir};
}

Options gpt_options(const std::string& dir) {
  Options o;
  o.model = "gpt";
  o.degree["dp"] = kDp;
  o.degree["tp"] = kTp;
  o.degree["pp"] = kPp;
  o.num_stacks = 2;
  o.batch = kBatch;
  o.seq = kSeq;
  o.dmodel = kDmodel;
  o.dff = kDff;
  o.head = 8;
  o.dvocal = kVocab;
  o.units = Units::kPhysical;
  o.threads = 2;
  o.output_dir = dir;
  return o;
}

// The summed num_ops of the compute nodes of one v0.0.4 file, read with
// protobuf directly (not with stg's reader).
int64_t file_flops(const fs::path& path) {
  const std::string data = read_file(path);
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(data.data()),
                                            static_cast<int>(data.size()));
  int64_t flops = 0;
  bool first = true;
  while (in.CurrentPosition() < static_cast<int>(data.size())) {
    uint32_t len = 0;
    if (!in.ReadVarint32(&len)) throw std::runtime_error("truncated " + path.string());
    const auto limit = in.PushLimit(static_cast<int>(len));
    if (first) {
      v4::GlobalMetadata meta;
      if (!meta.ParseFromCodedStream(&in)) throw std::runtime_error("bad metadata");
      first = false;
    } else {
      v4::Node n;
      if (!n.ParseFromCodedStream(&in)) throw std::runtime_error("bad node");
      if (n.type() == v4::COMP_NODE)
        for (const auto& a : n.attr())
          if (a.name() == "num_ops") flops += a.int64_val();
    }
    in.PopLimit(limit);
  }
  return flops;
}

// Total, min and max (lowest rank of a tie) of a per-rank map.
void expect_spread(const json& got, const std::map<int64_t, int64_t>& by_rank) {
  int64_t total = 0, min_rank = -1, max_rank = -1;
  for (const auto& [rank, v] : by_rank) {
    total += v;
    if (min_rank < 0 || v < by_rank.at(min_rank)) min_rank = rank;
    if (max_rank < 0 || v > by_rank.at(max_rank)) max_rank = rank;
  }
  EXPECT_EQ(got["total"].get<int64_t>(), total) << got;
  EXPECT_EQ(got["min"].get<int64_t>(), by_rank.at(min_rank)) << got;
  EXPECT_EQ(got["min_rank"].get<int64_t>(), min_rank) << got;
  EXPECT_EQ(got["max"].get<int64_t>(), by_rank.at(max_rank)) << got;
  EXPECT_EQ(got["max_rank"].get<int64_t>(), max_rank) << got;
}

// Per-rank dp gradient bytes. Each stage holds one block and one embedding
// (src/stg/models/gpt.cc; --tpsp 1 by default): the block's weights are
// Wqkv (Dmodel x 3 Dmodel), Wo (Dmodel x Dmodel), Wgate (Dmodel x Dff) and
// Wdown (Dff x Dmodel), split over tp; the embedding (Dvocal x Dmodel) is
// whole on every rank. One micro-batch: each gradient is all-reduced over
// dp once, in bf16.
constexpr int64_t kDpBytesPerRank =
    kBf16 * ((4 * kDmodel * kDmodel + 2 * kDmodel * kDff) / kTp + kVocab * kDmodel);
// The activation between the stages (and its gradient back): Batch/dp x
// Seq/tp x Dmodel in bf16 (sequence split over tp with --tpsp 1).
constexpr int64_t kStageLinkBytes = kBf16 * (kBatch / kDp) * (kSeq / kTp) * kDmodel;

// The line of a figures table whose label is `label`, split into its
// numbers: ranks, count (or "min .. max"), bytes min, min rank, max, max
// rank, total.
std::vector<int64_t> row_numbers(const std::string& text, const std::string& label) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("  " + label + " ", 0) != 0) continue;
    std::vector<int64_t> out;
    std::string word;
    std::istringstream words(line.substr(label.size() + 2));
    while (words >> word) {
      std::string digits;
      for (char c : word)
        if (c >= '0' && c <= '9') digits += c;
      if (!digits.empty()) out.push_back(std::stoll(digits));
    }
    return out;
  }
  return {};
}

// The text table agrees with the JSON figures, row by row.
void expect_text_matches_json(const std::string& text, const json& step) {
  for (const auto& [axis, a] : step["axes"].items()) {
    const bool pp = axis == "pp";
    const json& figures = a;  // clang before 16 cannot capture a binding
    const auto check = [&](const std::string& label, const json& count, const json& bytes) {
      SCOPED_TRACE(label);
      std::vector<int64_t> want = {figures["ranks"].get<int64_t>(), count["min"].get<int64_t>()};
      if (count["min"] != count["max"]) want.push_back(count["max"].get<int64_t>());
      for (const char* k : {"min", "min_rank", "max", "max_rank", "total"})
        want.push_back(bytes[k].get<int64_t>());
      EXPECT_EQ(row_numbers(text, label), want) << text;
    };
    if (pp) {
      check("pp sent", a["sends"], a["bytes_sent"]);
      check("pp received", a["recvs"], a["bytes_received"]);
    } else {
      check(axis + " collectives", a["collectives"], a["bytes"]);
    }
  }
  const json& f = step["flops"];
  const std::string compute = "compute num_ops: " + std::to_string(f["total"].get<int64_t>()) +
                              " total, per rank " + std::to_string(f["min"].get<int64_t>()) +
                              " (rank " + std::to_string(f["min_rank"].get<int64_t>()) + ") .. " +
                              std::to_string(f["max"].get<int64_t>()) + " (rank " +
                              std::to_string(f["max_rank"].get<int64_t>()) + ")";
  EXPECT_NE(text.find(compute), std::string::npos) << text;
}

// The figures without the units sentence (a run and inspect word it apart).
json without_units(json step) {
  step.erase("units");
  return step;
}

TEST(StepFigures, InspectAndRunSummaryOnGptDp2Tp2Pp2) {
  TempDir tmp({.prefix = "stg_step"});
  const std::string dir = tmp.sub("out");
  const RunSummary run = generate(gpt_options(dir));

  std::map<int64_t, int64_t> flops;
  for (int64_t rank = 0; rank < kDp * kTp * kPp; ++rank)
    flops[rank] = file_flops(fs::path(dir) / ("workload." + std::to_string(rank) + ".et"));

  const RunResult js = run_stg({"inspect", "--json", dir}, tmp.path());
  ASSERT_EQ(js.status, 0) << js.err;
  const json step = json::parse(js.out)["step"];
  EXPECT_EQ(step["ranks"].get<int64_t>(), 8);
  expect_spread(step["flops"], flops);

  // Only dp, tp and pp carry traffic (no cp, ep, embedding or other).
  std::vector<std::string> axes;
  for (const auto& [axis, a] : step["axes"].items()) axes.push_back(axis);
  EXPECT_EQ(axes, (std::vector<std::string>{"dp", "tp", "pp"}));
  const json& dp = step["axes"]["dp"];
  EXPECT_EQ(dp["ranks"].get<int64_t>(), 8);
  // Two dp all-reduces per rank: the flat block gradient and the embedding's.
  expect_spread(dp["collectives"],
                {{0, 2}, {1, 2}, {2, 2}, {3, 2}, {4, 2}, {5, 2}, {6, 2}, {7, 2}});
  std::map<int64_t, int64_t> dp_bytes;
  for (int64_t rank = 0; rank < 8; ++rank) dp_bytes[rank] = kDpBytesPerRank;
  expect_spread(dp["bytes"], dp_bytes);
  const json& pp = step["axes"]["pp"];
  std::map<int64_t, int64_t> link, one;
  for (int64_t rank = 0; rank < 8; ++rank) {
    link[rank] = kStageLinkBytes;
    one[rank] = 1;
  }
  expect_spread(pp["sends"], one);
  expect_spread(pp["recvs"], one);
  expect_spread(pp["bytes_sent"], link);
  expect_spread(pp["bytes_received"], link);

  // The run's own figures are the same; text and JSON agree.
  EXPECT_EQ(without_units(report::to_json(run.step)), without_units(step));
  const RunResult text = run_stg({"inspect", dir}, tmp.path());
  ASSERT_EQ(text.status, 0) << text.err;
  expect_text_matches_json(text.out, step);
}

TEST(StepFigures, PartialDirectoryReportsTheRanksPresent) {
  TempDir tmp({.prefix = "stg_step"});
  const std::string dir = tmp.sub("out");
  Options o = gpt_options(dir);
  o.ranks = "5-7";
  const RunSummary run = generate(o);
  const RunResult js = run_stg({"inspect", "--json", dir}, tmp.path());
  ASSERT_EQ(js.status, 0) << js.err;
  const json step = json::parse(js.out)["step"];
  EXPECT_EQ(step["ranks"].get<int64_t>(), 3);
  std::map<int64_t, int64_t> flops, dp_bytes;
  for (int64_t rank = 5; rank <= 7; ++rank) {
    flops[rank] = file_flops(fs::path(dir) / ("workload." + std::to_string(rank) + ".et"));
    dp_bytes[rank] = kDpBytesPerRank;
  }
  expect_spread(step["flops"], flops);
  // The comm-group file is whole: the groups are still named dp.
  expect_spread(step["axes"]["dp"]["bytes"], dp_bytes);
  EXPECT_EQ(without_units(report::to_json(run.step)), without_units(step));
}

TEST(StepFigures, CommandLinePrintsThemOnlyWhenAsked) {
  TempDir tmp({.prefix = "stg_step"});
  const std::string dir = tmp.sub("out");
  std::vector<std::string> args = gpt_args(dir);
  const RunResult plain = run_stg(args, tmp.path());
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_EQ(plain.out.find("per-step figures"), std::string::npos) << plain.out;

  args.push_back("--print_step_figures");
  const RunResult asked = run_stg(args, tmp.path());
  ASSERT_EQ(asked.status, 0) << asked.err;
  EXPECT_NE(asked.out.find("FLOPs and bytes"), std::string::npos) << asked.out;
  // The summary line stays the last line.
  EXPECT_NE(asked.out.rfind("stg: 8 ranks"), std::string::npos) << asked.out;
  EXPECT_GT(asked.out.rfind("stg: 8 ranks"), asked.out.find("per-step figures")) << asked.out;
  const RunResult js = run_stg({"inspect", "--json", dir}, tmp.path());
  ASSERT_EQ(js.status, 0) << js.err;
  expect_text_matches_json(asked.out, json::parse(js.out)["step"]);
}

TEST(StepFigures, MoeExpertParallelTrafficIsEp) {
  TempDir tmp({.prefix = "stg_step"});
  const std::string dir = tmp.sub("out");
  Options o = gpt_options(dir);
  o.model = "moe";
  o.degree["dp"] = 1;
  o.degree["tp"] = 1;
  o.degree["pp"] = 1;
  o.degree["ep"] = 2;
  o.component_flags["--kvhead"] = 4;
  o.component_flags["--experts"] = 4;
  o.component_flags["--kexperts"] = 2;
  const RunSummary run = generate(o);
  const RunResult js = run_stg({"inspect", "--json", dir}, tmp.path());
  ASSERT_EQ(js.status, 0) << js.err;
  const json step = json::parse(js.out)["step"];
  ASSERT_TRUE(step["axes"].contains("ep")) << step;
  EXPECT_FALSE(step["axes"].contains("other")) << step;
  EXPECT_EQ(step["axes"]["ep"]["ranks"].get<int64_t>(), 2);
  EXPECT_EQ(without_units(report::to_json(run.step)), without_units(step));
}

}  // namespace
}  // namespace stg
