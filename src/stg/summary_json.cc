#include "stg/summary_json.h"

namespace stg {

nlohmann::ordered_json to_json(const std::vector<report::StageMemory>& memory) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const report::StageMemory& m : memory)
    out.push_back({{"stage", m.stage},
                   {"params", m.params},
                   {"grads", m.grads},
                   {"optimizer", m.optimizer},
                   {"activations", m.activations},
                   {"total", m.total()},
                   {"in_flight", m.in_flight},
                   {"blocks", m.blocks},
                   {"logits", m.logits}});
  return out;
}

nlohmann::ordered_json to_json(const RunSummary& s) {
  nlohmann::ordered_json j;
  j["ranks"] = s.ranks;
  j["first_rank"] = s.first_rank;
  j["last_rank"] = s.last_rank;
  j["files"] = s.files;
  j["bytes"] = s.bytes;
  j["nodes"] = s.nodes;
  j["stale_files_removed"] = s.stale_files_removed;
  j["comm_group_file"] = s.comm_group_path;
  j["memory"] = to_json(s.memory);
  j["memory_report"] = s.memory_report;
  j["step"] = report::to_json(s.step);
  j["notes"] = s.notes;
  return j;
}

nlohmann::ordered_json to_json(const PlanSummary& s) {
  nlohmann::ordered_json j;
  j["ranks"] = s.ranks;
  j["ranks_per_stage"] = s.ranks_per_stage;
  j["micro_batches"] = s.micro_batches;
  j["nodes"] = s.nodes;
  j["nodes_per_stage"] = s.nodes_per_stage;
  j["memory"] = to_json(s.memory);
  j["memory_report"] = s.memory_report;
  j["step"] = report::to_json(s.step);
  j["notes"] = s.notes;
  return j;
}

}  // namespace stg
