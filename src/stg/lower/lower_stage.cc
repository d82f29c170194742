#include "stg/lower/lower_stage.h"

#include <algorithm>
#include <queue>
#include <stdexcept>
#include <unordered_map>

namespace stg::lower {
namespace {

using graph::Graph;
using graph::Tensor;

constexpr int kNone = -1;

// Where a tensor's nodes are in the stage being built.
struct TensorNodes {
  int comp = kNone;      // compute node (or the RECV for a shadow)
  int first_x1 = kNone;  // first collective on input 1
  int first_x2 = kNone;
};

class StageLowering {
 public:
  StageLowering(const Graph& g, const passes::PipelinePlan& plan, int stage, const Values& values,
                const LowerOptions& options)
      : g_(g),
        plan_(plan),
        stage_(stage),
        values_(values),
        options_(options),
        steps_(
            schedule_steps(options.schedule, stage, plan.pp, options.micro_batches, plan.chunks)) {}

  StageGraph run() {
    nodes_.reserve(3 * plan_.members[stage_].size());
    where_.resize(g_.size());
    remote_output_.assign(g_.size(), kNone);
    info_cache_.resize(2 * g_.size());
    sends_.resize(g_.size());
    for (const auto& link : plan_.links)
      if (link.from_stage == stage_) sends_[link.tensor].push_back(&link);
    for (int t : plan_.members[stage_]) lower_tensor(t);
    for (const auto& link : plan_.links)
      if (link.to_stage == stage_) add_recv(link);
    for (int t : plan_.members[stage_]) connect_inputs(t);
    drop_empty_compute();
    if (options_.schedule != Schedule::kNone) order_steps();
    return finish();
  }

 private:
  // Value of an expression of the graph, cached by expression (shapes of
  // replicated blocks share their expressions); the message for a value that
  // is not a whole number is only built when needed (`what` makes it).
  template <typename What>
  int64_t count(const expr::Expr& e, const What& what) {
    if (!e.identity()) return 0;
    auto it = counts_.find(e.identity());
    if (it != counts_.end()) return it->second;
    const int64_t v = whole_count(e, values_, what());
    counts_.emplace(e.identity(), v);
    return v;
  }
  // Elements of a shape: the exact product of its dims. A single dim may be
  // fractional (the seed's Dmodel/(Head*sp) at its defaults is 25/2, and
  // the reference multiplies such dims as floats); the product must not be.
  template <typename What>
  int64_t elements(const graph::Shape& shape, const What& owner) {
    expr::Rational n = 1;
    for (const expr::Expr& dim : shape) {
      auto it = dims_.find(dim.identity());
      if (it == dims_.end()) it = dims_.emplace(dim.identity(), dim_value(dim, owner())).first;
      n = n * it->second;
    }
    if (!n.is_integer() || n.num() < 0)
      return count(expr::product(shape), [&] { return "size of " + owner(); });
    return n.num();
  }
  expr::Rational dim_value(const expr::Expr& dim, const std::string& owner) const {
    try {
      return dim.evaluate(values_.by_symbol);
    } catch (const expr::ExprError& e) {
      throw SizeError("dimension " + dim.str() + " of " + owner + ": " + e.what());
    }
  }
  // Size in the trace's units (elements or bytes).
  template <typename What>
  int64_t bytes(const graph::Shape& shape, const What& what) {
    return scaled(elements(shape, what), options_.bytes_per_element);
  }
  static int64_t scaled(int64_t value, int64_t factor) {
    int64_t out;
    if (__builtin_mul_overflow(value, factor, &out))
      throw SizeError("a size overflows 64 bits in the chosen units");
    return out;
  }
  // Cached: a tensor is the input of several nodes.
  const TensorInfoRef& info(int tensor, bool shadow = false) {
    TensorInfoRef& slot = info_cache_[tensor * 2 + (shadow ? 1 : 0)];
    if (!slot)
      slot = std::make_shared<const TensorInfo>(
          io_info(g_, tensor, shadow, values_, options_.io, &strings_));
    return slot;
  }
  bool is_local(int tensor) const { return plan_.stage_of[tensor] == stage_; }
  const TensorInfoRef& input_info(int tensor) { return info(tensor, !is_local(tensor)); }
  // Error-message makers, only called when a size is invalid.
  auto tensor_named(int t) const {
    return [this, t] { return "tensor " + g_[t].id(); };
  }

  int push(LoweredNode n) {
    nodes_.push_back(std::move(n));
    return static_cast<int>(nodes_.size()) - 1;
  }

  void lower_tensor(int t) {
    const Tensor& x = g_[t];
    const graph::OpResult& r = g_.result(t);
    TensorNodes& tn = where_[t];
    LoweredNode comp;
    comp.name = x.id() + "_COMP";
    comp.kind = NodeKind::kComp;
    comp.num_ops = count(r.num_ops, [&] { return "operation count of " + x.id(); });
    // A contraction's multiply-accumulate is 2 FLOPs; an einsum without
    // contracted dims (an element-wise product) is one multiply per element.
    if (x.op == graph::Op::kEinsum && !r.y_hidden.empty())
      comp.num_ops = scaled(comp.num_ops, options_.flops_per_mac);
    if (options_.kernel_flops && !x.flops.is_zero())
      comp.num_ops = count(x.flops, [&] { return "FLOP count of " + x.id(); });
    comp.y_tensor_size = bytes(r.y_shape, tensor_named(t));
    comp.tensor_size = static_cast<uint64_t>(comp.y_tensor_size);
    comp.op_type = graph::op_code(x.op);
    for (int in : {x.x1, x.x2})
      if (in >= 0) comp.inputs.push_back(input_info(in));
    comp.outputs.push_back(info(t));
    tn.comp = push(std::move(comp));
    step_of_.resize(nodes_.size(), -1);
    step_of_[tn.comp] = step_index(t);
    tn.first_x1 = lower_input(t, x.x1, x.x1_shape, x.x1_hidden, "_X1COMM");
    tn.first_x2 = lower_input(t, x.x2, x.x2_shape, x.x2_hidden, "_X2_COMM");
    for (const passes::CrossStageLink* link : sends_[t]) add_send(t, *link);
  }

  // Collectives that bring input `in` into the view this op reads it in.
  int lower_input(int t, int in, const std::optional<graph::Shape>& shape,
                  const std::optional<graph::Shape>& hidden, const char* suffix) {
    if (in < 0) return kNone;
    const graph::OpResult& from = g_.result(in);
    // Cached by the identities of the four views' expressions.
    std::string key;
    for (const graph::Shape* view : {&from.y_shape, &from.y_hidden, &*shape, &*hidden}) {
      for (const expr::Expr& dim : *view) {
        const void* id = dim.identity();
        key.append(reinterpret_cast<const char*>(&id), sizeof id);
      }
      key += '|';
    }
    auto cached = collectives_.find(key);
    if (cached == collectives_.end()) {
      try {
        cached = collectives_
                     .emplace(key, collectives_between(from.y_shape, from.y_hidden, *shape, *hidden,
                                                       options_.active_axes, options_.claim_rule))
                     .first;
      } catch (const graph::GraphError& e) {
        throw graph::GraphError("input " + g_[in].id() + " of " + g_[t].id() + ": " + e.what());
      }
    }
    const std::vector<Collective>& colls = cached->second;
    int first = kNone, prev = kNone;
    for (const Collective& c : colls) {
      LoweredNode n;
      n.name = g_[t].id() + suffix;
      n.kind = NodeKind::kColl;
      n.coll = c.type;
      n.axis = c.axis;
      n.comm_size = bytes(from.y_shape, tensor_named(in));
      n.y_tensor_size = bytes(*shape, [&] { return "input of " + g_[t].id(); });
      n.inputs.push_back(input_info(in));
      if (prev != kNone) n.data_deps.push_back(static_cast<uint64_t>(prev));
      prev = push(std::move(n));
      if (first == kNone) first = prev;
    }
    if (prev != kNone) nodes_[where_[t].comp].data_deps.push_back(static_cast<uint64_t>(prev));
    return first;
  }

  void add_send(int t, const passes::CrossStageLink& link) {
    LoweredNode n;
    n.name = g_[t].id() + "_Y_SEND";
    n.kind = NodeKind::kSend;
    n.comm_size = bytes(g_.result(t).y_shape, tensor_named(t));
    n.peer_stage = link.to_stage;
    n.tag = link.tag;
    n.inputs.push_back(info(t));
    n.data_deps.push_back(static_cast<uint64_t>(where_[t].comp));
    push(std::move(n));
  }

  void add_recv(const passes::CrossStageLink& link) {
    const int t = link.tensor;
    LoweredNode n;
    n.name = "shadow_" + g_[t].id() + "_Y_RECV";
    n.kind = NodeKind::kRecv;
    n.comm_size = bytes(g_.result(t).y_shape, tensor_named(t));
    n.y_tensor_size = n.comm_size;
    n.peer_stage = link.from_stage;
    n.tag = link.tag;
    n.outputs.push_back(info(t, /*shadow=*/true));
    remote_output_[t] = push(std::move(n));
  }

  int output_node(int tensor) const {
    if (is_local(tensor)) return where_[tensor].comp;
    if (remote_output_[tensor] == kNone) throw std::logic_error("a cross-stage input has no RECV");
    return remote_output_[tensor];
  }

  void connect_inputs(int t) {
    const TensorNodes& tn = where_[t];
    auto connect = [&](int in, int first_coll) {
      if (in < 0) return;
      const int to = first_coll != kNone ? first_coll : tn.comp;
      nodes_[to].data_deps.push_back(static_cast<uint64_t>(output_node(in)));
    };
    connect(g_[t].x1, tn.first_x1);
    connect(g_[t].x2, tn.first_x2);
    for (int dep : g_[t].extra_deps)
      nodes_[tn.comp].data_deps.push_back(static_cast<uint64_t>(output_node(dep)));
  }

  // Compute nodes without work (placeholders, identities) are removed; their
  // dependents inherit their dependencies.
  void drop_empty_compute() {
    const int n = static_cast<int>(nodes_.size());
    removed_.assign(n, false);
    for (int i = 0; i < n; ++i)
      removed_[i] = nodes_[i].kind == NodeKind::kComp && nodes_[i].num_ops == 0;
    std::vector<std::vector<uint64_t>> resolved(n);
    std::vector<bool> done(n, false);
    // Dependencies of a removed node, with removed nodes resolved in turn.
    auto resolve = [&](auto&& self, int i) -> const std::vector<uint64_t>& {
      if (!done[i]) {
        done[i] = true;
        for (uint64_t d : nodes_[i].data_deps) {
          if (!removed_[d]) {
            resolved[i].push_back(d);
          } else {
            const auto& sub = self(self, static_cast<int>(d));
            resolved[i].insert(resolved[i].end(), sub.begin(), sub.end());
          }
        }
      }
      return resolved[i];
    };
    for (int i = 0; i < n; ++i) {
      if (removed_[i]) continue;
      std::vector<uint64_t> deps;
      for (uint64_t d : nodes_[i].data_deps) {
        if (!removed_[d]) {
          deps.push_back(d);
        } else {
          const auto& sub = resolve(resolve, static_cast<int>(d));
          deps.insert(deps.end(), sub.begin(), sub.end());
        }
      }
      nodes_[i].data_deps = std::move(deps);
    }
  }

  // Index of the tensor's step in this stage's schedule; -1 when it belongs
  // to no micro-batch (weights, accumulation, updates).
  int step_index(int t) const {
    if (options_.schedule == Schedule::kNone) return -1;
    const Tensor& x = g_[t];
    if (x.micro_batch < 0 || x.role == graph::Role::kWeight || x.role == graph::Role::kUpdate)
      return -1;
    const Step step{x.micro_batch, plan_.chunk_of[t], x.backward};
    for (size_t k = 0; k < steps_.size(); ++k)
      if (steps_[k] == step) return static_cast<int>(k);
    return -1;
  }

  // ctrl_deps from the last compute nodes of each step (those with no later
  // compute node of the same step after them) to the first compute nodes of
  // the next step.
  void order_steps() {
    const int n = static_cast<int>(nodes_.size());
    step_of_.resize(n, -1);
    const int num_steps = static_cast<int>(steps_.size());
    if (num_steps < 2) return;
    const size_t words = (num_steps + 63) / 64;
    std::vector<std::vector<int>> children(n);
    for (int i = 0; i < n; ++i)
      if (!removed_[i])
        for (uint64_t d : nodes_[i].data_deps) children[d].push_back(i);
    std::vector<int> order = topological_order(children);
    // Steps reachable after / before each node (excluding the node itself).
    std::vector<std::vector<uint64_t>> after(n, std::vector<uint64_t>(words, 0));
    std::vector<std::vector<uint64_t>> before(n, std::vector<uint64_t>(words, 0));
    auto mark = [&](std::vector<uint64_t>& set, int node) {
      if (step_of_[node] >= 0) set[step_of_[node] / 64] |= uint64_t{1} << (step_of_[node] % 64);
    };
    auto has = [&](const std::vector<uint64_t>& set, int step) {
      return (set[step / 64] >> (step % 64)) & 1;
    };
    for (auto it = order.rbegin(); it != order.rend(); ++it)
      for (int c : children[*it]) {
        for (size_t w = 0; w < words; ++w) after[*it][w] |= after[c][w];
        mark(after[*it], c);
      }
    for (int v : order)
      for (int c : children[v]) {
        for (size_t w = 0; w < words; ++w) before[c][w] |= before[v][w];
        mark(before[c], v);
      }
    std::vector<std::vector<int>> sinks(num_steps), sources(num_steps);
    for (int v : order) {
      const int s = step_of_[v];
      if (s < 0) continue;
      if (!has(after[v], s)) sinks[s].push_back(v);
      if (!has(before[v], s)) sources[s].push_back(v);
    }
    int prev = -1;
    for (int s = 0; s < num_steps; ++s) {
      if (sinks[s].empty()) continue;  // a step with no work on this stage
      if (prev >= 0)
        for (int v : sources[s])
          for (int u : sinks[prev]) nodes_[v].ctrl_deps.push_back(static_cast<uint64_t>(u));
      prev = s;
    }
  }

  std::vector<int> topological_order(const std::vector<std::vector<int>>& children) const {
    const int n = static_cast<int>(nodes_.size());
    std::vector<int> pending(n, 0), order;
    for (int i = 0; i < n; ++i)
      for (int c : children[i]) ++pending[c];
    std::vector<int> ready;
    for (int i = 0; i < n; ++i)
      if (!removed_[i] && pending[i] == 0) ready.push_back(i);
    while (!ready.empty()) {
      const int v = ready.back();
      ready.pop_back();
      order.push_back(v);
      for (int c : children[v])
        if (--pending[c] == 0) ready.push_back(c);
    }
    return order;
  }

  // Drops removed nodes and duplicate deps, orders nodes topologically
  // (stable: earliest definition first) and numbers them 0..n-1 in file
  // order.
  StageGraph finish() {
    const int n = static_cast<int>(nodes_.size());
    std::vector<std::vector<int>> children(n);
    std::vector<int> pending(n, 0);
    auto dedupe = [](std::vector<uint64_t>& deps) {
      std::vector<uint64_t> unique;
      for (uint64_t d : deps)
        if (std::find(unique.begin(), unique.end(), d) == unique.end()) unique.push_back(d);
      deps = std::move(unique);
    };
    for (int i = 0; i < n; ++i) {
      if (removed_[i]) continue;
      dedupe(nodes_[i].data_deps);
      dedupe(nodes_[i].ctrl_deps);
      for (auto* deps : {&nodes_[i].data_deps, &nodes_[i].ctrl_deps})
        for (uint64_t d : *deps) children[d].push_back(i);
      pending[i] = static_cast<int>(nodes_[i].data_deps.size() + nodes_[i].ctrl_deps.size());
    }
    std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
    for (int i = 0; i < n; ++i)
      if (!removed_[i] && pending[i] == 0) ready.push(i);
    std::vector<uint64_t> new_id(n, 0);
    StageGraph out;
    out.stage = stage_;
    while (!ready.empty()) {
      const int i = ready.top();
      ready.pop();
      new_id[i] = out.nodes.size();
      out.nodes.push_back(std::move(nodes_[i]));
      for (int c : children[i])
        if (--pending[c] == 0) ready.push(c);
    }
    const auto kept = std::count(removed_.begin(), removed_.end(), false);
    if (static_cast<int64_t>(out.nodes.size()) != kept)
      throw graph::GraphError("stage " + std::to_string(stage_) + " has a dependency cycle");
    for (size_t i = 0; i < out.nodes.size(); ++i) {
      out.nodes[i].id = i;
      for (uint64_t& d : out.nodes[i].data_deps) d = new_id[d];
      for (uint64_t& d : out.nodes[i].ctrl_deps) d = new_id[d];
    }
    return out;
  }

  const Graph& g_;
  const passes::PipelinePlan& plan_;
  const int stage_;
  const Values& values_;
  const LowerOptions& options_;
  std::vector<LoweredNode> nodes_;
  std::vector<TensorNodes> where_;  // by tensor
  std::vector<int> remote_output_;  // by producer: its RECV here
  // By producer: its links to other stages, in plan order.
  std::vector<std::vector<const passes::CrossStageLink*>> sends_;
  std::vector<bool> removed_;
  std::vector<TensorInfoRef> info_cache_;  // by 2 * tensor + shadow
  std::unordered_map<const void*, int64_t> counts_;
  std::unordered_map<const void*, expr::Rational> dims_;
  StrCache strings_;
  std::unordered_map<std::string, std::vector<Collective>> collectives_;
  const std::vector<Step> steps_;
  std::vector<int> step_of_;  // per node: its step index, -1 if none
};

}  // namespace

StageGraph lower_stage(const Graph& g, const passes::PipelinePlan& plan, int stage,
                       const Values& values, const LowerOptions& options) {
  return StageLowering(g, plan, stage, values, options).run();
}

}  // namespace stg::lower
