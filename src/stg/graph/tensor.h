// The symbolic tensor IR: a tensor is one row of a module graph, the output of
// an op applied to up to two inputs, each seen in a given (sharded) shape.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "stg/expr/expr.h"
#include "stg/graph/comm.h"

namespace stg::graph {

using Shape = std::vector<expr::Expr>;

enum class Op {
  kPlaceholder,   // T: an input or a weight
  kEinsum,        // M: "ab,bc->ac"
  kAdd,           // A: x1 + x2
  kElementwise,   // E: unary element-wise, `amplifier` ops per element
  kElementwise2,  // E2: binary element-wise, `amplifier` ops per element
  kIdentity,      // I: pass-through (a link between modules, or a reshard)
  kReshape,       // R: reshape to x2_shape
  kBroadcast,     // B: dim `axis` multiplied by `factor`
  kSlice,         // SLICE: dim `axis` becomes `factor`
  kConcat,        // C: concatenate x1 and x2 along `axis`
  kCustom,        // CUSTOM: opaque kernel; shape x2_shape, cost `factor` ops
  kShadow,        // S: stand-in for a tensor produced on another stage
  // Communication (graph/comm.h), inserted by passes, never by models:
  kCollective,  // COLL: x1 read in its sent view (x1_shape/x1_hidden),
                //   delivered in x2_shape/x2_hidden on the group of `comm.axis`
  kSend,        // SEND: x1 sent to `comm.peer`
  kRecv,        // RECV: x1 (produced by `comm.peer`) received; same view
};

// Collective, send or receive.
inline bool is_comm(Op op) { return op == Op::kCollective || op == Op::kSend || op == Op::kRecv; }

// The reference's op code ("M", "E", ...), written as the `op_type` attribute.
const char* op_code(Op op);

// What a tensor is for; passes use this instead of name matching.
enum class Role {
  kActivation,  // forward or backward data
  kWeight,      // a parameter (trainable when require_grads)
  kGradient,    // the gradient of a weight
  kUpdate,      // the updated weight w@1 = w@0 + dw
  kOptimizer,   // optimizer state (Adam moments), kept across steps
  kPersistent,  // state kept across phases of a workload (a KV cache)
};

// Which pass of a workload a tensor's work belongs to; a pipeline schedule
// orders steps of (phase, micro-batch, chunk) (lower/schedule.h). A training
// step has a forward and a backward pass; the backward pass splits into the
// gradients of activations (input) and of weights, which zero-bubble
// schedules place on their own (graph::phase_of tells them apart). Serving
// has a prefill and decode steps (Tensor::phase_step: which one).
enum class Phase : uint8_t { kForward, kBackwardInput, kBackwardWeight, kPrefill, kDecode };
inline constexpr int kNumPhases = 5;
inline bool is_backward(Phase p) {
  return p == Phase::kBackwardInput || p == Phase::kBackwardWeight;
}

// Which part of the model a tensor belongs to, for pipeline placement.
struct Placement {
  enum class Kind { kFirst, kBlock, kLast };
  Kind kind = Kind::kBlock;
  // Index of the transformer block for kBlock; blocks numbered from the
  // model's block count on (models::Model::num_blocks: the multi-token
  // prediction modules') are placed with the last part.
  int block = 0;
  // Serving with disaggregated pools (docs/inference.md): the prefill
  // pools' ranks (0, 1, ...), then the decode pools', each the plan's
  // pipeline stages (stage pool x pp + the plan's stage).
  int pool = 0;
};

// In a micro-batch template (passes/micro_batch.h) a name holds the
// micro-batch number, "0", at a known place; a name built from another
// carries that place along (`number_after`), so the copies' names are
// written without reading meaning into the text. -1: no number.
inline int32_t number_after(int32_t at, size_t prefix_size) {
  return at < 0 ? -1 : at + static_cast<int32_t>(prefix_size);
}

struct Tensor {
  std::string name;
  int32_t number_at = -1;  // where `name` holds the template's micro-batch number
  // In a decode-step template (one decode step standing for all,
  // lower/flat_stage.h): where `name` holds the step number, -1: none.
  int32_t step_at = -1;
  int revision = 0;
  bool require_grads = false;
  Role role = Role::kActivation;
  Placement placement;
  int micro_batch = 0;  // which micro-batch replica (passes/micro_batch.h)
  // Pipeline stage and, for interleaved schedules, chunk (virtual stage) on
  // it; set by the assign_stages pass.
  int stage = 0;
  int chunk = 0;

  int x1 = -1;  // index of the producer of input 1 in the owning graph
  int x2 = -1;
  Op op = Op::kPlaceholder;

  // Op attributes (only those of `op` are meaningful).
  std::string einsum;            // kEinsum
  expr::Rational amplifier = 1;  // kElementwise, kElementwise2
  int axis = 0;                  // kBroadcast, kSlice, kConcat
  expr::Expr factor;             // kBroadcast, kSlice, kCustom
  // kCustom: the kernel's work in FLOPs, written instead of `factor` under
  // physical units (zero: none given, `factor` operations are written).
  expr::Expr flops;
  Comm comm;  // kCollective, kSend, kRecv

  // How this op sees its inputs; absent when the op has no such input.
  std::optional<Shape> x1_shape, x1_hidden, x2_shape, x2_hidden;

  int grad_of = -1;  // the weight (or activation) this one is the gradient of

  // The pass it runs in. Models mark the backward pass kBackwardInput (the
  // backward of weights under FSDP reads their backward copy; recomputation
  // re-runs the forward before it); which backward tensors are weight
  // gradients follows from grad_of (graph::phase_of).
  Phase phase = Phase::kForward;
  int phase_step = 0;  // kDecode: the decode step
  // kDecode in a decode-step template: the tensor of an earlier phase whose
  // part this one takes in the next step (the step's sampled token after the
  // prefill's). A decode tensor that reads `succeeds` reads, from the second
  // step on, the previous step's copy of this tensor instead.
  int succeeds = -1;
  // What the next decode step reads (a sampled token): a decode step that
  // reads it on another stage receives it in every step (passes/
  // insert_send_recv.h); other values of earlier phases once.
  bool feeds_next_step = false;
  bool is_backward() const { return graph::is_backward(phase); }
  // Transient full-size buffer of sharded training (FSDP assembled weight or
  // gradient): not resident memory.
  bool transient = false;
  // A view into another tensor's storage (a weight inside the flat FSDP
  // buffer): no buffer of its own, no work, never recomputed.
  bool view = false;
  // Further producers this op waits for without reading them (e.g. the
  // fused attention kernel waits for the gathered K and V).
  std::vector<int> extra_deps;

  // Bytes per element under physical units; 0: the trace's --dtype (set for
  // gradients kept in fp32 by --framework megatron).
  int element_bytes = 0;
  // A weight that is one copy of a weight held on several stages (a tied
  // embedding's copy on the first and on the last stage): its gradient is
  // summed over the copies once per step (passes/tie_embeddings.h).
  bool tied = false;
  // kIdentity only: x1 as the rank `shift` steps back along the mesh axis
  // whose degree is the symbol `shift_symbol` holds it (ring attention's
  // K/V chunk of the previous rank of the cp ring). The pass
  // insert-axis-send-recv makes it a SEND on every rank and a RECV.
  int shift = 0;
  std::string shift_symbol;
  // Recomputed under selective recomputation (the attention core,
  // Korthikanti et al.); full recomputation re-runs every forward op.
  bool selective_recompute = false;

  std::string id() const { return name + "@" + std::to_string(revision); }
};

}  // namespace stg::graph
