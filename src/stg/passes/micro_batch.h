// Micro-batching as the later reference does it: the forward+backward graph
// is replicated once per micro-batch ("mb<i>." prefix, Batch -> MicroBatch),
// the weights are shared, and each weight's per-micro-batch gradients are
// accumulated into one gradient (an op of one operation per element that
// waits for all of them), which the weight update then reads.
#pragma once

#include "stg/graph/graph.h"

namespace stg::passes {

// Takes the graph by value: the last replica reuses its tensors.
graph::Graph replicate_micro_batches(graph::Graph g, int count);

}  // namespace stg::passes
