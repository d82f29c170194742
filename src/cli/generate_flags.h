// The generator's flags (`stg [generate] --flag value ...`): what CLI11 fills
// in, before the flags read as text become stg::Options (generate_options.h).
#pragma once

#include <CLI/CLI.hpp>
#include <array>
#include <map>
#include <optional>
#include <string>

#include "integer_flags.h"
#include "stg/options.h"

namespace cli {

struct GenerateFlags {
  stg::Options options;  // the flags that are Options fields as they are
  // Flags read as text, so that a bad value is refused in stg's words.
  std::string weight_sharded, tpsp, recompute, mixed, vram;
  std::string model_type, schema, schedule, units, dtype;
  std::string trace_detail;
  std::string framework, tie_embeddings, causal_saving, grad_dtype;
  std::string shard;
  std::string pp_balance;
  std::string preset, hf_config;
  std::string cp_algo;
  // An axis with two spellings (mesh/axes.h, AxisSpec::spelling): each
  // spelling's value, so that two different ones are refused.
  std::array<std::optional<int64_t>, stg::mesh::kNumAxes> axis_flag, axis_spelling;
  // The component rows' flags (models/mixers/mixer_row.h), by flag name.
  std::map<std::string, std::optional<int64_t>> component_flags;
  std::string astra_sim_dir;  // --astra_sim DIR: the output directory, and ASTRA-sim's inputs
  // The integer flags, checked before their values are used.
  IntegerFlags integers;
  // What to do besides generating.
  bool quiet = false;
  bool json = false;  // print the run's summary as JSON (what stg.generate returns)
  bool validate = false;
  bool print_passes = false;
  bool print_step_figures = false;
  // --print_makespan and its hardware figures (0: not given, the defaults
  // of stg::tools::MakespanOptions, as `stg validate --replay`'s).
  bool print_makespan = false;
  double peak_tflops = 0, mem_bw_gbps = 0, link_gbps = 0;
  // --gpu NAME (stg/hardware/gpus.h); under stg infer, which of the figures
  // it sets were given explicitly (--hbm_gb, --peak_tflops, --mem_bw_gbps).
  std::string gpu;
  std::string compute_time;  // --compute_time roofline|model
  bool hbm_given = false, peak_given = false, mem_bw_given = false;
  bool version = false;
};

// Describes the command in `app` (footer, layout, a repeated flag takes its
// last value) and adds every flag, bound to `flags`, in --help's order.
void add_generate_flags(CLI::App& app, GenerateFlags& flags);

}  // namespace cli
