#include "stg/report/serving.h"

#include <algorithm>
#include <cstdio>

#include "stg/report/memory.h"

namespace stg::report {

namespace {

void add(PhaseFigures& p, const LoweredNode& n, int64_t copies, int64_t step) {
  switch (n.kind) {
    case NodeKind::kComp:
      p.flops += copies * n.num_ops_at(step);
      p.bytes += copies * static_cast<int64_t>(n.tensor_size_at(step));
      p.bytes_read +=
          copies * (static_cast<int64_t>(n.tensor_size_at(step)) - n.y_tensor_size_at(step));
      p.weight_bytes += copies * static_cast<int64_t>(n.weight_bytes_read);
      p.kv_bytes += copies * static_cast<int64_t>(n.state_bytes_read_at(step));
      break;
    case NodeKind::kColl:
    case NodeKind::kSend:
      p.comm_bytes += copies * n.comm_size_at(step);
      break;
    case NodeKind::kRecv:
      break;
  }
}

// 1528 -> "1,528".
std::string with_commas(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(i, ",");
  return (n < 0 ? "-" : "") + digits;
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string padded(const std::string& s, size_t width, bool left = false) {
  if (s.size() >= width) return s;
  const std::string pad(width - s.size(), ' ');
  return left ? s + pad : pad + s;
}

std::string memory_line(const ServingMemory& m) {
  return "weights " + with_commas(m.weights) + " bytes, KV cache " + with_commas(m.kv_cache) +
         " bytes, activations " + with_commas(m.activations) +
         " bytes: " + fixed(static_cast<double>(m.total()) / 1e9, 2) + " GB";
}

// A flag's value as given: 80, 0.5.
std::string gb(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

std::vector<PhaseFigures> phase_figures(const lower::FlatStage& stage, bool prefill_phase) {
  const int steps = stage.decode_steps();
  const int64_t m = stage.micro_batches();
  const auto& nodes = stage.one().nodes;
  bool decodes = false;
  for (const LoweredNode& n : nodes) decodes = decodes || n.per_step;
  PhaseFigures prefill{"prefill"}, first{"decode 0"}, last{"decode " + std::to_string(steps - 1)},
      all{"decode, " + std::to_string(steps) + " steps"};
  for (uint32_t i = 0; i < nodes.size(); ++i) {
    const LoweredNode& n = nodes[i];
    if (!n.per_step) {
      if (n.phase == graph::Phase::kPrefill) add(prefill, n, stage.copies(i), 0);
      continue;
    }
    add(first, n, m, 0);
    add(last, n, m, steps - 1);
    // Every step: the template's sizes grown step after step.
    auto sum = [&](int64_t base, int64_t growth) { return stage.sum_over_copies(i, base, growth); };
    switch (n.kind) {
      case NodeKind::kComp:
        all.flops += stage.sum_over_copies(i, n.num_ops, n.growth.num_ops, n.first_step_num_ops);
        all.bytes +=
            stage.sum_over_copies(i, static_cast<int64_t>(n.tensor_size), n.growth.tensor_size,
                                  static_cast<int64_t>(n.first_step_tensor_size));
        all.bytes_read +=
            stage.sum_over_copies(i, static_cast<int64_t>(n.tensor_size) - n.y_tensor_size,
                                  n.growth.tensor_size - n.growth.y_tensor_size,
                                  static_cast<int64_t>(n.first_step_tensor_size));
        all.weight_bytes += sum(static_cast<int64_t>(n.weight_bytes_read), 0);
        all.kv_bytes += sum(static_cast<int64_t>(n.state_bytes_read), n.growth.state_bytes_read);
        break;
      case NodeKind::kColl:
      case NodeKind::kSend:
        all.comm_bytes += sum(n.comm_size, n.growth.comm_size);
        break;
      case NodeKind::kRecv:
        break;
    }
  }
  std::vector<PhaseFigures> out;
  if (prefill_phase) out.push_back(prefill);
  if (!decodes) return out;
  out.push_back(first);
  if (steps > 1) {
    out.push_back(last);
    out.push_back(all);
  }
  return out;
}

ServingMemory stage_memory(const graph::Graph& g, int stage, const expr::Values& values,
                           int64_t element_bytes, int micro_batches) {
  ServingMemory m;
  auto bytes = [&](int t) {
    const int own = g[t].element_bytes;
    return static_cast<int64_t>(elements(g, t, values)) * (own > 0 ? own : element_bytes);
  };
  for (size_t i = 0; i < g.size(); ++i) {
    const auto t = static_cast<int>(i);
    const graph::Tensor& x = g[t];
    if (x.stage != stage) continue;
    if (x.op == graph::Op::kPlaceholder) {
      if (x.role == graph::Role::kWeight) m.weights += bytes(t);
      // One cache per micro-batch (the template's stands for each).
      if (x.role == graph::Role::kPersistent) m.kv_cache += bytes(t) * micro_batches;
      continue;
    }
    // An op holds its activation inputs and its output at once. (An
    // identity or a communication op makes no data of its own; what it
    // passes on is its origin's.)
    if (graph::is_comm(x.op) || x.op == graph::Op::kIdentity) continue;
    auto origin = [&](int in) {
      while (in >= 0 && (graph::is_comm(g[in].op) || g[in].op == graph::Op::kIdentity))
        in = g[in].x1;
      return in;
    };
    int64_t working = bytes(t);
    for (int in : {x.x1, x.x2}) {
      const int data = origin(in);
      if (data >= 0 && g[data].op != graph::Op::kPlaceholder) working += bytes(data);
    }
    m.activations = std::max(m.activations, working);
  }
  return m;
}

double compute_seconds(const PhaseFigures& p, const hardware::RooflineFigures& hw) {
  return static_cast<double>(p.flops) / (hw.peak_tflops * 1e12);
}

double memory_seconds(const PhaseFigures& p, const hardware::RooflineFigures& hw) {
  return static_cast<double>(p.bytes) / (hw.mem_bw_gbps * 1e9);
}

std::string format_serving(const ServingFigures& f) {
  std::string out = "serving: " + with_commas(f.requests) + " requests, prompts of " +
                    with_commas(f.prompt_len) + " tokens" +
                    (f.prefill ? "" : " in the KV caches (no prefill)") + ", " +
                    with_commas(f.decode_steps) + " decode steps, KV cache " + f.kv_dtype +
                    "; per rank, roofline at " + fixed(f.roofline.peak_tflops, 0) + " TFLOPS and " +
                    fixed(f.roofline.mem_bw_gbps, 0) + " GB/s\n";
  const std::vector<size_t> width = {20, 20, 18, 18, 16, 16, 12, 12, 12};
  auto row = [&](const std::vector<std::string>& cells) {
    std::string line = "  ";
    for (size_t k = 0; k < cells.size(); ++k)
      line += (k ? " " : "") + padded(cells[k], width[k], k == 0);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    return line + "\n";
  };
  for (const StageServing& s : f.stages) {
    out += "stage " + std::to_string(s.stage) + " (ranks " + std::to_string(s.first_rank) + "-" +
           std::to_string(s.last_rank) + (s.pool.empty() ? "" : ", " + s.pool) + "):\n";
    out += row({"phase", "FLOPs", "bytes read", "weights read", "KV read", "comm bytes",
                "compute ms", "memory ms", "roofline ms"});
    for (const PhaseFigures& p : s.phases) {
      const double c = compute_seconds(p, f.roofline) * 1e3,
                   m = memory_seconds(p, f.roofline) * 1e3;
      out += row({p.phase, with_commas(p.flops), with_commas(p.bytes_read),
                  with_commas(p.weight_bytes), with_commas(p.kv_bytes), with_commas(p.comm_bytes),
                  fixed(c, 3), fixed(m, 3), fixed(std::max(c, m), 3)});
    }
    out += "  memory per rank: " + memory_line(s.memory) + " of --hbm_gb " + gb(f.hbm_gb) + "\n";
  }
  return out;
}

std::string hbm_refusal(const ServingFigures& f) {
  if (f.fits()) return "";
  return "a rank of stage " + std::to_string(f.largest_stage) +
         (f.largest_pool.empty() ? "" : " (" + f.largest_pool + ")") + " needs " +
         memory_line(f.largest) + ", more than --hbm_gb " + gb(f.hbm_gb) +
         ": spread the model over more ranks (--tp, --pp), use --kv_dtype fp8, serve fewer "
         "--requests or shorter --prompt_len/--decode_steps, or give the GPU's --hbm_gb";
}

}  // namespace stg::report
