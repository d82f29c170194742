// The K and V a decoder's attention kernel holds on a rank under context
// parallelism (report/attention_kv.h), from the model: the per-head widths
// and KV heads of its attention kind, and the sequences each rank holds.
#pragma once

#include <optional>

#include "stg/models/workload.h"
#include "stg/options.h"
#include "stg/report/attention_kv.h"

namespace stg::models {

// None unless a decoder is split over cp. `ep_carved_out_of_dp`: the
// framework's (frameworks/framework.h), the micro-batch split over dp x ep
// when the decoder has experts. element_bytes is left to the caller.
std::optional<report::AttentionKv> cp_attention_kv(const Options& o, const Workload& w,
                                                   bool ep_carved_out_of_dp);

}  // namespace stg::models
