// Sliding-window attention (--window, --global_every; docs/models_2025.md)
// against formulas written here from the definition, never stg's own
// functions. A query at position i attends over keys i-W+1..i, so per
// (sequence, head):
//   - training and prefill, Megatron-LM's count (no causal saving): Q.K^T
//     and P.V are 2·2·S·K·d FLOPs for S queries of K keys each, K = S under
//     full attention and W under a window; backward is twice forward;
//   - with the causal saving: K = S/2 full (the convention of the causal
//     half, S^2/2 pairs), W - W^2/(2S) windowed (the band's W·S - W^2/2
//     pairs over S queries);
//   - serving: a sequence's KV cache holds its last W tokens (2 x KV heads
//     x head dim elements each) and a decode step reads all W of them:
//     4·W·d FLOPs per query head;
//   - the tensor- and context-parallel collectives do not change.
// A tiny llama (grouped-query attention): 4 blocks, hidden 256, 8 query
// heads of 32, 4 KV heads, sequence 256.
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

constexpr int64_t kBlocks = 4, kHidden = 256, kHeads = 8, kKvHeads = 4, kSeq = 256;
constexpr int64_t kHeadDim = kHidden / kHeads;

struct Plan {
  int64_t tp = 2, cp = 1, batch = 2;
  bool causal = false;
  CpAlgo algo = CpAlgo::kAllGather;
};

Options training(const Plan& p, const std::string& dir) {
  Options o;
  o.output_dir = dir;
  o.model = "llama";
  o.framework = "megatron";
  o.num_stacks = kBlocks;
  o.dmodel = kHidden;
  o.dff = 4 * kHidden;
  o.head = kHeads;
  o.component_flags["--kvhead"] = kKvHeads;
  o.dvocal = 1024;
  o.seq = kSeq;
  o.batch = o.micro_batch = p.batch;
  o.degree["tp"] = p.tp;
  o.degree["sp"] = p.cp;
  o.cp_algo = p.algo;
  if (p.causal) o.causal_saving = true;
  return o;
}

// One rank's FLOPs and the sizes of its communication nodes, from its file.
struct RankTotals {
  int64_t flops = 0;
  std::map<int64_t, int64_t> comm_sizes;  // size -> count
};

RankTotals read_rank(const std::string& dir, int rank) {
  RankTotals t;
  std::vector<tools::TraceNode> nodes;
  tools::TraceFormat format;
  std::string error;
  EXPECT_TRUE(tools::read_trace(dir + "/workload." + std::to_string(rank) + ".et", nodes, format,
                                error))
      << error;
  for (const tools::TraceNode& n : nodes) {
    if (n.kind == tools::NodeKind::kComp)
      t.flops += n.num_ops.value_or(0);
    else
      ++t.comm_sizes[n.comm_size.value_or(0)];
  }
  return t;
}

RankTotals run_training(const Plan& p, const std::map<std::string, int64_t>& flags,
                        stg_test::TempDir& tmp, const std::string& name) {
  Options o = training(p, (tmp.path() / name).string());
  o.component_flags.insert(flags.begin(), flags.end());
  generate(o);
  return read_rank(o.output_dir, 0);
}

// Per rank: 3 passes (forward, and backward at twice forward) of
// 4·b·(S/cp)·K·(a/tp)·d FLOPs per block, K keys per query.
int64_t attention_flops(const Plan& p, int64_t keys_times_2s, int64_t blocks) {
  // keys_times_2s: K·2S, so that W - W^2/(2S) stays whole.
  return blocks * 3 * 4 * p.batch * (kSeq / p.cp) * keys_times_2s * (kHeads / p.tp) * kHeadDim /
         (2 * kSeq);
}

TEST(SlidingWindow, TrainingFlopsAreTheBandsAndCollectivesStay) {
  stg_test::TempDir tmp({.prefix = "stg_swa"});
  const Plan p;
  const int64_t w = 64;
  const RankTotals full = run_training(p, {}, tmp, "full");
  const RankTotals local = run_training(p, {{"--window", w}}, tmp, "local");
  EXPECT_EQ(full.flops - local.flops, attention_flops(p, (kSeq - w) * 2 * kSeq, kBlocks));
  EXPECT_EQ(full.comm_sizes, local.comm_sizes);  // the tp all-reduces and all-gathers
  // Gemma 2's pattern: blocks 2 and 4 keep full attention.
  const RankTotals half = run_training(p, {{"--window", w}, {"--global_every", 2}}, tmp, "half");
  EXPECT_EQ(full.flops - half.flops, attention_flops(p, (kSeq - w) * 2 * kSeq, kBlocks / 2));
}

TEST(SlidingWindow, CausalSavingChargesTheBandsPairs) {
  stg_test::TempDir tmp({.prefix = "stg_swa"});
  Plan p;
  p.causal = true;
  const int64_t w = 64;
  const RankTotals full = run_training(p, {}, tmp, "full");
  const RankTotals local = run_training(p, {{"--window", w}}, tmp, "local");
  // K·2S: S/2 -> S^2, W - W^2/(2S) -> 2·W·S - W^2.
  const int64_t full_keys = kSeq * kSeq, band_keys = 2 * w * kSeq - w * w;
  EXPECT_EQ(full.flops - local.flops, attention_flops(p, full_keys - band_keys, kBlocks));
}

TEST(SlidingWindow, ContextParallelAllGatherAndUlysses) {
  for (const CpAlgo algo : {CpAlgo::kAllGather, CpAlgo::kUlysses}) {
    SCOPED_TRACE(algo == CpAlgo::kUlysses ? "ulysses" : "allgather");
    stg_test::TempDir tmp({.prefix = "stg_swa"});
    Plan p;
    p.cp = 2;
    p.algo = algo;
    const int64_t w = 32;
    const RankTotals full = run_training(p, {}, tmp, "full");
    const RankTotals local = run_training(p, {{"--window", w}}, tmp, "local");
    // Each rank: S/cp queries of every head (all-gather), or all S queries
    // of a/(tp·cp) heads (Ulysses): the same count.
    EXPECT_EQ(full.flops - local.flops, attention_flops(p, (kSeq - w) * 2 * kSeq, kBlocks));
    EXPECT_EQ(full.comm_sizes, local.comm_sizes);
  }
}

TEST(SlidingWindow, AWindowOfTheWholeSequenceIsFullAttention) {
  stg_test::TempDir tmp({.prefix = "stg_swa"});
  Options full = training(Plan{}, (tmp.path() / "full").string());
  Options same = training(Plan{}, (tmp.path() / "same").string());
  same.component_flags["--window"] = kSeq;
  generate(full);
  const RunSummary s = generate(same);
  for (const std::string f : {"workload.0.et", "workload.1.et", "workload.json"})
    EXPECT_EQ(stg_test::read_file(full.output_dir + "/" + f),
              stg_test::read_file(same.output_dir + "/" + f))
        << f;
  std::string notes;
  for (const std::string& n : s.notes) notes += n + "\n";
  EXPECT_NE(notes.find("--window 256 is at least the longest context (256 tokens)"),
            std::string::npos)
      << notes;
}

// Serving: T requests of P prompt tokens, D decode steps, bf16 caches.
TEST(SlidingWindow, ServingCachesAndReadsTheWindow) {
  constexpr int64_t T = 4, P = 128, D = 3, w = 32, tp = 2;
  stg_test::TempDir tmp({.prefix = "stg_swa"});
  auto serve = [&](const std::string& name, std::map<std::string, int64_t> flags) {
    Options o = training(Plan{}, (tmp.path() / name).string());
    o.seq.reset();
    o.batch.reset();
    o.micro_batch.reset();
    o.serving = Serving{};
    o.serving->requests = T;
    o.serving->prompt_len = P;
    o.serving->decode_steps = D;
    o.component_flags.insert(flags.begin(), flags.end());
    return generate(o);
  };
  const RunSummary full = serve("full", {});
  const RunSummary local = serve("local", {{"--window", w}});
  const int64_t token_bytes = 2 * (kKvHeads / tp) * kHeadDim * 2;  // K and V, bf16
  EXPECT_EQ(local.serving->stages.at(0).memory.kv_cache, kBlocks * T * w * token_bytes);
  EXPECT_EQ(full.serving->stages.at(0).memory.kv_cache, kBlocks * T * (P + D) * token_bytes);
  std::map<std::string, report::PhaseFigures> f, l;
  for (const report::PhaseFigures& x : full.serving->stages.at(0).phases) f[x.phase] = x;
  for (const report::PhaseFigures& x : local.serving->stages.at(0).phases) l[x.phase] = x;
  // Prefill: P queries of each request against P keys, or W. Besides, the
  // full prefill copies its P tokens' K and V into the cache, the windowed
  // one slices out the last W (K and V) and copies those: stg counts one
  // operation per element copied.
  const int64_t kv_elements = 2 * (kKvHeads / tp) * kHeadDim;  // per token
  EXPECT_EQ(f.at("prefill").flops - l.at("prefill").flops,
            kBlocks * 4 * T * P * (P - w) * (kHeads / tp) * kHeadDim +
                kBlocks * T * kv_elements * (P - 2 * w));
  for (const int64_t step : {int64_t{0}, D - 1}) {
    const std::string name = "decode " + std::to_string(step);
    const int64_t context = P + 1 + step;  // the prompt, earlier steps' tokens and its own
    EXPECT_EQ(l.at(name).kv_bytes, kBlocks * T * w * token_bytes) << name;
    EXPECT_EQ(f.at(name).flops - l.at(name).flops,
              kBlocks * 4 * T * (context - w) * (kHeads / tp) * kHeadDim)
        << name;
    EXPECT_EQ(f.at(name).comm_bytes, l.at(name).comm_bytes) << name;
  }
}

TEST(SlidingWindow, RefusesWhatItCannotModelInOneLine) {
  const std::vector<std::string> llama = {"--model_type", "llama", "--num_stacks", "2",
                                          "--dmodel",     "256",   "--head",       "8",
                                          "--kvhead",     "4"};
  auto with = [&](std::vector<std::string> head, const std::vector<std::string>& tail) {
    head.insert(head.end(), llama.begin(), llama.end());
    head.insert(head.end(), tail.begin(), tail.end());
    return head;
  };
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {with({}, {"--seq", "256", "--cp", "2", "--cp_algo", "ring", "--window", "64"}),
       "needs --cp_algo allgather or ulysses"},
      {with({}, {"--window", "0"}), "--window 0"},
      {with({"infer"}, {"--requests", "4", "--prompt_len", "64", "--decode_steps", "4", "--window",
                        "66"}),
       "--window 66 lies between --prompt_len 64 and the last decode step's context 68"},
      {with({"infer"}, {"--requests", "4", "--prompt_len", "64", "--decode_steps", "4", "--cp",
                        "2", "--window", "33"}),
       "--window 33 is not divisible by --cp 2"},
      {{"--window", "64"}, "--window belongs to a mixer of the decoder models"},
      {{"--model_type", "deepseek", "--num_stacks", "2", "--window", "64"},
       "--window applies to multi-head and grouped-query attention"},
  };
  for (const auto& [args, message] : cases) {
    SCOPED_TRACE(message);
    stg_test::TempDir tmp({.prefix = "stg_swa"});
    std::vector<std::string> a = args;
    a.insert(a.end(), {"--output_dir", (tmp.path() / "out").string()});
    const stg_test::RunResult r = stg_test::run_stg(a, tmp.path());
    stg_test::expect_refused(r, message);
    EXPECT_FALSE(fs::exists(tmp.path() / "out"));
  }
}

// A Mistral or Gemma config's sliding_window and sliding_window_pattern are
// the flags; a Qwen config's use_sliding_window stays its family's.
TEST(SlidingWindow, HuggingFaceConfigsSetTheWindow) {
  stg_test::TempDir tmp({.prefix = "stg_swa"});
  const std::string config = (tmp.path() / "config.json").string();
  stg_test::write_file(config, R"({"architectures": ["MistralForCausalLM"], "hidden_size": 256,
    "intermediate_size": 1024, "num_attention_heads": 8, "num_key_value_heads": 4,
    "num_hidden_layers": 4, "vocab_size": 1024, "sliding_window": 64,
    "sliding_window_pattern": 2})");
  const std::vector<std::string> run = {"--seq", "256", "--batch",     "2",       "--tp",
                                         "2",     "--quiet", "--framework", "megatron"};
  auto with = [&](std::vector<std::string> args, const std::string& out) {
    args.insert(args.end(), run.begin(), run.end());
    args.insert(args.end(), {"--output_dir", (tmp.path() / out).string()});
    const stg_test::RunResult r = stg_test::run_stg(args, tmp.path());
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err.find("sliding_window"), std::string::npos) << r.err;  // read, not noted
  };
  with({"--hf_config", config}, "hf");
  with({"--model_type", "llama", "--dmodel", "256", "--dff", "1024", "--head", "8", "--kvhead",
        "4", "--num_stacks", "4", "--dvocal", "1024", "--window", "64", "--global_every", "2"},
       "flags");
  with({"--hf_config", config, "--window", "256"}, "full");  // a flag given wins
  for (const std::string f : {"workload.0.et", "workload.1.et"}) {
    EXPECT_EQ(stg_test::read_file((tmp.path() / "hf" / f).string()),
              stg_test::read_file((tmp.path() / "flags" / f).string()));
  }
  EXPECT_NE(stg_test::read_file((tmp.path() / "hf/workload.0.et").string()),
            stg_test::read_file((tmp.path() / "full/workload.0.et").string()));
}

}  // namespace
}  // namespace stg
