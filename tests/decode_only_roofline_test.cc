// Decode-only serving (`stg infer --prefill 0`, issue 30 point 7) runs in
// ASTRA-sim: its analytical backend runs a compute node in
//   time = max(num_ops / peak, tensor_size / bandwidth)
// (989 TFLOPS and 3,350 GB/s, its example system and stg's defaults) and
// aborts at time 0 on a node without dependencies that takes under 1 ns.
// Every rank's dependency-free compute nodes must take >= 1 ns, and each
// rank's FLOPs and bytes must be those of the layout with the prompts'
// token copy as a node of its own, which a roofline at which the copy
// takes >= 1 ns (--mem_bw_gbps 0.001: 16 bytes in 16 us) still writes.
// The figures below come from the traces and the formula, not from stg.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "stg/generate.h"
#include "stg/options.h"
#include "support/temp_dir.h"
#include "support/trace_reader.h"

namespace stg {
namespace {

constexpr double kPeakFlops = 989e12, kBytesPerSecond = 3350e9;

// The issue's command, smaller (2 blocks of qwen3-32b's shape family, 16
// requests): stg infer --model qwen3-32b --dp 2 --tp 2 --pp 2 --cp 2
// --framework megatron --prefill 0 ...
Options issue_plan(const std::string& dir, double mem_bw_gbps) {
  Options o;
  o.output_dir = dir;
  o.model = "qwen3";
  o.num_stacks = 2;
  o.dmodel = 512;
  o.dff = 1024;
  o.head = 8;
  o.component_flags["--kvhead"] = 4;
  o.dvocal = 1024;
  o.framework = "megatron";
  o.degree["dp"] = 2;
  o.degree["tp"] = 2;
  o.degree["pp"] = 2;
  o.degree["sp"] = 2;
  o.micro_batch = 8;
  o.threads = 2;
  Serving s;
  s.requests = 16;
  s.prompt_len = 64;
  s.decode_steps = 2;
  s.prefill = false;
  s.roofline.mem_bw_gbps = mem_bw_gbps;
  o.serving = s;
  return o;
}

struct RankTotals {
  int64_t flops = 0;
  uint64_t bytes = 0;
  int64_t comm_bytes = 0;
  int compute_nodes = 0;
  double least_root_ns = 1e30;  // fastest compute node without dependencies
};

std::vector<RankTotals> totals(const std::string& dir, int64_t ranks) {
  std::vector<RankTotals> out;
  for (int64_t r = 0; r < ranks; ++r) {
    RankTotals t;
    for (const stg_test::TraceNode& n :
         stg_test::read_trace_nodes(dir + "/workload." + std::to_string(r) + ".et")) {
      t.comm_bytes += n.comm_size;
      if (!n.compute) continue;
      t.flops += n.num_ops;
      t.bytes += n.tensor_size;
      ++t.compute_nodes;
      const double ns = std::max(static_cast<double>(n.num_ops) / kPeakFlops,
                                 static_cast<double>(n.tensor_size) / kBytesPerSecond) *
                        1e9;
      if (!n.has_deps) t.least_root_ns = std::min(t.least_root_ns, ns);
    }
    out.push_back(t);
  }
  return out;
}

TEST(DecodeOnlyRoofline, EveryRankStartsWithANodeOfAtLeastOneNanosecond) {
  stg_test::TempDir tmp({.prefix = "stg_decode_only"});
  const std::string folded = (tmp.path() / "folded").string();
  const std::string kept = (tmp.path() / "kept").string();
  generate(issue_plan(folded, 3350));
  generate(issue_plan(kept, 0.001));
  const int64_t ranks = 2 * 2 * 2 * 2;
  const std::vector<RankTotals> a = totals(folded, ranks), b = totals(kept, ranks);
  // The last stage (ranks 8-15) holds a copy per micro-batch: 16 requests
  // in micro-batches of 8.
  const int64_t micro_batches = 16 / 8;
  for (int64_t r = 0; r < ranks; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    EXPECT_GE(a[r].least_root_ns, 1.0);
    EXPECT_EQ(a[r].flops, b[r].flops);
    EXPECT_EQ(a[r].bytes, b[r].bytes);
    EXPECT_EQ(a[r].comm_bytes, b[r].comm_bytes);
    EXPECT_EQ(b[r].compute_nodes - a[r].compute_nodes, r >= 8 ? micro_batches : 0);
  }
  // The kept layout is what ASTRA-sim aborts on at 3,350 GB/s: a copy of
  // the rank's share of a micro-batch's tokens (8 / dp 2 / cp 2 = 2
  // requests: 1 operation and 4 bytes moved each).
  const double copy_ns = std::max(2 / kPeakFlops, 2 * 4 / kBytesPerSecond) * 1e9;
  EXPECT_LT(copy_ns, 1.0);
  EXPECT_LT(b[8].least_root_ns, 1.0);
}

}  // namespace
}  // namespace stg
