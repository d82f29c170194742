#include "stg/models/registry.h"

#include "stg/frameworks/registry.h"
#include "stg/models/families/registry.h"
#include "stg/models/flag_binding.h"
#include "stg/models/row_flag.h"
#include "stg/workloads/training_step.h"

namespace stg::models {

namespace {

// The rows' flags that only the decoder models read (models/row_flag.h),
// the first given in name order.
void refuse_decoder_flags(const Options& o) {
  if (o.module_csv.empty() && family_of(o).decoder) return;
  for (const auto& [flag, value] : o.component_flags)
    for (const RowFlag* f : component_row_flags())
      require(!f->decoders_only || flag != f->flag,
              flag +
                  " belongs to a mixer of the decoder models (every --model_type but transformer, "
                  "no --module_csv): drop it or choose a decoder");
}

}  // namespace

Workload build_workload(const Options& o) {
  check_limits(o);
  const frameworks::Framework& f = frameworks::find(o.framework);
  frameworks::refuse_flags_of_others(f, o);
  f.check(o);
  require(o.cp_algo == CpAlgo::kAllGather || (o.module_csv.empty() && family_of(o).decoder),
          "--cp_algo ring and ulysses are attention kernels of the decoder models (every "
          "--model_type but transformer, no --module_csv): drop --cp_algo or choose a decoder");
  refuse_decoder_flags(o);
  Workload w = o.serving              ? inference_workload(o, f)
               : o.module_csv.empty() ? family_of(o).workload(o, f)
                                      : csv_workload(o, f);
  w.framework = &f;
  if (!w.kind) w.kind = &workloads::training_step();
  return w;
}

}  // namespace stg::models
