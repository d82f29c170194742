// `stg validate --replay --timeline FILE`: the makespan's order as Chrome
// trace-event JSON. Checked from the file and the traces alone: every node
// of every rank appears once, on the track of its kind, with non-negative
// times that respect its dependencies.
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "stg/tools/trace_reader.h"
#include "support/files.h"
#include "support/run_stg.h"
#include "support/temp_dir.h"

namespace {

using stg_test::run_stg;
using stg_test::RunResult;
using stg_test::TempDir;

struct Times {
  double start = 0, end = 0;
  int tid = -1;
  int seen = 0;
};

TEST(Timeline, EveryNodeOnceWithDependencyRespectingTimes) {
  TempDir tmp;
  const std::string dir = tmp.sub("run");
  const std::vector<std::string> args = {"--model_type",
                                         "gpt",
                                         "--num_stacks",
                                         "2",
                                         "--dmodel",
                                         "256",
                                         "--dff",
                                         "1024",
                                         "--head",
                                         "8",
                                         "--seq",
                                         "256",
                                         "--batch",
                                         "8",
                                         "--micro_batch",
                                         "2",
                                         "--dvocal",
                                         "512",
                                         "--dp",
                                         "2",
                                         "--tp",
                                         "2",
                                         "--pp",
                                         "2",
                                         "--pipeline_schedule",
                                         "1f1b",
                                         "--output_dir",
                                         dir,
                                         "--quiet"};
  ASSERT_EQ(run_stg(args, tmp.path()).status, 0);
  const std::string file = tmp.sub("timeline.json");
  const RunResult r = run_stg({"validate", dir, "--replay", "--timeline", file}, tmp.path());
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("events written to"), std::string::npos) << r.out;

  const nlohmann::json j = nlohmann::json::parse(stg_test::read_file(file));
  std::map<std::pair<int64_t, uint64_t>, Times> times;
  std::map<int64_t, int> process_names;
  for (const nlohmann::json& e : j.at("traceEvents")) {
    if (e.at("ph") == "M") {
      if (e.at("name") == "process_name") ++process_names[e.at("pid").get<int64_t>()];
      continue;
    }
    ASSERT_EQ(e.at("ph"), "X");
    Times& t = times[{e.at("pid").get<int64_t>(), e.at("args").at("id").get<uint64_t>()}];
    t.start = e.at("ts").get<double>();
    t.end = t.start + e.at("dur").get<double>();
    t.tid = e.at("tid").get<int>();
    ++t.seen;
    EXPECT_GE(t.start, 0.0);
    EXPECT_GE(e.at("dur").get<double>(), 0.0);
  }
  EXPECT_EQ(process_names.size(), 8u);  // dp 2 x tp 2 x pp 2

  size_t nodes = 0;
  for (int64_t rank = 0; rank < 8; ++rank) {
    std::vector<stg::tools::TraceNode> trace;
    stg::tools::TraceFormat format;
    std::string error;
    ASSERT_TRUE(stg::tools::read_trace(dir + "/workload." + std::to_string(rank) + ".et", trace,
                                       format, error))
        << error;
    for (const stg::tools::TraceNode& n : trace) {
      ++nodes;
      const auto it = times.find({rank, n.id});
      ASSERT_NE(it, times.end()) << "rank " << rank << " node " << n.id;
      EXPECT_EQ(it->second.seen, 1);
      const bool comm = n.kind == stg::tools::NodeKind::kColl ||
                        n.kind == stg::tools::NodeKind::kSend ||
                        n.kind == stg::tools::NodeKind::kRecv;
      EXPECT_EQ(it->second.tid, comm ? 1 : 0) << n.name;
      std::vector<uint64_t> deps = n.data_deps;
      deps.insert(deps.end(), n.ctrl_deps.begin(), n.ctrl_deps.end());
      for (uint64_t d : deps) {
        const Times& before = times.at({rank, d});
        // Microseconds printed from nanoseconds: a rounding's slack.
        EXPECT_LE(before.end, it->second.start + 1e-6) << n.name << " after " << d;
      }
    }
  }
  EXPECT_EQ(times.size(), nodes);
}

TEST(Timeline, NeedsReplay) {
  TempDir tmp;
  const RunResult r =
      run_stg({"validate", tmp.path().string(), "--timeline", tmp.sub("t.json")}, tmp.path());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--timeline"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(tmp.sub("t.json")));
}

}  // namespace
