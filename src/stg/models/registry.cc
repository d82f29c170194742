#include "stg/models/registry.h"

#include "stg/frameworks/registry.h"
#include "stg/models/families/registry.h"
#include "stg/models/flag_binding.h"
#include "stg/models/parts/context_parallel.h"
#include "stg/workloads/training_step.h"

namespace stg::models {

Workload build_workload(const Options& o) {
  check_limits(o);
  const frameworks::Framework& f = frameworks::find(o.framework);
  frameworks::refuse_flags_of_others(f, o);
  f.check(o);
  require(!cp_algo_row(o.cp_algo).decoder_only || (o.module_csv.empty() && family_of(o).decoder),
          "--cp_algo " + cp_algo_names([](const CpAlgoRow& a) { return a.decoder_only; }, " and ") +
              " are attention kernels of the decoder models (every --model_type but "
              "transformer, no --module_csv): drop --cp_algo or choose a decoder");
  if (!o.component_flags.empty())
    require(o.module_csv.empty() && family_of(o).decoder,
            o.component_flags.begin()->first +
                " belongs to a mixer of the decoder models (every --model_type but transformer, "
                "no --module_csv): drop it or choose a decoder");
  Workload w = o.serving              ? inference_workload(o, f)
               : o.module_csv.empty() ? family_of(o).workload(o, f)
                                      : csv_workload(o, f);
  w.framework = &f;
  if (!w.kind) w.kind = &workloads::training_step();
  return w;
}

}  // namespace stg::models
