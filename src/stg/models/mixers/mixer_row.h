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
#include "stg/models/parts/context_parallel.h"
#include "stg/models/parts/kv_cache.h"
#include "stg/models/parts/layout.h"
#include "stg/models/parts/part_choices.h"
#include "stg/options.h"
#include "stg/report/activation_memory.h"

namespace stg::models {

class HfConfig;

// A flag of a row: an integer of at least `least`; `fallback` says what an
// unset flag means (for --help).
struct RowFlag {
  const char* flag;
  const char* help;
  const char* fallback;
  int64_t least;
};

struct MixerRow {
  const char* name;
  std::vector<RowFlag> flags;
  // Puts the row's mixer on the blocks its flags choose (BlockSpec::mixer
  // and mixer_options), with the decoder's dimensions bound (`values`, by
  // symbol); a row none of whose flags is given does nothing. Notes say
  // what a given flag did not change.
  void (*place)(DecoderSpec& d, const std::map<std::string, int64_t>& values, const Options& o,
                std::vector<std::string>& notes);
  // Refuses what the row cannot build, with the run's bound dimensions
  // (by symbol) and degrees; only called when some block has the mixer.
  void (*check)(const std::map<std::string, int64_t>& values, const Options& o,
                const mesh::Degrees& degree);
  // The row's flags a Hugging Face config sets (into `flags`, by flag name).
  void (*read_hf)(const HfConfig& cfg, std::map<std::string, int64_t>& flags);
  // What the block's mixer keeps for the backward pass (the Megatron-LM
  // memory report; null: the attention's terms).
  report::MixerActivationsOf activations;
  // The block's mixer, with attention()'s ports (x, o, do, dx).
  graph::Graph (*build)(const Layout& l, const BlockSpec& spec, const PartChoices& choices,
                        const ContextParallel& cp, const KvCache& kv);
};

// Every row, in --help's order (mixer_rows.cc).
const std::vector<const MixerRow*>& mixer_rows();

// Each row's place(), in the table's order.
void place_mixers(DecoderSpec& d, const std::map<std::string, int64_t>& values, const Options& o,
                  std::vector<std::string>& notes);
// Each placed row's check().
void check_mixers(const DecoderSpec& d, const std::map<std::string, int64_t>& values,
                  const Options& o, const mesh::Degrees& degree);
// What a config says of the rows' flags, by flag name.
std::map<std::string, int64_t> read_mixers_hf(const HfConfig& cfg);

}  // namespace stg::models
