// The memory report of --framework megatron (--print_gpu_vram 1) against
// Korthikanti et al. 2022 and Megatron-LM's mixed precision, with every
// expected figure worked out in this file from the model dimensions and the
// parallel plan (never by calling stg's report functions):
//   activations per block and micro-batch, bytes (s: sequence per rank,
//   b: sequences per micro-batch per rank, h hidden, f FFN, t tp):
//     gpt without tp          34·sbh                  (Korthikanti Table 2,
//     tp, no sequence par.    (10 + 24/t)·sbh          fused attention: no
//     tp + sequence par.      34·sbh/t                 5·a·s²·b term)
//     full recompute          2·sbh (/t with sequence parallelism)
//   times the blocks of the stage and the micro-batches in flight (1F1B:
//   pp - stage; GPipe: all); the last stage adds its fp32 logits 4·s·b·V/t
//   and the inputs of its final norm and output layer 4·sbh (Korthikanti
//   §4.3), the first stage gpt's embedding dropout mask sbh (both /t with
//   sequence parallelism);
//   parameters 2 bytes (bf16), gradients 4 (fp32), optimizer 12 (fp32 master,
//   Adam's m and v), the optimizer divided over dp by the distributed
//   optimizer (ZeRO 1), gradients too from ZeRO 2.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "stg/generate.h"
#include "stg/options.h"
#include "support/temp_dir.h"

namespace stg {
namespace {

struct Plan {
  std::string kind = "gpt";
  int64_t l = 4, h = 256, f = 1024, a = 8, kv = 8, s = 128, V = 1024;
  int64_t B = 8, micro = 8;  // global batch and global micro-batch (over dp)
  int64_t dp = 1, tp = 1, pp = 1;
  bool sp = true;
  Recompute recompute = Recompute::kNone;
  int zero = 0;
  bool tie = true;
  lower::Schedule schedule = lower::Schedule::kNone;
  DType grad = DType::kFp32;
};

std::vector<report::StageMemory> run(const Plan& p) {
  stg_test::TempDir tmp({.prefix = "stg_megatron_memory"});
  Options o;
  o.output_dir = tmp.path().string();
  o.framework = "megatron";
  o.model = p.kind;
  o.num_stacks = p.l;
  o.dmodel = p.h;
  o.dff = p.f;
  o.head = p.a;
  if (p.kind != "gpt") o.component_flags["--kvhead"] = p.kv;
  o.seq = p.s;
  o.dvocal = p.V;
  o.batch = p.B;
  o.micro_batch = p.micro;
  o.degree["dp"] = p.dp;
  o.degree["tp"] = p.tp;
  o.degree["pp"] = p.pp;
  o.tpsp = p.sp;
  o.activation_recompute = p.recompute;
  o.zero_stage = p.zero;
  o.tie_embeddings = p.tie;
  o.pipeline_schedule = p.schedule;
  o.grad_dtype = p.grad;
  o.print_gpu_vram = true;
  o.ranks = "0-0";
  o.threads = 2;
  return generate(o).memory;
}

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

void expect_near(double actual, double expected, const std::string& what) {
  EXPECT_NEAR(actual, expected, 1e-9 * expected + 1e-6) << what;
}

// The issue's case: gpt, h 4096, a 32, s 2048, b 1, 4 blocks, one rank:
// 34·s·b·h per block = 1.0625 GiB for the 4 blocks (the unfused formula,
// s·b·h·(34 + 5·a·s/h), would give 3.5625 GiB), plus the logits.
TEST(MegatronMemory, IssueCaseFusedAttention) {
  Plan p;
  p.h = 4096, p.f = 16384, p.a = 32, p.s = 2048, p.B = 1, p.micro = 1, p.V = 51200;
  const auto m = run(p);
  ASSERT_EQ(m.size(), 1u);
  const double sbh = 2048.0 * 1 * 4096;
  const double ends = 4 * sbh + sbh;  // final norm and output inputs; embedding dropout mask
  expect_near(m[0].activations - m[0].logits, 4 * 34 * sbh + ends, "blocks");
  EXPECT_DOUBLE_EQ((m[0].activations - m[0].logits - ends) / kGiB, 1.0625);
  expect_near(m[0].logits, 4.0 * 2048 * 1 * 51200, "fp32 logits");
  EXPECT_EQ(m[0].blocks, 4);
}

// Parameters of a gpt rank: 4 blocks of 4h² + 2hf weights (stg models no
// biases or norm weights), the tied embedding V·h once.
double gpt_params(const Plan& p, int64_t blocks, bool embedding, int64_t t) {
  return static_cast<double>(blocks * (4 * p.h * p.h + 2 * p.h * p.f) / t +
                             (embedding ? p.V * p.h / t : 0));
}

TEST(MegatronMemory, ParametersGradientsOptimizerZero0) {
  Plan p;
  const auto m = run(p);
  ASSERT_EQ(m.size(), 1u);
  const double n = gpt_params(p, 4, true, 1);
  expect_near(m[0].params, 2 * n, "bf16 weights");
  expect_near(m[0].grads, 4 * n, "fp32 gradients");
  expect_near(m[0].optimizer, 12 * n, "fp32 master + Adam m, v");
}

TEST(MegatronMemory, Bf16GradientsAreTwoBytes) {
  Plan p;
  p.grad = DType::kBf16;
  const auto m = run(p);
  expect_near(m[0].grads, 2 * gpt_params(p, 4, true, 1), "bf16 gradients");
}

TEST(MegatronMemory, UntiedEmbeddingsHoldTwoMatrices) {
  Plan p;
  p.tie = false;
  const auto m = run(p);
  const double n = gpt_params(p, 4, true, 1) + static_cast<double>(p.V * p.h);
  expect_near(m[0].params, 2 * n, "input and output embedding");
}

TEST(MegatronMemory, DistributedOptimizerDividesTheOptimizerOverDp) {
  Plan p;
  p.dp = 4, p.B = 16, p.micro = 16, p.zero = 1;
  const auto m = run(p);
  const double n = gpt_params(p, 4, true, 1);
  expect_near(m[0].params, 2 * n, "weights stay whole");
  expect_near(m[0].grads, 4 * n, "gradient buffer stays whole");
  expect_near(m[0].optimizer, 12 * n / 4, "optimizer shard");
  p.zero = 2;
  const auto m2 = run(p);
  expect_near(m2[0].grads, 4 * n / 4, "ZeRO 2 gradient shard");
}

TEST(MegatronMemory, Zero3ShardsEverythingOverDp) {
  Plan p;
  p.dp = 2, p.B = 16, p.micro = 16, p.zero = 3, p.tie = false;
  const auto m = run(p);
  // The blocks are sharded over dp; stg keeps the embeddings whole under
  // ZeRO 3 (docs/megatron.md, known differences).
  const double blocks = gpt_params(p, 4, false, 1) / 2;
  const double embeddings = 2.0 * p.V * p.h;
  expect_near(m[0].params, 2 * (blocks + embeddings), "weights");
  expect_near(m[0].optimizer, 12 * blocks + 12 * embeddings, "optimizer");
}

TEST(MegatronMemory, TensorParallelWithAndWithoutSequenceParallelism) {
  Plan p;
  p.tp = 2;
  const double sbh = static_cast<double>(p.s * p.B * p.h);
  const auto with_sp = run(p);
  expect_near(with_sp[0].activations - with_sp[0].logits, (4 * 34 * sbh + 5 * sbh) / 2, "34·sbh/t");
  expect_near(with_sp[0].logits, 4.0 * p.s * p.B * p.V / 2, "vocabulary-parallel logits");
  expect_near(with_sp[0].params, 2 * gpt_params(p, 4, true, 2), "weights split over tp");
  p.sp = false;
  const auto without = run(p);
  expect_near(without[0].activations - without[0].logits, 4 * (10 + 24.0 / 2) * sbh + 5 * sbh,
              "(10 + 24/t)·sbh");
}

TEST(MegatronMemory, FullAndSelectiveRecompute) {
  Plan p;
  p.tp = 2;
  const double sbh = static_cast<double>(p.s * p.B * p.h);
  p.recompute = Recompute::kFull;
  const auto full = run(p);
  expect_near(full[0].activations - full[0].logits, (4 * 2 * sbh + 5 * sbh) / 2, "the block input");
  p.recompute = Recompute::kSelective;
  const auto selective = run(p);
  expect_near(selective[0].activations - selective[0].logits, (4 * 34 * sbh + 5 * sbh) / 2,
              "34·sbh/t (fused attention stores no scores anyway)");
}

// pp 2, 4 blocks (2 per stage), 4 micro-batches of 2 sequences.
TEST(MegatronMemory, MicroBatchesInFlightOfTheSchedule) {
  Plan p;
  p.pp = 2, p.B = 8, p.micro = 2;
  const double sbh = static_cast<double>(p.s * 2 * p.h);
  for (auto [schedule, first, last] :
       {std::tuple{lower::Schedule::k1F1B, 2, 1}, std::tuple{lower::Schedule::kGpipe, 4, 4}}) {
    p.schedule = schedule;
    const auto m = run(p);
    ASSERT_EQ(m.size(), 2u);
    expect_near(m[0].in_flight, first, "stage 0 in flight");
    expect_near(m[1].in_flight, last, "stage 1 in flight");
    expect_near(m[0].activations, (2 * 34 * sbh + sbh) * first, "stage 0 with its dropout mask");
    expect_near(m[1].activations, (2 * 34 * sbh + 4 * sbh + 4.0 * p.s * 2 * p.V) * last,
                "stage 1 with its logits and the inputs of the final norm and output layer");
    // Tied embeddings on stages apart: each end holds a copy.
    expect_near(m[0].params, 2 * gpt_params(p, 2, true, 1), "stage 0 weights");
    expect_near(m[1].params, 2 * gpt_params(p, 2, true, 1), "stage 1 weights");
  }
}

// llama: grouped-query attention (K and V of kv heads), fused SwiGLU (its
// [gate|up] input, 4·sbf, and its output, 2·sbf), no dropout:
// sbh·(4 + 4 + 2 + 4·kv/a + 2) + 6·sbf per block; the last-stage inputs 4·sbh.
TEST(MegatronMemory, LlamaCount) {
  Plan p;
  p.kind = "llama", p.kv = 2, p.tie = false;
  const auto m = run(p);
  const double sbh = static_cast<double>(p.s * p.B * p.h),
               sbf = static_cast<double>(p.s * p.B * p.f);
  const double per_block = sbh * (4 + 4 + 2 + 4.0 * 2 / 8 + 2) + 6 * sbf;
  expect_near(m[0].activations - m[0].logits, 4 * per_block + 4 * sbh, "llama blocks");
  // Weights: Q and output h², K and V h·h·kv/a each, three FFN matrices.
  const double weights =
      4.0 * (2 * p.h * p.h + 2 * p.h * p.h * 2 / 8 + 3 * p.h * p.f) + 2.0 * p.V * p.h;
  expect_near(m[0].params, 2 * weights, "llama weights");
}

// moe with tp 2: the dispatched tokens (k·2·sbh) are gathered over tp, the
// experts' GeLU input and output (k·4·sbf) split over tp like their
// weights, and each expert's output (k·2·sbh) kept split for the gates.
TEST(MegatronMemory, MoeExpertsKeepGatheredTokens) {
  Plan p;
  p.kind = "moe", p.kv = 2, p.tp = 2, p.tie = false;
  const auto m = run(p);
  const double sbh = static_cast<double>(p.s * p.B * p.h),
               sbf = static_cast<double>(p.s * p.B * p.f);
  const double k = 2;  // stg's default --kexperts
  const double attention = sbh * (4 + 4 + 2 + 4.0 * 2 / 8 + 2);
  const double per_block = 2 * k * sbh + (attention + k * (4 * sbf + 2 * sbh)) / 2;
  expect_near(m[0].activations - m[0].logits, 4 * per_block + 4 * sbh / 2, "moe blocks");
}

}  // namespace
}  // namespace stg
