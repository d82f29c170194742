#include "stg/sweep/stage_sums.h"

#include "stg/passes/pipeline.h"

namespace stg::sweep {

void put_flow(Fields& out, int axis, const Flow& f, const std::vector<int64_t>& v,
              int micro_batches) {
  const double bytes = value(f.bytes_per_micro_batch, v) * micro_batches + value(f.bytes_once, v);
  out.put(axis_field(axis, kSent), bytes);
  bool collective = false;
  for (int k = 0; k < kCollectiveKinds; ++k) {
    const auto ops =
        static_cast<double>(f.kind_ops_per_micro_batch[k] * micro_batches + f.kind_ops_once[k]);
    if (ops == 0) continue;
    collective = true;
    out.put(axis_field(axis, kKindOps + k), ops);
    out.put(
        axis_field(axis, kKindBytes + k),
        value(f.kind_bytes_per_micro_batch[k], v) * micro_batches + value(f.kind_bytes_once[k], v));
  }
  if (collective) return;
  out.put(axis_field(axis, kSentBytes), bytes);
  out.put(axis_field(axis, kSends),
          static_cast<double>(f.ops_per_micro_batch * micro_batches + f.ops_once));
}

void StageSums::add_up(const std::vector<PartValues>& parts, const std::vector<int>& template_part,
                       int chunks, const Fields& forward, const Fields& backward) {
  const int last = static_cast<int>(template_part.size()) - 1;
  const int blocks = last - 1;
  const int virtual_stages = stages_ * chunks;
  // Placed as passes::assign_stages places them by count.
  stage_of_.resize(last + 1);
  for (int u = 0; u <= last; ++u)
    stage_of_[u] = passes::virtual_stage_of_part(u, blocks, virtual_stages) % stages_;
  fields_.assign(static_cast<size_t>(stages_) * width_, 0.0);
  for (int u = 0; u <= last; ++u) {
    double* s = stage(stage_of_[u]);
    const PartValues& pv = parts[template_part[u]];
    for (const auto& [field, x] : pv.fields.entries()) s[field] += x;
    if (u == last) continue;
    // Read by the next part too: held where each reader is.
    if (pv.kept_next_and_both != 0) stage(stage_of_[u + 1])[kKept] += pv.kept_next_and_both;
    if (stage_of_[u + 1] != stage_of_[u] && pv.kept_both != 0) s[kKept] += pv.kept_both;
  }
  for (int b = 0; b + 1 < virtual_stages; ++b) {
    double* sender = stage(b % stages_);
    for (const auto& [field, x] : forward.entries()) sender[field] += x;
    double* receiver = stage((b + 1) % stages_);
    for (const auto& [field, x] : backward.entries()) receiver[field] += x;
  }
}

}  // namespace stg::sweep
