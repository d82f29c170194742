// --gpu NAME (docs/gpus.md): each GPU's datasheet figures, written out here
// from the vendors' documents (dense peaks are half the sparse ones they
// print; per-direction link bandwidth is half the bidirectional one), must
// reach the ASTRA-sim system and network files, the serving memory limit
// and the replay's roofline; explicit flags win; bad names and FP8 on a GPU
// without it are refused in one line.
#include <cstdint>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "support/files.h"
#include "support/run_stg.h"
#include "support/temp_dir.h"

namespace {

using stg_test::read_file;
using stg_test::run_stg;
using stg_test::RunResult;
using stg_test::TempDir;

struct Datasheet {
  std::string gpu;
  std::string bf16, fp8;  // dense TFLOPS as the system file prints them ("" : no FP8)
  std::string hbm_gbps;
  double hbm_gb;
  std::string scale_up, scale_out;  // GB/s per direction, as the network file prints them
};

// H100 SXM: 1,979 / 3,958 TFLOPS sparse, 3.35 TB/s, 80 GB, NVLink 900 GB/s.
// H800 SXM: as H100, NVLink 400 GB/s. H200 SXM: 141 GB at 4.8 TB/s.
// A100 80GB SXM: 624 TFLOPS sparse BF16, no FP8, 2,039 GB/s, NVLink 600 GB/s,
// 200 Gb/s HDR per GPU. HGX B200: 4.5 / 9 PFLOPS sparse per GPU, 180 GB at
// 8 TB/s, NVLink 1.8 TB/s. MI300X: 2,614.9 / 5,229.8 TFLOPS sparse, 192 GB
// at 5.3 TB/s, 7 Infinity Fabric links of 128 GB/s.
const std::vector<Datasheet> kSheets = {
    {"h100-sxm", "989.4", "1978.9", "3350", 80, "450.0", "50.0"},
    {"h800", "989.4", "1978.9", "3350", 80, "200.0", "50.0"},
    {"h200", "989.4", "1978.9", "4800", 141, "450.0", "50.0"},
    {"a100-80gb", "312", "", "2039", 80, "300.0", "25.0"},
    {"b200", "2250", "4500", "8000", 180, "900.0", "50.0"},
    {"mi300x", "1307.4", "2614.9", "5300", 192, "448.0", "50.0"},
};

const std::vector<std::string> kModel = {
    "--model_type", "gpt",   "--num_stacks", "2",  "--dmodel",  "256", "--dff",   "1024",
    "--head",       "8",     "--seq",        "64", "--batch",   "32",  "--units", "physical",
    "--quiet",      "--tp",  "8",            "--dp", "2"};

RunResult run(const TempDir& tmp, std::vector<std::string> extra) {
  std::vector<std::string> args = kModel;
  args.insert(args.end(), extra.begin(), extra.end());
  return run_stg(args, tmp.path(), tmp.path());
}

std::string field(const std::string& text, const std::string& key) {
  std::smatch m;
  const std::regex r("\"" + key + "\": ([0-9.]+)");
  return std::regex_search(text, m, r) ? m[1].str() : "";
}

std::string yaml(const std::string& text, const std::string& key) {
  std::smatch m;
  const std::regex r(key + ": \\[ ([^\\]]*) \\]");
  return std::regex_search(text, m, r) ? m[1].str() : "";
}

TEST(Gpus, DatasheetFiguresReachTheAstraSimFiles) {
  for (const Datasheet& s : kSheets) {
    SCOPED_TRACE(s.gpu);
    TempDir tmp;
    ASSERT_EQ(run(tmp, {"--gpu", s.gpu, "--astra_sim", tmp.sub("bf16")}).status, 0);
    const std::string sys = read_file(tmp.sub("bf16") + "/system.json");
    EXPECT_EQ(field(sys, "peak-perf"), s.bf16);
    EXPECT_EQ(field(sys, "local-mem-bw"), s.hbm_gbps);
    // dp 2 then tp 8 in rank order: the tp group of 8 fills a scale-up
    // domain (Megatron-LM places tp innermost), the two dp ranks are in two
    // domains.
    const std::string net = read_file(tmp.sub("bf16") + "/network.yml");
    EXPECT_EQ(yaml(net, "npus_count"), "2, 8");
    EXPECT_EQ(yaml(net, "bandwidth"), s.scale_out + ", " + s.scale_up);
    const RunResult fp8 = run(tmp, {"--gpu", s.gpu, "--dtype", "fp8", "--astra_sim", tmp.sub("f")});
    if (s.fp8.empty()) {
      EXPECT_EQ(fp8.status, 2);
      EXPECT_NE(fp8.err.find("has no FP8 tensor cores"), std::string::npos) << fp8.err;
      EXPECT_FALSE(std::filesystem::exists(tmp.sub("f")));
    } else {
      ASSERT_EQ(fp8.status, 0) << fp8.err;
      EXPECT_EQ(field(read_file(tmp.sub("f") + "/system.json"), "peak-perf"), s.fp8);
    }
  }
}

TEST(Gpus, ExplicitFlagsWinAndNamesAreChecked) {
  TempDir tmp;
  ASSERT_EQ(run(tmp, {"--gpu", "H200", "--network_dims", "4,4", "--astra_sim", tmp.sub("a")}).status,
            0);
  EXPECT_EQ(yaml(read_file(tmp.sub("a") + "/network.yml"), "bandwidth"), "450.0, 50.0");
  const RunResult bad = run(tmp, {"--gpu", "h100", "--output_dir", tmp.sub("b")});
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--gpu 'h100' is unknown: did you mean h100-sxm?"), std::string::npos)
      << bad.err;
  EXPECT_FALSE(std::filesystem::exists(tmp.sub("b")));
}

// stg infer: the HBM capacity is the memory limit unless --hbm_gb is given.
TEST(Gpus, ServingFitsTheGpusMemory) {
  TempDir tmp;
  // About 128 GB per rank (weights 14.5, KV cache 68.7: 32 blocks x 32
  // requests x 16385 tokens x 2 x 8 KV heads x 128 x 2 bytes, activations
  // 45): more than an H100's 80, less than an H200's 141.
  const std::vector<std::string> serve = {
      "infer",        "--model_type", "llama", "--num_stacks", "32",   "--dmodel",     "4096",
      "--dff",        "14336",        "--head", "32",          "--kvhead", "8",       "--requests",
      "32",           "--prompt_len", "16384", "--decode_steps", "1", "--quiet"};
  auto with = [&](std::vector<std::string> extra, const std::string& out) {
    std::vector<std::string> args = serve;
    args.insert(args.end(), extra.begin(), extra.end());
    args.insert(args.end(), {"--output_dir", tmp.sub(out), "--ranks", "0-0"});
    return run_stg(args, tmp.path(), tmp.path());
  };
  const RunResult h100 = with({"--gpu", "h100-sxm"}, "h100");
  EXPECT_EQ(h100.status, 2);
  EXPECT_NE(h100.err.find("more than --hbm_gb 80"), std::string::npos) << h100.err;
  EXPECT_EQ(with({"--gpu", "h200"}, "h200").status, 0);
  const RunResult given = with({"--gpu", "h200", "--hbm_gb", "80"}, "given");
  EXPECT_EQ(given.status, 2);
  EXPECT_NE(given.err.find("more than --hbm_gb 80"), std::string::npos) << given.err;
}

}  // namespace
