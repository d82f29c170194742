// The JSON layout of what generate() and plan() return (the Python module's
// stg.generate and stg.plan give it as a dict).
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "stg/generate.h"

namespace stg {

// [{"stage", "params", "grads", "optimizer", "activations", "total",
//   "in_flight", "blocks", "logits"}, ...], in bytes per rank.
nlohmann::ordered_json to_json(const std::vector<report::StageMemory>& memory);

// stg infer's figures: {"requests", "prompt_len", "decode_steps", "prefill",
// "kv_dtype", "peak_tflops", "mem_bw_gbps", "hbm_gb", "stages": [{"stage",
// "first_rank", "last_rank", "pool", "phases": [{"phase", "flops", "bytes",
// "bytes_read", "weight_bytes", "kv_bytes", "comm_bytes", "compute_ms",
// "memory_ms", "roofline_ms"}, ...], "memory": {"weights", "kv_cache",
// "activations", "total"}}, ...], "largest_stage", "fits"}; bytes per rank.
nlohmann::ordered_json to_json(const report::ServingFigures& serving);

// {"ranks", "first_rank", "last_rank", "files", "bytes", "nodes",
//  "stale_files_removed", "comm_group_file", "memory": [...],
//  "memory_report", "step": {...}, "notes": [...]}, and "serving": {...}
// for stg infer.
nlohmann::ordered_json to_json(const RunSummary& summary);

// {"ranks", "ranks_per_stage", "micro_batches", "nodes", "nodes_per_stage",
//  "memory": [...], "memory_report", "step": {...}, "notes": [...]}
nlohmann::ordered_json to_json(const PlanSummary& summary);

}  // namespace stg
