#include "stg/tools/validate_json.h"

namespace stg::tools {

namespace {

nlohmann::ordered_json replay_json(const ReplayResult& r) {
  return {{"completed", r.completed},
          {"ranks", r.ranks},
          {"nodes_done", r.nodes_done},
          {"nodes_total", r.nodes_total},
          {"stuck_nodes", r.stuck_nodes},
          {"stuck_ranks", r.stuck_ranks},
          {"stuck", r.stuck},
          {"rounds", r.rounds},
          {"error", r.error}};
}

nlohmann::ordered_json makespan_json(const MakespanResult& m) {
  nlohmann::ordered_json j = {{"completed", m.completed},     {"error", m.error},
                              {"makespan_ns", m.makespan_ns}, {"end_ns", m.end_ns},
                              {"compute_ns", m.compute_ns},   {"idle_ns", m.idle_ns}};
  if (!m.network.empty()) j["network"] = m.network;  // on ASTRA-sim's network
  return j;
}

}  // namespace

nlohmann::ordered_json to_json(const ValidationReport& r) {
  nlohmann::ordered_json violations = nlohmann::ordered_json::object();
  for (int k = 0; k < kNumRules; ++k) {
    const Rule rule = static_cast<Rule>(k);
    nlohmann::ordered_json shown = nlohmann::ordered_json::array();
    for (const Violation& v : r.shown)
      if (v.rule == rule) shown.push_back(v.message);
    violations[rule_label(rule)] = {
        {"title", rule_title(rule)}, {"count", r.count(rule)}, {"shown", shown}};
  }
  nlohmann::ordered_json j;
  j["directory"] = r.dir;
  j["comm_group_file"] = r.comm_group_file;
  j["ranks"] = r.ranks;
  j["files"] = r.files;
  j["nodes"] = r.nodes;
  j["verdict"] = r.verdict();
  j["exit_status"] = r.exit_status();
  j["violations"] = violations;
  j["warnings"] = r.warnings;
  j["zero_time_roots"] = r.zero_time_roots;
  j["roofline"] = {{"peak_tflops", r.roofline.peak_tflops},
                   {"mem_bw_gbps", r.roofline.mem_bw_gbps}};
  j["errors"] = r.errors;
  j["notes"] = r.notes;
  j["replay"] = r.replay ? replay_json(*r.replay) : nlohmann::ordered_json();
  j["makespan"] = r.makespan ? makespan_json(*r.makespan) : nlohmann::ordered_json();
  return j;
}

}  // namespace stg::tools
