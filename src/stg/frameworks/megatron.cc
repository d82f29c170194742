// Megatron-LM's training step (--framework megatron; docs/megatron.md):
// padded vocabulary and its own embedding layers, tied embeddings,
// expert parallelism carved out of data parallelism, the distributed
// optimizer with gradients reduced in --grad_dtype, physical units, work
// numbered in the order it is issued, and the closed-form memory report of
// Korthikanti et al.
//
// The layers and the memory formula stay beside their kind
// (models/parts/vocab_parallel_embedding.h builds graphs like every part;
// report/activation_memory.h computes like report/memory.h): this file only
// chooses them.
#include <algorithm>
#include <memory>

#include "stg/frameworks/framework.h"
#include "stg/models/blocks/block_kinds.h"
#include "stg/models/families/registry.h"
#include "stg/models/flag_binding.h"
#include "stg/models/workload.h"
#include "stg/passes/defer_weight_gradient_gathers.h"
#include "stg/passes/grad_update.h"
#include "stg/passes/gradient_precision.h"
#include "stg/report/activation_memory.h"

namespace stg::frameworks {

namespace {

using models::num;

// The memory report's terms of the decoder's blocks (models/blocks/block_kinds.h).
std::vector<report::BlockActivations> block_activations(const models::DecoderSpec& d) {
  std::vector<report::BlockActivations> out;
  for (const models::BlockSpec& b : d.blocks)
    out.push_back(models::block_activations(b, d.dropout));
  for (const models::BlockSpec& b : d.mtp) out.push_back(models::block_activations(b, d.dropout));
  return out;
}

class Megatron : public Framework {
 public:
  std::string_view name() const override { return "megatron"; }

  // The models the Megatron-LM step is written for.
  void check(const Options& o) const override {
    require(o.module_csv.empty(),
            "--framework megatron models gpt, llama and moe, not a --module_csv sheet: drop one");
    require(models::family_of(o).decoder != nullptr,
            "--framework megatron models gpt, llama and moe: add --model_type gpt (or a --model "
            "preset)");
    if (o.grad_dtype)
      require(*o.grad_dtype == DType::kFp32 || *o.grad_dtype == DType::kBf16,
              "--grad_dtype is fp32 or bf16: Megatron-LM reduces gradients in one of them");
  }
  // The flags of Megatron-LM's step, which mean nothing to the others.
  std::string own_flag_given(const Options& o) const override {
    if (o.tie_embeddings.has_value()) return "--tie_embeddings";
    if (o.causal_saving.has_value()) return "--causal_saving";
    if (o.grad_dtype.has_value()) return "--grad_dtype";
    if (o.make_vocab_size_divisible_by.has_value()) return "--make_vocab_size_divisible_by";
    if (o.recompute() == Recompute::kSelective) return "--activation_recompute selective";
    return "";
  }

  // Megatron-LM computes the logits over a vocabulary padded to a multiple
  // of --make_vocab_size_divisible_by x tp, so that every tp rank holds
  // whole rows.
  void adjust_decoder_dims(models::Workload& w, const Options& o, int64_t tp) const override {
    const int64_t unit = o.make_vocab_size_divisible_by.value_or(128);
    require(unit >= 1, "--make_vocab_size_divisible_by " + num(unit) +
                           " is not valid: use a whole number >= 1 (1: no padding)");
    int64_t& vocab = w.values.by_symbol.at("Dvocal");
    int64_t multiple = 0, padded = 0;
    require(!__builtin_mul_overflow(unit, tp, &multiple) &&
                !__builtin_mul_overflow(vocab / multiple + (vocab % multiple ? 1 : 0), multiple,
                                        &padded),
            "--make_vocab_size_divisible_by " + num(unit) + " x tp " + num(tp) +
                " pads the vocabulary beyond 64 bits: use a smaller value (128 is Megatron-LM's)");
    if (padded == vocab) return;
    w.notes.push_back("--dvocal " + num(vocab) + " padded to " + num(padded) +
                      " (a multiple of --make_vocab_size_divisible_by " + num(unit) + " x tp " +
                      num(tp) + ", as Megatron-LM does)");
    vocab = padded;
  }

  void check_decoder(const Options& o, const models::DecoderSpec& d, int64_t micro) const override {
    if (!d.any(models::BlockKind::kMoe)) return;
    const int64_t dp = o.degree["dp"], ep = o.degree["ep"];
    require(micro % (dp * ep) == 0,
            "--micro_batch " + num(micro) + " is not divisible by --dp x --ep = " + num(dp * ep) +
                ": with --framework megatron expert parallelism is carved out of data "
                "parallelism, so every dp x ep rank needs whole sequences");
  }

  models::PartChoices decoder_parts(const Options& o, const models::DecoderSpec& d,
                                    int zero_stage) const override {
    models::PartChoices parts;
    parts.vocab_parallel_layers = true;
    parts.selective_recompute_core = true;
    parts.experts_carved_from_dp = true;
    parts.tie_embeddings = o.tie_embeddings.value_or(d.tied_embeddings);
    // Under DualPipeV the first and the last part share stage 0.
    parts.tied_stages_apart =
        parts.tie_embeddings && o.degree.stages() > 1 && !lower::v_shaped(o.pipeline_schedule);
    parts.causal_saving = o.causal_saving.value_or(false);
    parts.kv_head_gradients = true;
    parts.reduce_per_step = zero_stage < 3;
    parts.reduce_over_dp_cp = true;
    return parts;
  }

  // Megatron-LM's collectives of a transition are the reference's today;
  // its gradient buckets are made by the model (flat weights) and the
  // gradient passes.
  passes::CollectiveCreator collective_creator() const override {
    return passes::reference_collective;
  }
  // The distributed optimizer; gradients accumulated and reduced in
  // --grad_dtype (fp32 for bf16 training).
  void add_gradient_passes(passes::PassManager& pm, const Options& o,
                           const models::Workload& w) const override {
    pm.emplace<passes::AddWeightUpdates>(w.zero_stage, /*distributed_optimizer=*/true,
                                         /*shard_over_context=*/true);
    pm.emplace<passes::SetGradientPrecision>(
        static_cast<int>(dtype_bytes(o.grad_dtype.value_or(DType::kFp32))));
  }
  // Megatron-LM's CheckpointFunction: the region's forward again, then its
  // backward.
  bool checkpointed_recompute() const override { return true; }
  // With sequence parallelism a weight gradient's input is all-gathered in
  // the backward, once the output gradient is there (Megatron-LM's linear
  // layers), not as soon as the input is.
  void add_issue_passes(passes::PassManager& pm, const Options&,
                        const models::Workload&) const override {
    pm.emplace<passes::DeferWeightGradientGathers>();
  }

  Units default_units() const override { return Units::kPhysical; }
  DType default_dtype() const override { return DType::kBf16; }
  // Megatron-LM issues a send or a gradient bucket as soon as its input is
  // ready (docs/facts.md §5.8).
  lower::NodeOrder node_order() const override { return lower::NodeOrder::kIssue; }
  bool tensor_size_moved() const override { return true; }
  bool feeder_attributes() const override { return true; }
  bool ep_carved_out_of_dp() const override { return true; }

  MemoryReport memory_report(const Options& o, const models::Workload& w,
                             const lower::LowerOptions& lo, const graph::Graph& g,
                             int64_t ranks_per_stage) const override {
    const report::ActivationMemoryOptions m = memory_options(o, w, lo);
    MemoryReport out;
    out.by_stage = report::activation_memory_by_stage(g, w.mesh, w.values, m);
    out.text = report::format_activation_memory(out.by_stage, ranks_per_stage, m.recompute);
    return out;
  }
  MemoryModel memory_model(const Options& o, const models::Workload& w,
                           const lower::LowerOptions& lo, const graph::Graph& g,
                           const report::PlaceOf& place) const override {
    const report::ActivationMemoryOptions m = memory_options(o, w, lo);
    return {report::mixed_precision_weight_terms(g, m, place), m};
  }

 private:
  report::ActivationMemoryOptions memory_options(const Options& o, const models::Workload& w,
                                                 const lower::LowerOptions& lo) const {
    report::ActivationMemoryOptions m;
    m.blocks = block_activations(w.decoder);
    m.output_layers = 1 + static_cast<int>(w.decoder.mtp.size());
    m.embedding_dropout = w.decoder.dropout;
    m.sequence_parallel = o.tpsp.value_or(true);
    m.recompute = o.recompute();
    // fp8 training computes in fp8 but keeps bf16 weights (Megatron-LM).
    m.weight_bytes = std::max(2, static_cast<int>(dtype_bytes(o.dtype.value_or(default_dtype()))));
    m.grad_bytes = static_cast<int>(dtype_bytes(o.grad_dtype.value_or(DType::kFp32)));
    m.zero_stage = w.zero_stage;
    m.schedule = lo.schedule;
    m.micro_batches = w.micro_batches;
    m.chunks = lo.chunks;
    return m;
  }
};

}  // namespace

std::unique_ptr<Framework> make_megatron() { return std::make_unique<Megatron>(); }

}  // namespace stg::frameworks
