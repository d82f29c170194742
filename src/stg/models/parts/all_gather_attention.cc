// --cp_algo allgather (the reference's; context_parallel.h): K and V
// gathered over the whole sequence before one fused attention op
// (attention.cc's kernel; insert-collectives finds the all-gather), so a
// rank holds K and V of the whole sequence while it runs. It runs every
// mixer's attention and every model.
#include "stg/models/parts/attention.h"
#include "stg/models/parts/context_parallel.h"

namespace stg::models {

namespace {

graph::Graph kernel(const KernelDims& k, const PartChoices& choices, int) {
  return attention_kernel(k, choices);
}

double kv_bytes(double whole, int64_t) { return whole; }

const CpAlgoRow kAllGather = {
    .name = "allgather",
    .kernel = kernel,
    .add_passes = nullptr,
    .kv_bytes = kv_bytes,
    .kv_held = "K and V gathered over the whole sequence",
    .decoder_only = false,
    .whole_sequence_chunks = false,
    .require = nullptr,
};

}  // namespace

const CpAlgoRow& all_gather_cp_row() { return kAllGather; }

}  // namespace stg::models
