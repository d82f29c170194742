// Everything the generator needs to know, as given on the command line.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace stg {

// Bad input: the message names the flag and what would be valid. The
// command exits with status 2 and writes nothing.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Options {
  std::string output_dir = ".";
  std::string output_name = "workload.%d.et";
  std::optional<std::string> comm_group_file;
  std::string chakra_schema_version = "v0.0.4";

  int64_t dp = 1, tp = 1, sp = 1, pp = 1, ep = 1;
  bool weight_sharded = false;
  std::optional<int> zero_stage;  // 0-3; 3 is --weight_sharded 1

  std::string model_type = "transformer";
  std::string module_csv;  // a reference-format sharding spreadsheet as the model
  // Model dimensions; unset ones take the model type's defaults.
  std::optional<int64_t> din, dout, dmodel, dff, seq, head, num_stacks, batch;
  std::optional<int64_t> dvocal, kvhead, experts, kexperts, micro_batch;
  std::optional<bool> tpsp, activation_recompute, mixed_precision, print_gpu_vram;

  std::string pipeline_schedule = "none";  // none, gpipe, 1f1b, interleaved
  int virtual_stages = 1;                   // chunks per stage (interleaved)

  std::string units = "stg";    // stg (elements, MACs) or physical (bytes, FLOPs)
  std::string dtype = "bf16";   // bytes per element for --units physical

  std::string ranks;  // "A-B": write only these ranks (same bytes as a full run)
  int threads = 0;    // 0: one per core
};

}  // namespace stg
