// --compute_time model (docs/kernel-model.md): each compute node's
// duration_micros from the kernel model. Every expected time is computed
// here from the formulas and the published constants, written out in this
// file (H100 SXM: 989.4 dense BF16 TFLOPS, 3,350 GB/s, 132 SMs; A100: 312
// TFLOPS, 2,039 GB/s, 108 SMs; GEMMs at 80% of peak in tiles of 128 x 128;
// FlashAttention-3 at 75% forward and 55% backward, FlashAttention-2 at 73%
// and 63%; HBM at 90%; 1 us per kernel), never by calling stg's functions
// for the expected value. Also: the flag's refusals, ASTRA-sim's system
// file with the roofline off, and the default output without durations.
#include "stg/hardware/kernel_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "stg/hardware/gpus.h"
#include "stg/tools/trace_reader.h"
#include "support/files.h"
#include "support/refused.h"
#include "support/run_stg.h"
#include "support/temp_dir.h"

namespace {

using stg_test::read_file;
using stg_test::run_stg;
using stg_test::RunResult;
using stg_test::TempDir;

// The published figures (docs/gpus.md, docs/kernel-model.md).
constexpr double kH100Peak = 989.4e12, kH100Bw = 3350e9;
constexpr int kH100Sms = 132;
constexpr double kA100Peak = 312e12, kA100Bw = 2039e9;
constexpr double kGemm = 0.80, kMem = 0.90, kOverhead = 1e-6;

stg::hardware::KernelFigures h100() {
  return stg::hardware::kernel_figures(*stg::hardware::find_gpu("h100-sxm"), false);
}

// A GEMM whose M and N are multiples of 128 with a tile count that is a
// multiple of the SM count runs at exactly 80% of peak.
TEST(KernelModel, GemmFillingWholeWavesRunsAtTheSustainedFraction) {
  const int64_t m = 128 * 12, n = 128 * 11, k = 4096;  // 132 tiles: one wave
  const double expected = 2.0 * m * n * k / (kGemm * kH100Peak) + kOverhead;
  EXPECT_NEAR(stg::hardware::gemm_seconds(h100(), m, n, k, 1, 2), expected, 1e-12);
  // Two of them (batch 2): 264 tiles, two whole waves, twice the time.
  const double two = 2.0 * 2 * m * n * k / (kGemm * kH100Peak) + kOverhead;
  EXPECT_NEAR(stg::hardware::gemm_seconds(h100(), m, n, k, 2, 2), two, 1e-12);
}

// 144 tiles on 132 SMs: a second wave of 12 tiles costs a whole wave.
TEST(KernelModel, GemmWithAPartialLastWavePaysTheWholeWave) {
  const int64_t m = 128 * 12, n = 128 * 12, k = 8192;
  const double tiles = 144, waves = 2;
  const double wave = 2.0 * 128 * 128 * k / (kGemm * kH100Peak / kH100Sms);
  const double expected = waves * wave + kOverhead;
  const double got = stg::hardware::gemm_seconds(h100(), m, n, k, 1, 2);
  EXPECT_NEAR(got, expected, 1e-12);
  // Slower than the same work at 80% of peak by waves x SMs / tiles.
  const double ideal = 2.0 * m * n * k / (kGemm * kH100Peak);
  EXPECT_NEAR((got - kOverhead) / ideal, waves * kH100Sms / tiles, 1e-9);
  // Edges that are no multiple of 128 round the tiles up: 1537 x 1536 is
  // 13 x 12 = 156 tiles, still two waves.
  EXPECT_NEAR(stg::hardware::gemm_seconds(h100(), m + 1, n, k, 1, 2), expected, 1e-12);
}

// One token (M = 1) against a 8192 x 16384 weight: its bytes dominate.
TEST(KernelModel, SkinnyGemmIsBoundByItsBytes) {
  const int64_t m = 1, n = 16384, k = 8192;
  const double bytes = (m * k + k * n + m * n) * 2.0;
  const double expected = bytes / (kMem * kH100Bw) + kOverhead;
  EXPECT_NEAR(stg::hardware::gemm_seconds(h100(), m, n, k, 1, 2), expected, 1e-12);
}

TEST(KernelModel, MemoryBoundKernelMovesItsBytesAtTheSustainedBandwidth) {
  const double bytes = 3 * 4096.0 * 8192 * 2;  // read two bf16 tensors, write one
  EXPECT_NEAR(stg::hardware::memory_bound_seconds(h100(), bytes),
              bytes / (kMem * kH100Bw) + kOverhead, 1e-12);
  const auto a100 = stg::hardware::kernel_figures(*stg::hardware::find_gpu("a100-80gb"), false);
  EXPECT_NEAR(stg::hardware::memory_bound_seconds(a100, bytes),
              bytes / (kMem * kA100Bw) + kOverhead, 1e-12);
}

TEST(KernelModel, AttentionRunsAtTheFlashAttentionFractions) {
  // Forward of b 4, s 4096, 32 heads of 128: 4 b s^2 h d FLOPs.
  const double flops = 4.0 * 4 * 4096 * 4096 * 32 * 128;
  const double bytes = 4 * 4 * 4096 * 32 * 128 * 2.0;  // q, k, v, o
  EXPECT_NEAR(stg::hardware::attention_seconds(h100(), flops, bytes, false),
              flops / (0.75 * kH100Peak) + kOverhead, 1e-12);
  EXPECT_NEAR(stg::hardware::attention_seconds(h100(), 2.5 * flops, 2 * bytes, true),
              2.5 * flops / (0.55 * kH100Peak) + kOverhead, 1e-12);
  const auto a100 = stg::hardware::kernel_figures(*stg::hardware::find_gpu("a100-80gb"), false);
  EXPECT_NEAR(stg::hardware::attention_seconds(a100, flops, bytes, false),
              flops / (0.73 * kA100Peak) + kOverhead, 1e-12);
  EXPECT_NEAR(stg::hardware::attention_seconds(a100, flops, bytes, true),
              flops / (0.63 * kA100Peak) + kOverhead, 1e-12);
}

TEST(KernelModel, DurationsAreWholeMicrosecondsAtLeastOne) {
  EXPECT_EQ(stg::hardware::duration_micros(0.2e-6), 1u);
  EXPECT_EQ(stg::hardware::duration_micros(1.49e-6), 1u);
  EXPECT_EQ(stg::hardware::duration_micros(1.51e-6), 2u);
  EXPECT_EQ(stg::hardware::duration_micros(1234.4e-6), 1234u);
}

TEST(KernelModel, EveryGpuHasItsSmCount) {
  const std::map<std::string, int> sms = {{"h100-sxm", 132},  {"h800", 132}, {"h200", 132},
                                          {"a100-80gb", 108}, {"b200", 148}, {"mi300x", 304}};
  for (const auto& [name, count] : sms) EXPECT_EQ(stg::hardware::find_gpu(name)->sms, count);
}

// ---------------------------------------------------------------------------
// The traces: a GPT block of d 1024, f 1408, s 768, 2 sequences per rank
// (dp 2), bf16, on H100 (the default GPU of the model).

constexpr int64_t kD = 1024, kF = 1408, kS = 768, kB = 2;

const std::vector<std::string> kGpt = {
    "--model_type", "gpt", "--num_stacks", "1",        "--dmodel", "1024", "--dff",         "1408",
    "--head",       "8",   "--seq",        "768",      "--batch",  "4",    "--micro_batch", "4",
    "--dp",         "2",   "--units",      "physical", "--quiet"};

RunResult run(const TempDir& tmp, const std::string& dir, std::vector<std::string> extra) {
  std::vector<std::string> args = kGpt;
  args.insert(args.end(), extra.begin(), extra.end());
  args.insert(args.end(), {"--output_dir", tmp.sub(dir)});
  return run_stg(args, tmp.path(), tmp.path());
}

// Rank 0's compute nodes: name -> duration_micros.
std::map<std::string, uint64_t> durations(const std::string& dir) {
  std::vector<stg::tools::TraceNode> nodes;
  stg::tools::TraceFormat format;
  std::string error;
  EXPECT_TRUE(stg::tools::read_trace(dir + "/workload.0.et", nodes, format, error)) << error;
  std::map<std::string, uint64_t> out;
  for (const stg::tools::TraceNode& n : nodes)
    if (n.kind == stg::tools::NodeKind::kComp) out[n.name] = n.duration_micros;
  return out;
}

uint64_t micros(double seconds) { return static_cast<uint64_t>(std::llround(seconds * 1e6)); }

TEST(KernelModelTraces, ComputeNodesCarryTheModelsDurations) {
  TempDir tmp;
  ASSERT_EQ(run(tmp, "model", {"--compute_time", "model"}).status, 0);
  const std::map<std::string, uint64_t> d = durations(tmp.sub("model"));
  const std::string block = "mb0.transformer.0.";
  const double m = kB * kS;  // tokens per rank
  // The MLP's first product: 1536 x 1408 over K 1024 is 12 x 11 = 132
  // tiles, one whole wave on 132 SMs.
  EXPECT_EQ(d.at(block + "ffn.xgate@0_COMP"),
            micros(2 * m * kF * kD / (kGemm * kH100Peak) + kOverhead));
  // Q, K and V at once: 1536 x 3072 is 12 x 24 = 288 tiles, 3 waves.
  const double wave = 2.0 * 128 * 128 * kD / (kGemm * kH100Peak / kH100Sms);
  EXPECT_EQ(d.at(block + "mha.qkv@0_COMP"), micros(3 * wave + kOverhead));
  // The input norm reads and writes s x d bf16 values per sequence.
  EXPECT_EQ(d.at(block + "input_norm.y@0_COMP"),
            micros(2 * m * kD * 2 / (kMem * kH100Bw) + kOverhead));
  // Attention forward: Q K^T and P V, 2 x 2 b s^2 d FLOPs, at 75%;
  // its gradient of Q (the same FLOPs again) backward at 55%.
  const double attention = 4.0 * kB * kS * kS * kD;
  EXPECT_EQ(d.at(block + "mha.attn_kernel.qkv@0_COMP"),
            micros(attention / (0.75 * kH100Peak) + kOverhead));
  EXPECT_EQ(d.at(block + "mha.attn_kernel.dq@0_COMP"),
            micros(attention / (0.55 * kH100Peak) + kOverhead));
  for (const auto& [name, value] : d) EXPECT_GE(value, 1u) << name;
}

// A100: 108 SMs, its own peak; the same product is 132 tiles, two waves.
TEST(KernelModelTraces, GpuRowSetsTheFigures) {
  TempDir tmp;
  ASSERT_EQ(run(tmp, "a100", {"--compute_time", "model", "--gpu", "a100-80gb"}).status, 0);
  const std::map<std::string, uint64_t> d = durations(tmp.sub("a100"));
  const double wave = 2.0 * 128 * 128 * kD / (kGemm * kA100Peak / 108);
  EXPECT_EQ(d.at("mb0.transformer.0.ffn.xgate@0_COMP"), micros(2 * wave + kOverhead));
}

TEST(KernelModelTraces, DefaultTracesCarryNoDuration) {
  TempDir tmp;
  ASSERT_EQ(run(tmp, "default", {}).status, 0);
  ASSERT_EQ(run(tmp, "roofline", {"--compute_time", "roofline"}).status, 0);
  const std::map<std::string, uint64_t> d = durations(tmp.sub("default"));
  ASSERT_FALSE(d.empty());
  for (const auto& [name, value] : d) EXPECT_EQ(value, 0u) << name;
  for (const char* file : {"workload.0.et", "workload.1.et", "workload.json"})
    EXPECT_TRUE(read_file(tmp.sub("default") + "/" + file) ==
                read_file(tmp.sub("roofline") + "/" + file))
        << file;
  // JSON traces: no duration_micros key.
  ASSERT_EQ(run(tmp, "json", {"--chakra_schema_version", "json"}).status, 0);
  EXPECT_EQ(read_file(tmp.sub("json") + "/workload.0.et").find("duration_micros"),
            std::string::npos);
}

TEST(KernelModelTraces, JsonTracesCarryTheDurations) {
  TempDir tmp;
  ASSERT_EQ(run(tmp, "v4", {"--compute_time", "model"}).status, 0);
  ASSERT_EQ(run(tmp, "json", {"--compute_time", "model", "--chakra_schema_version", "json"}).status,
            0);
  EXPECT_EQ(durations(tmp.sub("json")), durations(tmp.sub("v4")));
}

// ASTRA-sim replays the durations: its system file has the roofline off,
// and stg's replay of it times compute from the durations.
TEST(KernelModelTraces, AstraSimSystemFileTurnsTheRooflineOff) {
  TempDir tmp;
  std::vector<std::string> model = {"--compute_time", "model", "--astra_sim", tmp.sub("sim")};
  std::vector<std::string> args = kGpt;
  args.insert(args.end(), model.begin(), model.end());
  args.push_back("--print_makespan");
  args.erase(std::find(args.begin(), args.end(), "--quiet"));
  const RunResult r = run_stg(args, tmp.path(), tmp.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(read_file(tmp.sub("sim") + "/system.json").find("\"roofline-enabled\": 0"),
            std::string::npos);
  EXPECT_NE(r.out.find("compute from duration_micros"), std::string::npos) << r.out;
  std::vector<std::string> plain = kGpt;
  plain.insert(plain.end(), {"--astra_sim", tmp.sub("roofline")});
  ASSERT_EQ(run_stg(plain, tmp.path(), tmp.path()).status, 0);
  EXPECT_NE(read_file(tmp.sub("roofline") + "/system.json").find("\"roofline-enabled\": 1"),
            std::string::npos);
}

TEST(KernelModelTraces, NonsensicalCombinationsAreRefused) {
  TempDir tmp;
  stg_test::expect_refused(run(tmp, "a", {"--compute_time", "fitted"}), "--compute_time");
  stg_test::expect_refused(
      run(tmp, "b", {"--compute_time", "model", "--chakra_schema_version", "v0.0.1"}),
      "--chakra_schema_version v0.0.1");
  stg_test::expect_refused(
      run(tmp, "c", {"--compute_time", "model", "--print_makespan", "--peak_tflops", "500"}),
      "--peak_tflops");
  stg_test::expect_refused(
      run(tmp, "d", {"--compute_time", "model", "--print_makespan", "--mem_bw_gbps", "500"}),
      "--mem_bw_gbps");
  stg_test::expect_refused(
      run(tmp, "e", {"--compute_time", "model", "--gpu", "a100-80gb", "--dtype", "fp8"}),
      "no FP8 tensor cores");
  for (const char* dir : {"a", "b", "c", "d", "e"})
    EXPECT_FALSE(std::filesystem::exists(tmp.sub(dir) + "/workload.0.et")) << dir;
}

}  // namespace
