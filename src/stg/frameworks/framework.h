// Whose training step a trace models (--framework): one policy object,
// chosen once from Options by the registry (frameworks/registry.h) and
// carried by the Workload. Everything that differs between frameworks is
// asked of it here, so no other file tests which framework runs; a new
// framework is one file implementing this interface plus its registry line
// (docs/architecture.md "How to add a framework").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stg/graph/graph.h"
#include "stg/lower/lower_stage.h"
#include "stg/lower/node_order.h"
#include "stg/models/decoder_policy.h"
#include "stg/options.h"
#include "stg/passes/insert_collectives.h"
#include "stg/passes/pass.h"
#include "stg/report/activation_memory.h"
#include "stg/report/memory.h"

namespace stg::models {
struct Workload;
}

namespace stg::frameworks {

// The --print_gpu_vram report: figures per stage and their text.
struct MemoryReport {
  std::vector<report::StageMemory> by_stage;
  std::string text;
};

// The memory report as the plan sweep evaluates it (sweep/): the terms of
// the graph's tensors at their places, and the formula of the activations
// when they follow one instead of the graph's buffers.
struct MemoryModel {
  std::vector<report::MemoryTerm> terms;
  std::optional<report::ActivationMemoryOptions> activation_formula;
};

// The decoder models' (gpt, llama, moe, ...) dimensions, checks and parts
// are asked of it as models::DecoderPolicy (models/decoder_policy.h).
class Framework : public models::DecoderPolicy {
 public:
  virtual std::string_view name() const = 0;  // its --framework value

  // Flags and models this framework cannot honour: UsageError naming them.
  virtual void check(const Options& o) const = 0;
  // The first flag `o` gives that only this framework reads, else empty:
  // every other framework refuses it rather than ignore it
  // (frameworks::refuse_flags_of_others).
  virtual std::string own_flag_given(const Options& o) const = 0;

  // The collectives of a sharding transition (what insert-collectives makes).
  virtual passes::CollectiveCreator collective_creator() const = 0;
  // When and in what element type weight gradients are reduced and the
  // weights updated: the passes after recomputation, before assign-stages.
  virtual void add_gradient_passes(passes::PassManager& pm, const Options& o,
                                   const models::Workload& w) const = 0;
  // Whether recomputation runs as activation checkpointing does (a region
  // re-run when the backward reaches it, its backward after the whole
  // region; passes/recompute.h), else as the reference orders it.
  virtual bool checkpointed_recompute() const = 0;
  // When the communication is issued: the passes after insert-collectives
  // (dependencies that hold a collective back until the framework issues it).
  virtual void add_issue_passes(passes::PassManager& pm, const Options& o,
                                const models::Workload& w) const = 0;

  // Lowering: units and element type when the flags leave them unset, the
  // order nodes are issued in, and whether a node's tensor_size is the
  // bytes it moves (else the bytes it writes).
  virtual Units default_units() const = 0;
  virtual DType default_dtype() const = 0;
  virtual lower::NodeOrder node_order() const = 0;
  virtual bool tensor_size_moved() const = 0;
  // v0.0.4: the attributes Chakra's ETFeeder reads besides the reference's
  // (lower::LowerOptions::feeder_attributes); off: the reference's bytes.
  virtual bool feeder_attributes() const = 0;
  // Whether the expert-parallel ranks are carved out of the data-parallel
  // ones (Megatron-LM's MoE): the ranks of one ep group then hold sequences
  // of their own, so the micro-batch is split over dp x ep.
  virtual bool ep_carved_out_of_dp() const = 0;

  // The memory per rank of each stage; `g` after the pass pipeline.
  virtual MemoryReport memory_report(const Options& o, const models::Workload& w,
                                     const lower::LowerOptions& lo, const graph::Graph& g,
                                     int64_t ranks_per_stage) const = 0;
  // The same report as terms at the places `place` gives.
  virtual MemoryModel memory_model(const Options& o, const models::Workload& w,
                                   const lower::LowerOptions& lo, const graph::Graph& g,
                                   const report::PlaceOf& place) const = 0;
};

}  // namespace stg::frameworks
