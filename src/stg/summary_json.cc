#include "stg/summary_json.h"

#include <algorithm>

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

nlohmann::ordered_json to_json(const report::ServingFigures& f) {
  nlohmann::ordered_json stages = nlohmann::ordered_json::array();
  for (const report::StageServing& st : f.stages) {
    nlohmann::ordered_json phases = nlohmann::ordered_json::array();
    for (const report::PhaseFigures& p : st.phases) {
      const double compute = report::compute_seconds(p, f.roofline) * 1e3;
      const double memory = report::memory_seconds(p, f.roofline) * 1e3;
      phases.push_back({{"phase", p.phase},
                        {"flops", p.flops},
                        {"bytes", p.bytes},
                        {"bytes_read", p.bytes_read},
                        {"weight_bytes", p.weight_bytes},
                        {"kv_bytes", p.kv_bytes},
                        {"comm_bytes", p.comm_bytes},
                        {"compute_ms", compute},
                        {"memory_ms", memory},
                        {"roofline_ms", std::max(compute, memory)}});
    }
    stages.push_back({{"stage", st.stage},
                      {"first_rank", st.first_rank},
                      {"last_rank", st.last_rank},
                      {"pool", st.pool},
                      {"phases", phases},
                      {"memory",
                       {{"weights", st.memory.weights},
                        {"kv_cache", st.memory.kv_cache},
                        {"activations", st.memory.activations},
                        {"total", st.memory.total()}}}});
  }
  nlohmann::ordered_json j;
  j["requests"] = f.requests;
  j["prompt_len"] = f.prompt_len;
  j["decode_steps"] = f.decode_steps;
  j["prefill"] = f.prefill;
  j["kv_dtype"] = f.kv_dtype;
  j["peak_tflops"] = f.roofline.peak_tflops;
  j["mem_bw_gbps"] = f.roofline.mem_bw_gbps;
  j["hbm_gb"] = f.hbm_gb;
  j["stages"] = stages;
  j["largest_stage"] = f.largest_stage;
  j["fits"] = f.fits();
  return j;
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
  if (s.serving) j["serving"] = to_json(*s.serving);
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
