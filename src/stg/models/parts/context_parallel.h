// How the attention kernel crosses the context-parallel axis (--cp_algo,
// docs/context_parallelism.md). Each rank holds Seq/cp of every sequence;
// the kernels here take q, k, v in that layout and give the output qkv and
// the gradients dq, dk, dv back in it:
//  - all-gather (models/parts/attention.cc): K and V gathered over the
//    whole sequence before one fused op (the reference's);
//  - ring: cp steps of partial attention on one K/V chunk each, the chunks
//    passed round the cp ring (ring_attention.cc);
//  - Ulysses: all-to-alls turn the sequence split into a head split before
//    the kernel and back after it (ulysses_attention.cc).
// All three charge the same work in total.
#pragma once

#include "stg/graph/graph.h"
#include "stg/models/parts/kernel_dims.h"
#include "stg/models/parts/part_choices.h"
#include "stg/options.h"

namespace stg::passes {
class PassManager;
}

namespace stg::models {

struct ContextParallel {
  CpAlgo algo = CpAlgo::kAllGather;
  int degree = 1;  // the cp degree: the ring's number of steps
};

// The passes a kernel's graph needs after insert-send-recv: ring
// attention's K/V chunks go round the cp ring as (axis, offset) peers
// (passes/insert_axis_send_recv.h); the other kernels need none.
void add_kernel_passes(passes::PassManager& pm, const ContextParallel& cp);

graph::Graph ring_attention_kernel(const KernelDims& k, const PartChoices& choices, int cp);
graph::Graph ulysses_attention_kernel(const KernelDims& k, const PartChoices& choices);

}  // namespace stg::models
