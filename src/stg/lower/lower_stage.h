// Lowering of one pipeline stage: each op of the stage becomes one trace
// node (compute, collective, send or recv); compute ops without work are
// dropped and their dependents inherit their dependencies. All ranks of the
// stage share the result (they differ only in group ids and peers, see
// mesh::RankBinding). The graph must have been through the pass pipeline:
// the only inputs read across stages are those of RECV ops.
#pragma once

#include <optional>
#include <vector>

#include "stg/graph/graph.h"
#include "stg/hardware/kernel_model.h"
#include "stg/hardware/roofline.h"
#include "stg/lower/io_info.h"
#include "stg/lower/node_order.h"
#include "stg/lower/schedule.h"
#include "stg/lower/stage_graph.h"

namespace stg::lower {

struct LowerOptions {
  IoPolicy io;
  // Units written into the trace. The reference's (default): sizes are
  // element counts and einsum work is multiply-accumulates. Physical: sizes
  // in bytes (elements x bytes_per_element) and einsum work in FLOPs (2 per
  // multiply-accumulate); other ops count their element operations either way.
  int64_t bytes_per_element = 1;
  int64_t flops_per_mac = 1;
  // Physical units: custom kernels with a FLOP count (Tensor::flops) write it.
  bool kernel_flops = false;
  // Physical units: a tensor with its own element size (Tensor::element_bytes,
  // e.g. gradients kept in fp32) is sized with it, and so is a collective or
  // a send that carries it.
  bool tensor_element_bytes = false;
  // A compute node's tensor_size: the bytes it writes (the reference's), or
  // the bytes it moves, inputs read plus output written, which is what a
  // roofline model divides by memory bandwidth (--framework megatron).
  bool tensor_size_moved = false;
  // v0.0.4: `comm_priority` (0) on every communication node and `is_cpu_op`
  // as the schema's bool_val, as Chakra's ETFeeder reads them (it leaves an
  // absent comm_priority uninitialised). Off: the reference's bytes
  // (is_cpu_op as int32_val, no comm_priority); ASTRA-sim's results are the
  // same either way.
  bool feeder_attributes = false;
  // The run's pipeline schedule (kNone: order left to the simulator, as
  // the reference does) and node order. lower_stage itself lowers in
  // reference order without ctrl_deps; lower::FlatStage applies these.
  Schedule schedule = Schedule::kNone;
  int micro_batches = 1;
  int chunks = 1;  // virtual stages per stage (interleaved)
  // How the nodes are numbered (ASTRA-sim issues the lowest ready id first).
  NodeOrder order = NodeOrder::kReference;
  // The roofline the run is written for (--astra_sim's system, else
  // --peak_tflops and --mem_bw_gbps): a token copy without dependencies
  // that runs in 0 ns at it is folded into the next node
  // (lower/fold_token_copy.h).
  hardware::RooflineFigures roofline;
  // --compute_time model: each compute node's time under the kernel model
  // (LoweredNode::kernel_seconds; lower/kernel_of_op.h), its elements of
  // `kernel_element_bytes` (the trace's --dtype whatever the units).
  std::optional<hardware::KernelFigures> kernel_model;
  int64_t kernel_element_bytes = 2;
};

// `members`: the stage's tensors in graph order.
StageGraph lower_stage(const graph::Graph& g, const std::vector<int>& members, int stage,
                       const Values& values, const LowerOptions& options);

}  // namespace stg::lower
