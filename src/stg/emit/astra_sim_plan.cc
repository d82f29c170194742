#include "stg/emit/astra_sim_plan.h"

#include <algorithm>
#include <filesystem>

#include "stg/emit/astra_sim_inputs.h"
#include "stg/hardware/roofline.h"
#include "stg/io/output_files.h"
#include "stg/io/output_names.h"
#include "stg/mesh/axes.h"

namespace stg::emit {

AstraSimPlan plan_astra_sim(const Options& o, const std::string& rank_pattern,
                            const std::string& comm_group_name, const mesh::Mesh& mesh, Units units,
                            std::vector<std::string>& notes) {
  AstraSimPlan plan;
  if (!o.astra_sim) {
    require(o.network_dims.empty(),
            "--network_dims describes the network of --astra_sim: add --astra_sim DIR");
    return plan;
  }
  require(o.schema == Schema::kV004,
          "--astra_sim needs --chakra_schema_version v0.0.4: ASTRA-sim reads no other format");
  require(io::astra_sim_can_open(rank_pattern),
          "--astra_sim needs traces ASTRA-sim can open: drop --allow_any_name and use an "
          "--output_name like workload.%d.et");
  const int64_t ranks = mesh.num_ranks();
  require(ranks >= 2,
          "--astra_sim needs at least 2 ranks: every dimension of ASTRA-sim's network has at "
          "least 2 NPUs (e.g. add --dp 2)");
  for (const char* name : {kNetworkFile, kSystemFile, kMemoryFile, kRunScript})
    require(comm_group_name != name, "--comm_group_file '" + comm_group_name +
                                         "' is a file of --astra_sim: choose another name");
  // ASTRA-sim skips a comm-group file whose path contains "empty" and then
  // runs every collective on all ranks.
  const std::string path =
      std::filesystem::absolute(std::filesystem::path(o.output_dir.empty() ? "." : o.output_dir) /
                                comm_group_name)
          .lexically_normal()
          .string();
  require(path.find("empty") == std::string::npos,
          "--astra_sim: ASTRA-sim ignores a comm-group file whose path contains 'empty' (" + path +
              "): choose an output directory without that word");
  const int64_t gpus_per_node = machine_of(o).gpus_per_node;
  if (!o.network_dims.empty()) {
    plan.shape = given_network_shape(parse_network_dims(o.network_dims, ranks), gpus_per_node);
  } else {
    std::vector<PlacedAxis> axes;
    for (const mesh::MeshAxis& a : mesh.axes()) {
      const int row = mesh::find_axis(a.name);
      axes.push_back({a.degree, row < 0 ? mesh::kNumAxes : mesh::kAxes[row].node_place});
    }
    axes.push_back({mesh.stages(), mesh::kAxes[mesh::stage_row()].node_place});
    plan.shape = default_network_shape(axes, gpus_per_node);
  }
  if (units == Units::kStg)
    notes.push_back(
        "--astra_sim: these traces count elements and multiply-accumulates (--units stg), and "
        "ASTRA-sim reads bytes and FLOPs: add --units physical for times in seconds");
  // PREFIX of PREFIX.%d.et, as the file names spell it ("%%" is "%").
  const std::string first = io::expand_rank(rank_pattern, 0);
  const std::string prefix = first.substr(0, first.size() - std::string(".0.et").size());
  const AstraSimFiles f =
      astra_sim_files(plan.shape, machine_of(o), prefix, comm_group_name, ranks);
  plan.files = {{kNetworkFile, f.network_yml},
                {kSystemFile, f.system_json},
                {kMemoryFile, f.memory_json},
                {kRunScript, f.run_sh, true}};
  return plan;
}

std::optional<std::string> zero_time_note(const std::vector<const StageGraph*>& stages,
                                          const hardware::RooflineFigures& hw) {
  std::string where;
  for (size_t s = 0; s < stages.size(); ++s) {
    if (!stages[s]) continue;
    const bool any =
        std::any_of(stages[s]->nodes.begin(), stages[s]->nodes.end(), [&](const LoweredNode& n) {
          return n.kind == NodeKind::kComp && n.data_deps.empty() && n.ctrl_deps.empty() &&
                 n.tensor_size > 0 &&
                 hardware::roofline_ns(static_cast<uint64_t>(std::max<int64_t>(n.num_ops, 0)),
                                       n.tensor_size, hw) == 0;
        });
    if (any) where += (where.empty() ? "" : ", ") + std::to_string(s);
  }
  if (where.empty()) return std::nullopt;
  return "--astra_sim: the ranks of stage(s) " + where +
         " start with a compute node that runs in 0 ns at the system's roofline, and ASTRA-sim "
         "aborts at time 0 on it (EventQueue.cpp: get_event_time() > current_time; stg validate "
         "warns W1): make the model's dimensions larger";
}

}  // namespace stg::emit
