// The seed's transformer with its flags bound.
#include "stg/models/flag_binding.h"
#include "stg/models/row_flag.h"
#include "stg/models/transformer.h"

namespace stg::models {
namespace {

// Flags of the later models that the seed transformer does not have.
void refuse_later_flags(const Options& o) {
  auto refuse = [&](bool given, const char* flag) {
    require(!given, std::string(flag) + " does not apply to --model_type transformer: " +
                        "drop it or choose --model_type gpt, llama or moe");
  };
  refuse(o.dvocal.has_value(), "--dvocal");
  // The decoders' dimensions that rows declare (--kvhead, --experts, ...).
  for (const RowFlag* f : component_row_flags())
    if (f->symbol) refuse(row_flag(o, f->flag).has_value(), f->flag);
  refuse(o.micro_batch.has_value(), "--micro_batch");
  refuse(o.tpsp.has_value(), "--tpsp");
  refuse(o.mtp_depth.has_value(), "--mtp_depth");
  refuse(o.degree["ep"] != 1, "--ep");
}

}  // namespace

Workload transformer_workload(const Options& o, const DecoderPolicy& /*f*/) {
  refuse_later_flags(o);
  Workload w;
  // The seed's defaults.
  bind_dims(w, {{"Din", "--din", o.din, 51200},
                {"Dout", "--dout", o.dout, 25600},
                {"Dmodel", "--dmodel", o.dmodel, 25600},
                {"Dff", "--dff", o.dff, 102400},
                {"Batch", "--batch", o.batch, 1024},
                {"Seq", "--seq", o.seq, 1024},
                {"Head", "--head", o.head, 1024}});
  const int64_t stacks = o.num_stacks.value_or(32);
  require(stacks >= 1, "--num_stacks " + num(stacks) + " is not valid: use >= 1");
  const int64_t pp = o.degree.stages();
  require(pp <= stacks + 2, "--pp " + num(pp) + " is larger than --num_stacks " + num(stacks) +
                                " + 2: every stage needs a block or an embedding");
  const int zero = zero_stage(o);
  require(zero == 0 || zero == 3, "--zero_stage " + std::to_string(zero) +
                                      " needs --model_type gpt, llama or moe (the seed transformer "
                                      "knows FSDP only: --zero_stage 3)");
  w.model = build_transformer({static_cast<int>(stacks), zero == 3});
  w.zero_stage = zero;
  bind_axes(w, o.degree, {Spelling::kSeed});
  return w;
}

}  // namespace stg::models
