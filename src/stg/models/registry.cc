#include "stg/models/registry.h"

#include <stdexcept>

#include "stg/models/flag_binding.h"

namespace stg::models {

namespace {

// Flags that only mean something for one framework, and models the
// Megatron-LM step is written for.
void check_framework(const Options& o) {
  if (o.megatron()) {
    require(o.module_csv.empty(),
            "--framework megatron models gpt, llama and moe, not a --module_csv sheet: drop one");
    require(o.model_kind() != ModelKind::kTransformer,
            "--framework megatron models gpt, llama and moe: add --model_type gpt (or a --model "
            "preset)");
    if (o.grad_dtype)
      require(*o.grad_dtype == DType::kFp32 || *o.grad_dtype == DType::kBf16,
              "--grad_dtype is fp32 or bf16: Megatron-LM reduces gradients in one of them");
    return;
  }
  auto megatron_only = [](bool given, const std::string& flag) {
    require(!given, flag + " applies to --framework megatron only: add --framework megatron");
  };
  megatron_only(o.tie_embeddings.has_value(), "--tie_embeddings");
  megatron_only(o.causal_saving.has_value(), "--causal_saving");
  megatron_only(o.grad_dtype.has_value(), "--grad_dtype");
  megatron_only(o.make_vocab_size_divisible_by.has_value(), "--make_vocab_size_divisible_by");
  megatron_only(o.recompute() == Recompute::kSelective, "--activation_recompute selective");
}

}  // namespace

WorkloadBuilder builder_of(ModelKind kind) {
  switch (kind) {
    case ModelKind::kTransformer:
      return transformer_workload;
    case ModelKind::kGpt:
    case ModelKind::kLlama:
    case ModelKind::kMoe:
      return decoder_workload;
  }
  throw std::logic_error("a model kind without a builder");
}

Workload build_workload(const Options& o) {
  check_framework(o);
  if (!o.module_csv.empty()) return csv_workload(o);
  return builder_of(o.model_kind())(o);
}

}  // namespace stg::models
