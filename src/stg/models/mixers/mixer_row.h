// A mixer kind as one row (docs/architecture.md "How to add a mixer kind"):
// the flags it owns, which blocks of a decoder take it (a pattern), its
// checks, what a Hugging Face config says of it, and its graph builder.
// The command line and its --help register the rows' flags, the decoder
// workload places and checks the rows, a config is read through them, and
// a block's attention slot is built by its row. A new mixer kind is one
// file that defines its row, and one line in mixer_rows.cc.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "stg/graph/graph.h"
#include "stg/mesh/axes.h"
#include "stg/models/blocks/block_spec.h"
#include "stg/models/flag_binding.h"
#include "stg/models/parts/context_parallel.h"
#include "stg/models/parts/kv_cache.h"
#include "stg/models/parts/layout.h"
#include "stg/models/parts/part_choices.h"
#include "stg/models/row_flag.h"
#include "stg/options.h"
#include "stg/report/activation_memory.h"
#include "stg/report/attention_kv.h"

namespace stg::models {

class HfConfig;

// What a mixer keeps per sequence between serving steps.
enum class ServingState { kNone, kKvCache, kLatentCache, kRecurrent };

struct MixerRow {
  const char* name;
  // The name a block's mixer is appended under in the frame (blocks/frame.h),
  // and so in its tensors' and trace nodes' names: "mha" for the attention
  // rows, the name the traces have always had.
  const char* slot;
  std::vector<RowFlag> flags;
  // Puts the row's mixer on the blocks its flags choose (BlockSpec::mixer
  // and mixer_options), with the decoder's dimensions bound (`values`, by
  // symbol); a row none of whose flags is given does nothing. Notes say
  // what a given flag did not change. Null: a family places the row.
  void (*place)(DecoderSpec& d, const std::map<std::string, int64_t>& values, const Options& o,
                std::vector<std::string>& notes);
  // Refuses what the row cannot build, with the run's bound dimensions
  // (by symbol) and degrees, for each distinct `options` of the blocks
  // that have the row.
  void (*check)(const std::vector<int64_t>& options, const std::map<std::string, int64_t>& values,
                const Options& o, const mesh::Degrees& degree);
  // The row's flags a Hugging Face config sets (into `flags`, by flag
  // name); may be null.
  void (*read_hf)(const HfConfig& cfg, std::map<std::string, int64_t>& flags);
  // What the block's mixer keeps for the backward pass (the Megatron-LM
  // memory report).
  report::ActivationTermOf activations;
  // The block's mixer, with attention()'s ports (x, o, do, dx).
  graph::Graph (*build)(const Layout& l, const BlockSpec& spec, const PartChoices& choices,
                        const ContextParallel& cp, const KvCache& kv);
  ServingState serving = ServingState::kNone;
  // The dimension symbols the blocks with `options` need, with their flags
  // and defaults (bound before the rows with flags are placed); may be null.
  void (*dims)(const std::vector<int64_t>& options, const std::map<std::string, int64_t>& values,
               const Options& o, std::vector<Dim>& dims) = nullptr;
  // Notes for the row's flags that no block of `d` reads; may be null.
  void (*note_unread)(const DecoderSpec& d, const Options& o, const std::string& family,
                      std::vector<std::string>& notes) = nullptr;
  // A block's keys and values as context parallelism moves them
  // (report/attention_kv.h: widths and KV heads per tp rank); may be null.
  void (*cp_kv)(const std::vector<int64_t>& options, const std::map<std::string, int64_t>& values,
                report::AttentionKv& kv) = nullptr;
  // A row that runs another row's attention with a bound of its own: that
  // row, and how many of the block's options are this row's (the other
  // row's follow them). Null: none.
  const MixerRow& (*wraps)() = nullptr;
  size_t own_options = 0;
  // What its attention offers the cp algorithms (parts/context_parallel.h:
  // heads to split, a window); none: nothing of either.
  CpSupport cp = {};
};

// The attention rows the families choose (mha_attention.cc, mla_attention.cc).
const MixerRow& mha_row();
const MixerRow& mla_row();

// Every row, in --help's order (mixer_rows.cc).
const std::vector<const MixerRow*>& mixer_rows();

// Each row's place(), in the table's order.
void place_mixers(DecoderSpec& d, const std::map<std::string, int64_t>& values, const Options& o,
                  std::vector<std::string>& notes);
// Each placed row's check(), per distinct options.
void check_mixers(const DecoderSpec& d, const std::map<std::string, int64_t>& values,
                  const Options& o, const mesh::Degrees& degree);
// The rows' dims() of the blocks that have them, in the table's order.
std::vector<Dim> mixer_dims(const DecoderSpec& d, const std::map<std::string, int64_t>& values,
                            const Options& o);
// Each row's note_unread().
void note_unread_mixers(const DecoderSpec& d, const Options& o, const std::string& family,
                        std::vector<std::string>& notes);
// The distinct options of `row` over the blocks that have it, or a row
// that wraps it (their part of the options for `row`), in block order.
std::vector<std::vector<int64_t>> options_of(const DecoderSpec& d, const MixerRow& row);
// The first block's row that says how its K and V cross cp, with that
// row's options (null: none).
std::pair<const MixerRow*, std::vector<int64_t>> cp_kv_row(const DecoderSpec& d);
// What a config says of the rows' flags, by flag name.
std::map<std::string, int64_t> read_mixers_hf(const HfConfig& cfg);

}  // namespace stg::models
