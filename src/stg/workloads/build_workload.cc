#include "stg/workloads/build_workload.h"

#include <memory>

#include "stg/frameworks/registry.h"
#include "stg/models/registry.h"
#include "stg/workloads/forward_only.h"
#include "stg/workloads/training_step.h"

namespace stg::workloads {

models::Workload build_workload(const Options& o) {
  check_limits(o);
  const frameworks::Framework& f = frameworks::find(o.framework);
  frameworks::refuse_flags_of_others(f, o);
  f.check(o);
  models::refuse_decoder_flags(o);
  models::Workload w = models::build_model(o, f);
  w.framework = &f;
  choose_kind(w);
  return w;
}

void choose_kind(models::Workload& w) {
  if (!w.forward_run) {
    w.kind = &training_step();
    return;
  }
  const models::ForwardRun& run = *w.forward_run;
  w.own_kind = std::make_shared<ForwardOnly>(run.phases, run.decode_steps, run.context_symbol);
  w.kind = w.own_kind.get();
}

}  // namespace stg::workloads
