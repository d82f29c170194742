// The flags of the component rows (a mixer row, models/mixers/mixer_row.h;
// an MLP row, models/mlps/mlp_row.h): each row declares its own, the command
// line and its --help register them from the rows, and their values live in
// Options::component_flags by flag name, as given (a preset or a Hugging Face
// config fills the ones the user did not give).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "stg/options.h"

namespace stg::models {

// A flag of a row: an integer of at least `least`; `fallback` says what an
// unset flag means (for --help).
struct RowFlag {
  const char* flag;
  const char* help;
  const char* fallback;
  int64_t least;
  // The command line refuses a value below `least`; false: the row's checks
  // do, in their own words (or the value is read as given).
  bool command_line_least = true;
  // --help lists it after this flag (null: after the model's other flags).
  const char* listed_after = nullptr;
  // Refused outside the decoder models (models/registry.cc); false: the
  // other models ignore it or read it themselves.
  bool decoders_only = true;
  // A dimension of every decoder, whether or not its blocks have the row
  // (KVHead, Experts, KExperts): each decoder binds `symbol` to the flag's
  // value or `decoder_default` (models/decoder_workload.cc), a --module_csv
  // sheet may use `symbol` (models/csv_workload.cc), and the seed
  // transformer, which has none of them, refuses the flag. Null: the row's
  // dims() bind its symbols, for the blocks that have the row.
  const char* symbol = nullptr;
  int64_t decoder_default = 0;
};

// The value given for `flag` (by the user, a preset or a config), if any.
inline std::optional<int64_t> row_flag(const Options& o, const char* flag) {
  const auto it = o.component_flags.find(flag);
  if (it == o.component_flags.end()) return std::nullopt;
  return it->second;
}

// Every row's flags: the mixer rows', then the MLP rows', each table in its
// order (row_flags.cc).
const std::vector<const RowFlag*>& component_row_flags();

}  // namespace stg::models
