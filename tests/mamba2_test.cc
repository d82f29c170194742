// Mamba-2 blocks (--mamba_state; docs/models_2025.md "Mamba-2 hybrids")
// against formulas written here from the Mamba-2 paper (Dao and Gu 2024,
// the SSD layer) and Megatron-LM's tensor-parallel Mamba layer, never stg's
// own functions. A tiny llama: hidden d = 1024, 4 blocks, GQA attention of
// 16 heads (4 KV heads) of 64, tp 2; Mamba-2 with H heads of P = 64 dims
// (d_inner = H·P), G groups of B and C of state N, a convolution of width
// K = 4, chunks of Q tokens:
//   - weights of a block: in_proj d·(2·H·P + 2·G·N + H), the convolution
//     (H·P + 2·G·N)·K, dt_bias, A and D (3·H), the gate's norm H·P and
//     out_proj H·P·d; all split over tp;
//   - the scan's forward FLOPs per token: 2·Q·N per group (C·B^T inside a
//     chunk), per head 2·Q·P (its product with x) + 4·N·P (chunk states and
//     their outputs), and 2·N·P per head per chunk between chunks; backward
//     twice that: only these terms depend on Q;
//   - the collectives of a Mamba block are attention's (in_proj column
//     parallel, out_proj row parallel);
//   - Megatron-LM keeps per token (2 bytes each) the in_proj output
//     (2·H·P + 2·G·N + H), the convolution's output (H·P + 2·G·N), the scan's
//     output and the gate's output (H·P each), against attention's Q, K, V
//     and output (2·d + 4·d·kv/a + 2·d bytes per token);
//   - serving keeps per sequence the state H·P·N and the convolution's last
//     K-1 inputs (H·P + 2·G·N each) instead of a KV cache; a decode step
//     reads that state whatever the context.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "stg/generate.h"
#include "stg/options.h"
#include "stg/tools/trace_reader.h"
#include "support/files.h"
#include "support/refused.h"
#include "support/run_stg.h"
#include "support/temp_dir.h"

namespace stg {
namespace {

namespace fs = std::filesystem;

constexpr int64_t d = 1024, L = 4, a = 16, g = 4, hd = 64, tp = 2, s = 1024, b = 2;
constexpr int64_t P = 64, K = 4;

struct Mamba {
  int64_t H = 2 * d / P, N = 64, G = 2, Q = 256;
  int64_t period = 0, offset = 0;
  std::map<std::string, int64_t> flags() const {
    std::map<std::string, int64_t> f = {
        {"--mamba_state", N}, {"--mamba_heads", H}, {"--mamba_groups", G}, {"--mamba_chunk", Q}};
    if (period) f["--attention_period"] = period;
    if (offset) f["--attention_offset"] = offset;
    return f;
  }
  int64_t params() const {
    return d * (2 * H * P + 2 * G * N + H) + (H * P + 2 * G * N) * K + 3 * H + H * P + H * P * d;
  }
  // The scan's forward FLOPs per rank for b sequences of s tokens.
  int64_t scan_flops() const {
    return (b * s * (2 * Q * N * G + H * (2 * Q * P + 4 * N * P)) + b * (s / Q) * 2 * H * N * P) /
           tp;
  }
};

Options llama(const std::string& dir) {
  Options o;
  o.output_dir = dir;
  o.model = "llama";
  o.framework = "megatron";
  o.num_stacks = L;
  o.dmodel = d;
  o.dff = 4 * d;
  o.head = a;
  o.component_flags["--kvhead"] = g;
  o.seq = s;
  o.batch = o.micro_batch = b;
  o.degree["tp"] = tp;
  return o;
}

struct Totals {
  int64_t flops = 0;
  std::map<std::pair<int, int64_t>, int64_t> colls;  // (type, size) -> count
};

Totals read_rank0(const std::string& dir) {
  Totals t;
  std::vector<tools::TraceNode> nodes;
  tools::TraceFormat format;
  std::string error;
  EXPECT_TRUE(tools::read_trace(dir + "/workload.0.et", nodes, format, error)) << error;
  for (const tools::TraceNode& n : nodes) {
    if (n.kind == tools::NodeKind::kComp) t.flops += n.num_ops.value_or(0);
    if (n.kind == tools::NodeKind::kColl)
      ++t.colls[{n.comm_type.value_or(-1), n.comm_size.value_or(0)}];
  }
  return t;
}

struct Output {
  RunSummary summary;
  Totals rank0;
};

Output run(stg_test::TempDir& tmp, const std::string& name, const std::map<std::string, int64_t>& f,
        bool report = true) {
  Options o = llama((tmp.path() / name).string());
  o.component_flags.insert(f.begin(), f.end());
  o.print_gpu_vram = report;
  Output r;
  r.summary = generate(o);
  r.rank0 = read_rank0(o.output_dir);
  return r;
}

TEST(Mamba2, WeightsAndActivationsOfTheBlocks) {
  stg_test::TempDir tmp({.prefix = "stg_mamba"});
  const Mamba m;
  const Output attention = run(tmp, "attention", {});
  const Output mamba = run(tmp, "mamba", m.flags());
  const int64_t attention_params = d * (a + 2 * g) * hd + a * hd * d;
  const report::StageMemory& x = attention.summary.memory.at(0);
  const report::StageMemory& y = mamba.summary.memory.at(0);
  EXPECT_DOUBLE_EQ(y.params - x.params, 2.0 * L * (m.params() - attention_params) / tp);  // bf16
  const double kept_mamba = 2.0 * s * b *
                            ((2 * m.H * P + 2 * m.G * m.N + m.H) + (m.H * P + 2 * m.G * m.N) +
                             2 * m.H * P);
  const double kept_attention = s * b * (2.0 * d + 4.0 * d * g / a + 2.0 * d);
  EXPECT_DOUBLE_EQ(y.activations - x.activations, L * (kept_mamba - kept_attention) / tp);
}

TEST(Mamba2, ScanFlopsFollowTheChunkAndCollectivesStayAttentions) {
  stg_test::TempDir tmp({.prefix = "stg_mamba"});
  Mamba wide, narrow;
  narrow.Q = 64;
  const Output attention = run(tmp, "attention", {}, false);
  const Output w = run(tmp, "wide", wide.flags(), false);
  const Output n = run(tmp, "narrow", narrow.flags(), false);
  // Forward and backward (twice the forward) of every block's scan.
  EXPECT_EQ(w.rank0.flops - n.rank0.flops, 3 * L * (wide.scan_flops() - narrow.scan_flops()));
  EXPECT_EQ(w.rank0.colls, attention.rank0.colls);
  // Granite 4.0-H's pattern on 4 blocks: period 2 from block 1 keeps
  // attention in blocks 1 and 3.
  Mamba half = wide;
  half.period = 2;
  half.offset = 1;
  const Output h = run(tmp, "half", half.flags(), false);
  EXPECT_EQ(h.rank0.flops - attention.rank0.flops, (w.rank0.flops - attention.rank0.flops) / 2);
}

TEST(Mamba2, ServingKeepsTheStateInsteadOfAKvCache) {
  constexpr int64_t T = 4, prompt = 512, D = 3;
  stg_test::TempDir tmp({.prefix = "stg_mamba"});
  const Mamba m;
  Options o = llama((tmp.path() / "serve").string());
  o.seq.reset();
  o.batch.reset();
  o.micro_batch.reset();
  o.serving = Serving{};
  o.serving->requests = T;
  o.serving->prompt_len = prompt;
  o.serving->decode_steps = D;
  for (const auto& [flag, value] : m.flags()) o.component_flags[flag] = value;
  const RunSummary r = generate(o);
  const int64_t state = (m.H * P * m.N + (K - 1) * (m.H * P + 2 * m.G * m.N)) / tp;  // elements
  const int64_t bytes = L * T * state * 2;                                           // bf16
  const report::StageServing& stage = r.serving->stages.at(0);
  EXPECT_EQ(stage.memory.kv_cache, bytes);
  std::map<std::string, report::PhaseFigures> phases;
  for (const report::PhaseFigures& p : stage.phases) phases[p.phase] = p;
  for (const std::string step : {"decode 0", "decode 2"}) EXPECT_EQ(phases.at(step).kv_bytes, bytes);
  EXPECT_EQ(phases.at("decode 0").flops, phases.at("decode 2").flops);  // no context to grow
}

TEST(Mamba2, RefusesWhatItCannotModelInOneLine) {
  const std::vector<std::string> base = {"--model_type", "llama", "--num_stacks", "2", "--dmodel",
                                         "256",          "--head", "8",           "--kvhead",
                                         "4",            "--seq",  "512"};
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--mamba_state", "16", "--cp", "2"}, "--mamba_state with --cp 2"},
      {{"--mamba_state", "16", "--tp", "2"}, "--mamba_groups 1 is not divisible by --tp 2"},
      {{"--mamba_state", "16", "--mamba_heads", "6", "--mamba_groups", "4"},
       "--mamba_groups 4 does not divide the 6 Mamba heads"},
      {{"--mamba_state", "16", "--mamba_chunk", "200"}, "is not a multiple of --mamba_chunk 200"},
      {{"--mamba_state", "16", "--attention_period", "2", "--attention_offset", "2"},
       "--attention_offset 2 is not below --attention_period 2"},
      {{"--mamba_state", "0"}, "--mamba_state 0"},
  };
  for (const auto& [extra, message] : cases) {
    SCOPED_TRACE(message);
    stg_test::TempDir tmp({.prefix = "stg_mamba"});
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    args.insert(args.end(), {"--output_dir", (tmp.path() / "out").string()});
    const stg_test::RunResult r = stg_test::run_stg(args, tmp.path());
    stg_test::expect_refused(r, message);
    EXPECT_FALSE(fs::exists(tmp.path() / "out"));
  }
}

// A config's Mamba fields and its layer_types (Granite 4.0-H) are the flags.
TEST(Mamba2, HuggingFaceFieldsAndLayerTypesAreTheFlags) {
  stg_test::TempDir tmp({.prefix = "stg_mamba"});
  const std::string config = (tmp.path() / "config.json").string();
  stg_test::write_file(config, R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 256,
    "intermediate_size": 1024, "num_attention_heads": 8, "num_key_value_heads": 4,
    "num_hidden_layers": 4, "vocab_size": 1024, "mamba_d_state": 32, "mamba_n_heads": 8,
    "mamba_d_head": 64, "mamba_n_groups": 2, "mamba_d_conv": 4, "mamba_chunk_size": 128,
    "layer_types": ["mamba", "attention", "mamba", "attention"]})");
  const std::vector<std::string> common = {"--seq",  "512",         "--batch",   "2",
                                           "--tp",   "2",           "--quiet",   "--framework",
                                           "megatron"};
  auto with = [&](std::vector<std::string> args, const std::string& out) {
    args.insert(args.end(), common.begin(), common.end());
    args.insert(args.end(), {"--output_dir", (tmp.path() / out).string()});
    const stg_test::RunResult r = stg_test::run_stg(args, tmp.path());
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err.find("mamba"), std::string::npos) << r.err;  // read, not noted
  };
  with({"--hf_config", config}, "hf");
  with({"--model_type", "llama", "--dmodel", "256", "--dff", "1024", "--head", "8", "--kvhead", "4",
        "--num_stacks", "4", "--dvocal", "1024", "--mamba_state", "32", "--mamba_heads", "8",
        "--mamba_groups", "2", "--mamba_chunk", "128", "--attention_period", "2",
        "--attention_offset", "1"},
       "flags");
  for (const std::string f : {"workload.0.et", "workload.1.et"})
    EXPECT_EQ(stg_test::read_file((tmp.path() / "hf" / f).string()),
              stg_test::read_file((tmp.path() / "flags" / f).string()));
}

}  // namespace
}  // namespace stg
