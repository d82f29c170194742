// How the attention kernel crosses the context-parallel axis (--cp_algo,
// docs/context_parallelism.md). Each rank holds Seq/cp of every sequence;
// the kernels take q, k, v in that layout and give the output qkv and the
// gradients dq, dk, dv back in it. Each algorithm is one row
// (docs/architecture.md "How to add a cp algorithm"), in its kernel's file:
//  - allgather (all_gather_attention.cc): K and V gathered over the whole
//    sequence before one fused op (the reference's);
//  - ring (ring_attention.cc): cp steps of partial attention on one K/V
//    chunk each, the chunks passed round the cp ring;
//  - ulysses (ulysses_attention.cc): all-to-alls turn the sequence split
//    into a head split before the kernel and back after it.
// All three charge the same work in total. The table is in
// context_parallel.cc.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "stg/graph/graph.h"
#include "stg/mesh/axes.h"
#include "stg/models/parts/kernel_dims.h"
#include "stg/models/parts/part_choices.h"
#include "stg/options.h"

namespace stg::passes {
class PassManager;
}

namespace stg::models {

struct MixerRow;
struct DecoderSpec;

struct ContextParallel {
  std::string algo = "allgather";  // a row's name (--cp_algo)
  int degree = 1;                  // the cp degree: the ring's number of steps
};

// What a mixer row's attention offers the cp algorithms (MixerRow::cp):
// the heads a head split divides over cp, and whether its span is bounded
// by a window of its own.
struct CpHeads {
  int64_t heads = 0;        // the K/V heads (all the heads but under GQA)
  int64_t query_heads = 0;  // the query heads
  const char* flag = "";    // the flag that sets `heads` ("--kvhead")
  const char* what = "";    // " KV heads"
};
struct CpSupport {
  // The heads of the blocks with `options` (bound dimensions by symbol);
  // null: no attention heads.
  CpHeads (*heads)(const std::vector<int64_t>& options,
                   const std::map<std::string, int64_t>& values) = nullptr;
  // The flag that bounds the attention to a window ("--window"); null: the
  // whole sequence.
  const char* window_flag = nullptr;
};

struct CpAlgoRow {
  const char* name;  // --cp_algo's text
  // The kernel for cp > 1 (with one cp rank every algorithm is the
  // all-gather kernel).
  graph::Graph (*kernel)(const KernelDims& k, const PartChoices& choices, int cp);
  // The passes its graph needs after insert-send-recv (the ring's K/V
  // chunks go round the cp ring as (axis, offset) peers); may be null.
  void (*add_passes)(passes::PassManager& pm);
  // The K and V a rank holds while a block's attention runs, from those of
  // the whole sequence (`whole` bytes) and cp, and what they are, for the
  // memory report (report/attention_kv.h).
  double (*kv_bytes)(double whole, int64_t cp);
  const char* kv_held;
  // A kernel of the decoder models only (not of --module_csv or the seed
  // transformer).
  bool decoder_only;
  // Whether its K/V chunks span the whole sequence (a window cannot use it).
  bool whole_sequence_chunks;
  // Refuses, for cp > 1, what it cannot run of a mixer row's attention on
  // the blocks with `options` (its CpSupport); may be null.
  void (*require)(const MixerRow& row, const std::vector<int64_t>& options,
                  const std::map<std::string, int64_t>& values, const mesh::Degrees& degree);
};

// Every row, in --help's order; the row named `name` (any case; a
// UsageError naming --cp_algo for an unknown one).
const std::vector<const CpAlgoRow*>& cp_algo_rows();
const CpAlgoRow& cp_algo_row(std::string_view name);
// "allgather, ring or ulysses" (`joiner` " or "), only the rows `keep` says.
std::string cp_algo_names(bool (*keep)(const CpAlgoRow&) = nullptr, const char* joiner = " or ");

// The passes the run's kernels need (each row's add_passes when cp > 1).
void add_kernel_passes(passes::PassManager& pm, const ContextParallel& cp);

// Each placed mixer row's attention checked against the run's algorithm:
// its require() over the distinct options of the blocks (cp > 1).
void check_cp_algo(const DecoderSpec& d, const std::map<std::string, int64_t>& values,
                   const Options& o, const mesh::Degrees& degree);

graph::Graph ring_attention_kernel(const KernelDims& k, const PartChoices& choices, int cp);
graph::Graph ulysses_attention_kernel(const KernelDims& k, const PartChoices& choices);

}  // namespace stg::models
