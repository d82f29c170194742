#include "stg/workloads/training_step.h"

#include "stg/frameworks/framework.h"
#include "stg/models/workload.h"
#include "stg/passes/recompute.h"
#include "stg/passes/sum_mirrored_gradients.h"
#include "stg/passes/tie_embeddings.h"

namespace stg::workloads {

void TrainingStep::add_graph_passes(passes::PassManager& pm, const Options& o,
                                    const models::Workload& w, bool as_template) const {
  add_micro_batches(pm, w, as_template, lower::replica_count(o.pipeline_schedule, w.micro_batches));
  if (o.recompute() != Recompute::kNone)
    pm.emplace<passes::AddRecomputation>(o.recompute() == Recompute::kSelective,
                                         w.framework->checkpointed_recompute());
  w.framework->add_gradient_passes(pm, o, w);
}

void TrainingStep::add_link_passes(passes::PassManager& pm, const models::Workload& w) const {
  if (w.embedding_group >= 0) pm.emplace<passes::TieEmbeddings>(w.embedding_group);
  if (w.mirror_group >= 0) pm.emplace<passes::SumMirroredGradients>(w.mirror_group);
}

lower::FlatSchedule TrainingStep::schedule(const lower::LowerOptions& lo) const {
  return {lo.schedule, lo.chunks, {}};
}

const TrainingStep& training_step() {
  static const TrainingStep step;
  return step;
}

}  // namespace stg::workloads
