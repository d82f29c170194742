// --astra_sim: which ASTRA-sim inputs a run writes next to its traces,
// decided (and refused, with UsageError) before anything is written.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "stg/mesh/mesh.h"
#include "stg/options.h"

namespace stg::emit {

struct AstraSimPlan {
  std::vector<int64_t> dims;  // the network's dimensions
  // (name inside the output directory, content): network.yml, system.json,
  // memory.json, run.sh.
  std::vector<std::pair<std::string, std::string>> files;
};

// Empty files when --astra_sim is off. `rank_pattern` and `comm_group_name`
// are the run's (generate.h OutputPlan), `units` the traces' (the flag's or
// the framework's); `notes` gets what the user should know (traces in
// --units stg are read as bytes and FLOPs).
AstraSimPlan plan_astra_sim(const Options& o, const std::string& rank_pattern,
                            const std::string& comm_group_name, const mesh::Mesh& mesh, Units units,
                            std::vector<std::string>& notes);

}  // namespace stg::emit
