#include "stg/models/registry.h"

#include "stg/models/families/registry.h"
#include "stg/models/flag_binding.h"
#include "stg/models/parts/context_parallel.h"
#include "stg/models/row_flag.h"

namespace stg::models {

namespace {

// The rows' flags that only the decoder models read (models/row_flag.h),
// the first given in name order.
void refuse_mixer_flags(const Options& o) {
  if (o.module_csv.empty() && family_of(o).decoder) return;
  for (const auto& [flag, value] : o.component_flags)
    for (const RowFlag* f : component_row_flags())
      require(!f->decoders_only || flag != f->flag,
              flag +
                  " belongs to a mixer of the decoder models (every --model_type but transformer, "
                  "no --module_csv): drop it or choose a decoder");
}

}  // namespace

void refuse_decoder_flags(const Options& o) {
  require(!cp_algo_row(o.cp_algo).decoder_only || (o.module_csv.empty() && family_of(o).decoder),
          "--cp_algo " + cp_algo_names([](const CpAlgoRow& a) { return a.decoder_only; }, " and ") +
              " are attention kernels of the decoder models (every --model_type but "
              "transformer, no --module_csv): drop --cp_algo or choose a decoder");
  refuse_mixer_flags(o);
}

Workload build_model(const Options& o, const DecoderPolicy& f) {
  return o.serving              ? inference_workload(o, f)
         : o.module_csv.empty() ? family_of(o).workload(o, f)
                                : csv_workload(o, f);
}

}  // namespace stg::models
