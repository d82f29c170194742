// A model with the command line's numbers bound: what the pass pipeline,
// lowering and the writers need to know about it.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "stg/expr/values.h"
#include "stg/lower/schedule.h"
#include "stg/mesh/mesh.h"
#include "stg/models/blocks/block_spec.h"
#include "stg/models/decoder_policy.h"
#include "stg/models/model.h"
#include "stg/options.h"

namespace stg::frameworks {
class Framework;
}
namespace stg::workloads {
class WorkloadKind;
}

namespace stg::models {

struct Family;

// A forward-only run (stg infer's serving iteration) as its builder
// describes it; workloads::choose_kind (workloads/build_workload.h) makes
// its kind, a workloads::ForwardOnly, from this.
struct ForwardRun {
  std::vector<lower::Step> phases;  // (phase, phase_step) in run order
  int decode_steps = 1;             // the decode steps the one built stands for
  std::string context_symbol;       // the context length's, one longer a step
};

struct Workload {
  // The framework of the run (frameworks/registry.h), chosen once by
  // workloads::build_workload; the passes, lowering and the memory report
  // ask it. (The model builders see it as a DecoderPolicy.)
  const frameworks::Framework* framework = nullptr;
  // What the trace models (workloads/workload_kind.h), set by
  // workloads::choose_kind: a forward-only run when the builder gives
  // `forward_run`, else a training step (`own_kind`: a kind made for this
  // workload).
  std::optional<ForwardRun> forward_run;
  const workloads::WorkloadKind* kind = nullptr;
  std::shared_ptr<const workloads::WorkloadKind> own_kind;
  Model model;
  // A decoder's blocks and ends (empty for the transformer and sheets).
  DecoderSpec decoder;
  mesh::Mesh mesh;      // the model's axes with the flags' degrees, pp stages
  expr::Values values;  // numbers bound to the model's symbols
  // Symbols the model leaves open, bound by the bind-symbols pass (e.g. the
  // ZeRO shard symbols); empty: no such pass.
  std::map<std::string, expr::Expr> bindings;
  // Batch symbol -> micro-batch symbol; empty: the model is not
  // micro-batched (no replicate-micro-batches pass).
  std::map<std::string, expr::Expr> micro_batch_renames;
  int micro_batches = 1;
  // Serving with disaggregated pools: the mesh's stages are this many pools
  // of the plan's pipeline stages (graph::Placement::pool), the first
  // `prefill_pools` the prefill's, the others the decode steps'.
  int pools = 1;
  int prefill_pools = 1;
  int zero_stage = 0;
  // Mesh group index of Megatron's embedding group (tied embeddings on
  // stages apart), or -1.
  int embedding_group = -1;
  // Under --pipeline_schedule dualpipe: the mesh group index of the stage
  // group of stages 0 and pp-1, followed by those of stages i and pp-1-i
  // (passes/sum_mirrored_gradients.h), or -1.
  int mirror_group = -1;
  // Things worth telling the user that do not stop the run (flags that have
  // no effect); the command line prints them as "stg: note: ...".
  std::vector<std::string> notes;
};

// The sharding rule of a workload: its mesh's axes of degree > 1 with their
// symbols, and the model's degree symbols and claim rule.
graph::ShardingRule sharding_rule(const Workload& w);

// Builders keyed by model; UsageError on bad flags (docs/facts.md §9 lists
// the symbols and the flags that bind them). `f`: the run's framework, as
// the decoder builders ask it (models/decoder_policy.h).
Workload transformer_workload(const Options& o, const DecoderPolicy& f);
Workload decoder_workload(const Options& o, const DecoderPolicy& f);  // gpt, llama, moe
// The decoder of `family` (its blocks from Family::decoder), whatever the
// family Options::model names: a family not in the registry (tests).
Workload decoder_workload(const Options& o, const DecoderPolicy& f, const Family& family);
// The same with its graph made by `build` from the checked decoder
// (models/decoder.h; a serving iteration's, models/inference_decoder.h).
struct DecoderConfig;
using DecoderBuilder = std::function<Model(const DecoderConfig&)>;
Workload decoder_workload(const Options& o, const DecoderPolicy& f, const Family& family,
                          const DecoderBuilder& build);
// `stg infer` (Options::serving): a decoder family's serving iteration
// (models/inference_workload.cc, docs/inference.md), its decode steps
// written from one (lower/flat_stage.h), or each built in the graph
// (`steps_from_one` false: the tests' full expansion).
Workload inference_workload(const Options& o, const DecoderPolicy& f, bool steps_from_one = true);
Workload csv_workload(const Options& o, const DecoderPolicy& f);  // --module_csv

}  // namespace stg::models
