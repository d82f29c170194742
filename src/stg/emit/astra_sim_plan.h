// --astra_sim: which ASTRA-sim inputs a run writes next to its traces,
// decided (and refused, with UsageError) before anything is written.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "stg/emit/network_shape.h"
#include "stg/lower/stage_graph.h"
#include "stg/mesh/mesh.h"
#include "stg/options.h"

namespace stg::emit {

// A file written next to the traces.
struct AstraSimFile {
  std::string name;  // inside the output directory
  std::string content;
  bool executable = false;  // run.sh
};

struct AstraSimPlan {
  NetworkShape shape;  // the network's dimensions, inside a node or across
  // network.yml, system.json, memory.json, run.sh.
  std::vector<AstraSimFile> files;
};

// Empty files when --astra_sim is off. `rank_pattern` and `comm_group_name`
// are the run's (generate.h OutputPlan), `units` the traces' (the flag's or
// the framework's); `notes` gets what the user should know (traces in
// --units stg are read as bytes and FLOPs).
AstraSimPlan plan_astra_sim(const Options& o, const std::string& rank_pattern,
                            const std::string& comm_group_name, const mesh::Mesh& mesh, Units units,
                            std::vector<std::string>& notes);

// A note for `notes` when a compute node of a stage with nothing before it
// runs in 0 ns at the written system's roofline: ASTRA-sim's event queue
// aborts at time 0 on it (hardware/roofline.h; `stg validate` warns W1).
// `stages[s]` is stage s lowered with one micro-batch, or null.
std::optional<std::string> zero_time_note(const std::vector<const StageGraph*>& stages,
                                          const hardware::RooflineFigures& hw);

}  // namespace stg::emit
