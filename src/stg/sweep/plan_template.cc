#include "stg/sweep/plan_template.h"

#include <algorithm>
#include <set>

#include "stg/frameworks/framework.h"
#include "stg/generate.h"
#include "stg/lower/op_cost.h"
#include "stg/passes/pipeline.h"
#include "stg/report/stage_figures.h"
#include "stg/workloads/build_workload.h"

namespace stg::sweep {

namespace {

using graph::Op;
using Part = report::MemoryTerm::Part;

// Sums of one part before compilation.
struct PartSums {
  expr::Expr flops_per_micro_batch, flops_once;
  struct FlowSums {
    int64_t ops_per_micro_batch = 0, ops_once = 0;
    expr::Expr per_micro_batch, once;
    std::array<int64_t, 4> kind_ops_per_micro_batch{}, kind_ops_once{};
    std::array<expr::Expr, 4> kind_per_micro_batch, kind_once;
  };
  std::map<std::string, std::array<FlowSums, 2>> axes;
  expr::Expr params, grads, optimizer, kept_here, kept_next, kept_both;
};

// `kind`: the collective's graph::CollType, or -1 for a send.
void add(PartSums::FlowSums& f, bool per_micro_batch, const expr::Expr& bytes, int kind = -1) {
  if (per_micro_batch) {
    ++f.ops_per_micro_batch;
    f.per_micro_batch = f.per_micro_batch + bytes;
  } else {
    ++f.ops_once;
    f.once = f.once + bytes;
  }
  if (kind < 0) return;
  if (per_micro_batch) {
    ++f.kind_ops_per_micro_batch[kind];
    f.kind_per_micro_batch[kind] = f.kind_per_micro_batch[kind] + bytes;
  } else {
    ++f.kind_ops_once[kind];
    f.kind_once[kind] = f.kind_once[kind] + bytes;
  }
}

}  // namespace

TemplateKey template_key(const mesh::Degrees& degree, int zero_stage) {
  TemplateKey key;
  for (int r = 0; r < mesh::kNumAxes; ++r)
    key.degree[r] =
        free_degree(mesh::kAxes[r]) ? std::min<int64_t>(degree.row(r), 2) : degree.row(r);
  key.zero_stage = zero_stage;
  return key;
}

namespace {

// The template's flags: the key's degrees (dp and pp 1 or 2), any valid
// micro-batch (its size stays a symbol), no schedule.
Options template_options(const Options& base, const TemplateKey& key, int blocks) {
  Options o = base;
  o.num_stacks = blocks;
  for (int r = 0; r < mesh::kNumAxes; ++r) o.degree.row(r) = key.degree[r];
  o.weight_sharded = false;
  o.zero_stage = key.zero_stage;
  // A micro-batch of whole sequences on every rank of the axes that split it.
  int64_t split = 1;
  for (int r = 0; r < mesh::kNumAxes; ++r)
    if (mesh::kAxes[r].splits_batch) split *= o.degree.row(r);
  o.batch = o.micro_batch = split;
  o.pipeline_schedule = lower::Schedule::kNone;
  o.virtual_stages = 1;
  return o;
}

// The part a tensor is summed into: 0 the first stage's ends, 1 + b block
// b, blocks + 1 the last stage's ends.
struct PartOf {
  const graph::Graph& g;
  int blocks;
  int operator()(int t) const {
    const graph::Placement& p = g[t].placement;
    return p.kind == graph::Placement::Kind::kFirst ? 0
           : passes::placed_with_last(p, blocks)    ? blocks + 1
                                                    : p.block + 1;
  }
};

// Every size and count lowering evaluates, for the check that a plan's
// are whole; each once (replicated blocks and micro-batches share their
// dims' and counts' expressions, so they are told apart by identity before
// any product is built).
class Checks {
 public:
  void add(const graph::Shape& shape) {
    std::vector<const void*> key;
    key.reserve(shape.size());
    for (const expr::Expr& dim : shape) key.push_back(dim.identity());
    if (shapes_.insert(std::move(key)).second) add_new(expr::product(shape));
  }
  // `factor` times `count`, an expression of the graph.
  void add(const expr::Expr& count, int64_t factor = 1) {
    if (count.is_zero() || !counts_.insert({count.identity(), factor}).second) return;
    add_new(factor == 1 ? count : count * expr::Expr::constant(factor));
  }
  const std::set<expr::Expr>& all() const { return all_; }

 private:
  void add_new(const expr::Expr& e) {
    if (!e.is_zero()) all_.insert(e);
  }
  std::set<std::vector<const void*>> shapes_;
  std::set<std::pair<const void*, int64_t>> counts_;
  std::set<expr::Expr> all_;
};

struct Sums {
  std::vector<PartSums> parts;
  PartSums::FlowSums forward, backward;  // the stage boundary's sends
  Checks checks;
};

// Work and traffic of every op, summed by part: lowering's rules
// (lower/op_cost.h) as expressions, under the step figures' axis names
// (report/stage_figures.h).
Sums sum_work_and_traffic(const graph::Graph& g, const mesh::Mesh& mesh,
                          const lower::LowerOptions& lo, const PartOf& part_of) {
  Sums sums;
  sums.parts.resize(part_of.blocks + 2);
  for (int i = 0; i < static_cast<int>(g.size()); ++i) {
    const graph::Tensor& x = g[i];
    const graph::OpResult& r = g.result(i);
    sums.checks.add(r.y_shape);
    if (x.x1_shape) sums.checks.add(*x.x1_shape);
    if (x.x2_shape) sums.checks.add(*x.x2_shape);
    PartSums& s = sums.parts[part_of(i)];
    const bool repeated = x.micro_batch == 0;  // lower::FlatStage's copies
    if (graph::is_comm(x.op)) {
      const expr::Expr bytes = lower::comm_bytes_expr(lower::comm_data(g, i, lo));
      const bool send = x.op == Op::kSend;
      if (x.op == Op::kCollective)
        add(s.axes[report::reported_axis(mesh, x.comm.axis)][0], repeated, bytes,
            static_cast<int>(x.comm.type));
      else if (x.comm.peer.kind != mesh::Peer::Kind::kStage)
        add(s.axes[report::p2p_axis(mesh, x.comm.peer)][send ? 0 : 1], repeated, bytes);
      else if (send)
        add(x.stage == 0 ? sums.forward : sums.backward, repeated, bytes);
    } else {
      const lower::OpWork w = lower::op_work(g, i, lo);
      sums.checks.add(r.num_ops);
      sums.checks.add(*w.count, w.factor);
      const expr::Expr work = lower::work_expr(w);
      if (repeated)
        s.flops_per_micro_batch = s.flops_per_micro_batch + work;
      else
        s.flops_once = s.flops_once + work;
    }
  }
  return sums;
}

// Memory: the framework's terms (report/memory.h's term_bytes), each at its
// part; an activation buffer by the parts that read it (its own, the next,
// or both).
void sum_memory(const graph::Graph& g, const frameworks::MemoryModel& memory,
                const std::string& dp_symbol, const PartOf& part_of, std::vector<PartSums>& sums) {
  const expr::Expr dp = dp_symbol.empty() ? expr::Expr::constant(1) : expr::Expr::symbol(dp_symbol);
  auto bytes = [&](const report::MemoryTerm& t) {
    return report::term_bytes(t, expr::product(g.result(t.tensor).y_shape), dp);
  };
  std::map<int, std::set<int>> readers;  // activation buffer -> parts reading it
  std::map<int, const report::MemoryTerm*> act_term;
  for (const report::MemoryTerm& t : memory.terms) {
    PartSums& s = sums[t.place];
    switch (t.part) {
      case Part::kParams:
        s.params = s.params + bytes(t);
        break;
      case Part::kGrads:
        s.grads = s.grads + bytes(t);
        break;
      case Part::kOptimizer:
        s.optimizer = s.optimizer + bytes(t);
        break;
      case Part::kActivations:
        readers[t.tensor].insert(t.place);
        act_term[t.tensor] = &t;
        break;
    }
  }
  for (const auto& [buffer, parts] : readers) {
    const int p = part_of(buffer);
    const expr::Expr b = bytes(*act_term[buffer]);
    PartSums& s = sums[p];
    if (parts == std::set<int>{p})
      s.kept_here = s.kept_here + b;
    else if (parts == std::set<int>{p + 1})
      s.kept_next = s.kept_next + b;
    else if (parts == std::set<int>{p, p + 1})
      s.kept_both = s.kept_both + b;
    else
      throw UsageError("stg plans cannot evaluate this model: an activation of " + g[buffer].id() +
                       " is read beyond the next block");
  }
}

struct Compiled {
  std::vector<PartFigures> parts;
  Flow forward, backward;
  std::vector<FastExpr> checks;  // sums.checks.all()'s, in their order
};

// The sums compiled, with a plan's values by symbol index.
Compiled compile_sums(const Sums& sums, Symbols& symbols) {
  auto compile = [&](const expr::Expr& e) { return FastExpr(e, symbols); };
  auto compile_flow = [&](const PartSums::FlowSums& f) {
    Flow flow;
    flow.ops_per_micro_batch = f.ops_per_micro_batch;
    flow.ops_once = f.ops_once;
    flow.bytes_per_micro_batch = compile(f.per_micro_batch);
    flow.bytes_once = compile(f.once);
    flow.kind_ops_per_micro_batch = f.kind_ops_per_micro_batch;
    flow.kind_ops_once = f.kind_ops_once;
    for (size_t k = 0; k < f.kind_once.size(); ++k) {
      flow.kind_bytes_per_micro_batch[k] = compile(f.kind_per_micro_batch[k]);
      flow.kind_bytes_once[k] = compile(f.kind_once[k]);
    }
    return flow;
  };
  Compiled c;
  for (const PartSums& s : sums.parts) {
    PartFigures p;
    p.flops_per_micro_batch = compile(s.flops_per_micro_batch);
    p.flops_once = compile(s.flops_once);
    for (const auto& [axis, flows] : s.axes)
      p.axes[axis] = {compile_flow(flows[0]), compile_flow(flows[1])};
    p.params = compile(s.params);
    p.grads = compile(s.grads);
    p.optimizer = compile(s.optimizer);
    p.kept_here = compile(s.kept_here);
    p.kept_next = compile(s.kept_next);
    p.kept_both = compile(s.kept_both);
    c.parts.push_back(std::move(p));
  }
  c.forward = compile_flow(sums.forward);
  c.backward = compile_flow(sums.backward);
  for (const expr::Expr& e : sums.checks.all()) c.checks.push_back(compile(e));
  return c;
}

// The template's value of every symbol, by index.
std::vector<int64_t> symbol_values(const Symbols& symbols, const expr::Values& values) {
  std::vector<int64_t> out(symbols.size(), 0);
  for (const auto& [name, index] : symbols.names()) {
    const auto it = values.by_symbol.find(name);
    if (it == values.by_symbol.end())
      throw UsageError("stg plans cannot evaluate this model: the symbol " + name +
                       " has no value");
    out[index] = it->second;
  }
  return out;
}

}  // namespace

PlanTemplate::PlanTemplate(const Options& base, const TemplateKey& key, int blocks) {
  const Options o = template_options(base, key, blocks);
  models::Workload w = workloads::build_workload(o);
  const lower::LowerOptions lo = lower_options(o, w);
  const passes::PassManager pipeline = build_pipeline(o, w, /*flat=*/true);
  graph::Graph g = std::move(w.model.graph);
  passes::Analyses analyses(w.mesh, w.values);
  pipeline.run(g, analyses);
  g.evaluate_all();
  const PartOf part_of{g, blocks};
  Sums sums = sum_work_and_traffic(g, w.mesh, lo, part_of);
  const int data_axis = w.mesh.find(mesh::AxisKind::kData);
  dp_symbol_ = data_axis < 0 ? "" : w.mesh.axis(data_axis).symbol;
  const frameworks::MemoryModel memory = w.framework->memory_model(o, w, lo, g, part_of);
  sum_memory(g, memory, dp_symbol_, part_of, sums.parts);
  formula_ = memory.activation_formula;
  mesh_ = w.mesh;
  named_ = w.values;
  Compiled c = compile_sums(sums, symbols_);
  parts_ = std::move(c.parts);
  forward_link_ = c.forward;
  backward_link_ = c.backward;
  auto exact = sums.checks.all().begin();
  for (FastExpr& check : c.checks) checks_.push_back({std::move(check), *exact++});
  base_values_ = symbol_values(symbols_, w.values);
  auto index_of = [&](const std::string& name) {
    const auto it = symbols_.names().find(name);
    return it == symbols_.names().end() ? -1 : it->second;
  };
  dp_ = index_of(dp_symbol_);
  pp_ = index_of(mesh::kAxes[mesh::stage_row()].symbol);
  micro_batch_ = index_of("MicroBatch");
  batch_ = index_of("Batch");
}

std::vector<int64_t> PlanTemplate::values(int64_t dp, int64_t pp, int64_t micro_batch,
                                          int64_t batch) const {
  std::vector<int64_t> v = base_values_;
  if (dp_ >= 0) v[dp_] = dp;
  if (pp_ >= 0) v[pp_] = pp;
  if (micro_batch_ >= 0) v[micro_batch_] = micro_batch;
  if (batch_ >= 0) v[batch_] = batch;
  return v;
}

bool PlanTemplate::whole(const std::vector<int64_t>& values) const {
  for (const Check& c : checks_) {
    const std::optional<bool> whole = c.fast.whole(values);
    if (!(whole ? *whole : exact_whole(c.exact, symbols_, values))) return false;
  }
  return true;
}

mesh::Mesh PlanTemplate::mesh_of(int64_t dp, int64_t pp) const {
  std::vector<mesh::MeshAxis> axes = mesh_.axes();
  for (mesh::MeshAxis& a : axes)
    if (a.kind == mesh::AxisKind::kData) a.degree = dp;
  return mesh::Mesh(axes, pp);
}

expr::Values PlanTemplate::named_values(int64_t dp, int64_t pp, int64_t micro_batch,
                                        int64_t batch) const {
  expr::Values v = named_;
  if (!dp_symbol_.empty()) v.by_symbol[dp_symbol_] = dp;
  const char* stages = mesh::kAxes[mesh::stage_row()].symbol;
  if (v.by_symbol.count(stages)) v.by_symbol[stages] = pp;
  if (v.by_symbol.count("MicroBatch")) v.by_symbol["MicroBatch"] = micro_batch;
  if (v.by_symbol.count("Batch")) v.by_symbol["Batch"] = batch;
  return v;
}

}  // namespace stg::sweep
