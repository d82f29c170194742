#include "stg/lower/lower_stage.h"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>

#include "stg/lower/fold_token_copy.h"
#include "stg/lower/kernel_of_op.h"
#include "stg/lower/node_order.h"
#include "stg/lower/op_cost.h"
#include "stg/util/graph_algo.h"

namespace stg::lower {
namespace {

using graph::Graph;
using graph::Tensor;

constexpr int kNone = -1;

class StageLowering {
 public:
  StageLowering(const Graph& g, const std::vector<int>& members, int stage, const Values& values,
                const LowerOptions& options)
      : g_(g), members_(members), stage_(stage), values_(values), options_(options) {}

  StageGraph run() {
    nodes_.reserve(members_.size());
    node_of_.assign(g_.size(), kNone);
    info_cache_.resize(2 * g_.size());
    // SENDs and RECVs between stages are created after the stage's other
    // nodes, link by link (in tag order), as the reference creates them
    // (docs/facts.md §5.8); those along a mesh axis in graph order, as
    // collectives are.
    std::vector<int> p2p;
    for (int t : members_) {
      if (is_stage_link(t))
        p2p.push_back(t);
      else
        lower_op(t);
    }
    std::stable_sort(p2p.begin(), p2p.end(),
                     [this](int a, int b) { return g_[a].comm.tag < g_[b].comm.tag; });
    for (int t : p2p) lower_op(t);
    for (int t : members_) connect(t);
    for (int t : members_)
      if (g_[t].succeeds >= 0) nodes_[node_of_[t]].succeeds = node(g_[t].succeeds);
    drop_empty_compute();
    std::vector<bool> token_copy(nodes_.size(), false);
    for (int t : members_)
      if (node_of_[t] != kNone && g_[t].feeds_next_step && g_[t].phase != graph::Phase::kDecode)
        token_copy[node_of_[t]] = true;
    fold_token_copies(nodes_, removed_, token_copy, options_.roofline);
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
      try {
        n = n * it->second;
      } catch (const expr::ExprError& e) {
        throw expr::overflow_error(expr::product(shape), values_, "size of " + owner(), e.what());
      }
    }
    if (!n.is_integer() || n.num() < 0)
      return count(expr::product(shape), [&] { return "size of " + owner(); });
    return n.num();
  }
  expr::Rational dim_value(const expr::Expr& dim, const std::string& owner) const {
    try {
      return dim.evaluate(values_.by_symbol);
    } catch (const expr::ExprError& e) {
      throw expr::overflow_error(dim, values_, "a dimension of " + owner, e.what());
    }
  }
  // Size of tensor t's data seen in `shape` in the trace's units (elements
  // or bytes; op_cost.h's element size).
  template <typename What>
  int64_t bytes_of(int t, const graph::Shape& shape, const What& what, int override = 0) {
    return scaled(elements(shape, what), element_bytes(g_, t, options_, override), shape, what);
  }
  // What comm op t moves (op_cost.h), in the trace's units.
  template <typename What>
  int64_t comm_size(int t, const What& what) {
    const CommData c = comm_data(g_, t, options_);
    return scaled(elements(*c.shape, what), c.element_bytes, *c.shape, what);
  }
  // `value` elements of `shape` in bytes of `factor`; the error names the
  // flags of the shape's symbols.
  template <typename What>
  int64_t scaled(int64_t value, int64_t factor, const graph::Shape& shape, const What& what) {
    int64_t out;
    if (__builtin_mul_overflow(value, factor, &out))
      throw expr::overflow_error(
          expr::product(shape), values_, "size in bytes of " + what(),
          "does not fit in 64 bits at " + std::to_string(factor) + " bytes per element");
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
  // The tensor a value really is, for the inputs/outputs lists: collectives
  // carry their source, a RECV the (shadow of the) remote producer.
  const TensorInfoRef& origin_info(int t) {
    while (g_[t].op == graph::Op::kCollective) t = g_[t].x1;
    if (g_[t].op == graph::Op::kRecv) return info(g_[t].x1, /*shadow=*/true);
    return info(t);
  }
  bool is_p2p(int t) const { return g_[t].op == graph::Op::kSend || g_[t].op == graph::Op::kRecv; }
  bool is_stage_link(int t) const {
    return is_p2p(t) && g_[t].comm.peer.kind == mesh::Peer::Kind::kStage;
  }
  auto tensor_named(int t) const {
    return [this, t] { return "tensor " + g_[t].id(); };
  }

  void lower_op(int t) {
    const Tensor& x = g_[t];
    LoweredNode n;
    switch (x.op) {
      case graph::Op::kCollective:
        n.name = x.comm.label;
        n.name_number_at = x.comm.label_number_at;
        n.name_step_at = x.comm.label_step_at;
        n.kind = NodeKind::kColl;
        n.coll = x.comm.type;
        n.axis = x.comm.axis;
        n.comm_size = comm_size(t, tensor_named(graph::carried(g_, t)));
        // A collective may reduce in a wider type than its input's
        // (Tensor::element_bytes of the collective).
        n.y_tensor_size = bytes_of(
            graph::carried(g_, t), g_.result(t).y_shape, [&] { return "input of " + x.comm.label; },
            x.element_bytes);
        n.inputs.push_back(origin_info(x.x1));
        break;
      case graph::Op::kSend:
      case graph::Op::kRecv: {
        const bool send = x.op == graph::Op::kSend;
        n.name = x.comm.label;
        n.name_number_at = x.comm.label_number_at;
        n.name_step_at = x.comm.label_step_at;
        n.kind = send ? NodeKind::kSend : NodeKind::kRecv;
        n.comm_size = comm_size(t, tensor_named(x.x1));
        n.peer = x.comm.peer;
        n.tag = x.comm.tag;
        // A value a decode step receives from another step (the token
        // sampled before it) is listed under the link's own name, the
        // reader's input (passes/insert_send_recv.h): what it carries is
        // another tensor in every step.
        const graph::Tensor& value = g_[graph::carried(g_, t)];
        const bool across_steps = x.phase == graph::Phase::kDecode && value.feeds_next_step &&
                                  (value.phase != x.phase || value.phase_step != x.phase_step);
        if (send) {
          n.inputs.push_back(across_steps ? info(t) : info(x.x1));
        } else {
          n.y_tensor_size = n.comm_size;
          n.outputs.push_back(across_steps ? info(t) : info(x.x1, /*shadow=*/true));
        }
        break;
      }
      default:
        lower_compute(t, n);
    }
    n.micro_batch = x.micro_batch;
    n.per_step = x.phase == graph::Phase::kDecode;
    n.phase = graph::phase_of(g_, t);
    if (n.kind == NodeKind::kComp && in_a_step(x)) {
      n.scheduled = true;
      n.phase_step = x.phase_step;
      n.chunk = x.chunk;
    }
    node_of_[t] = static_cast<int>(nodes_.size());
    nodes_.push_back(std::move(n));
  }

  void lower_compute(int t, LoweredNode& n) {
    const Tensor& x = g_[t];
    const graph::OpResult& r = g_.result(t);
    n.name = x.id() + "_COMP";
    n.name_number_at = x.number_at;
    n.name_step_at = x.step_at;
    n.kind = NodeKind::kComp;
    n.num_ops = count(r.num_ops, [&] { return "operation count of " + x.id(); });
    const OpWork work = op_work(g_, t, options_);  // op_cost.h
    if (work.count != &r.num_ops)
      n.num_ops = count(*work.count, [&] { return "FLOP count of " + x.id(); });
    else if (__builtin_mul_overflow(n.num_ops, work.factor, &n.num_ops))
      throw expr::overflow_error(r.num_ops, values_, "FLOP count of " + x.id(),
                                 "does not fit in 64 bits");
    n.y_tensor_size = bytes_of(t, r.y_shape, tensor_named(t));
    n.tensor_size = static_cast<uint64_t>(n.y_tensor_size);
    if (options_.tensor_size_moved) {
      // Inputs as the op reads them (a custom kernel's x2_shape without an
      // x2 is its output's shape, not an input), told apart by what they are.
      auto read = [&](int in, const graph::Shape& view) {
        const int data = graph::carried(g_, in);
        const auto bytes = static_cast<uint64_t>(bytes_of(data, view, tensor_named(in)));
        n.tensor_size += bytes;
        // What the bytes are: the data an identity links to (a weight read
        // through a tied embedding's link).
        int origin = data;
        while (g_[origin].op == graph::Op::kIdentity && g_[origin].x1 >= 0)
          origin = graph::carried(g_, g_[origin].x1);
        const graph::Tensor& source = g_[origin];
        if (source.role == graph::Role::kWeight || source.require_grads)
          n.weight_bytes_read += bytes;
        else if (source.role == graph::Role::kPersistent)
          n.state_bytes_read += bytes;
      };
      if (x.x1 >= 0) read(x.x1, *x.x1_shape);
      if (x.x2 >= 0) read(x.x2, *x.x2_shape);
    }
    n.op_type = graph::op_code(x.op);
    if (options_.kernel_model) kernel_time(t, n);
    for (int in : {x.x1, x.x2})
      if (in >= 0) n.inputs.push_back(origin_info(in));
    n.outputs.push_back(info(t));
  }

  // The op's time and kernel kind under the kernel model
  // (lower/kernel_of_op.h).
  void kernel_time(int t, LoweredNode& n) {
    const Tensor& x = g_[t];
    const graph::OpResult& r = g_.result(t);
    const auto what = [&] { return "operation count of " + x.id(); };
    const bool own_flops = x.op == graph::Op::kCustom && !x.flops.is_zero();
    const double ops =
        static_cast<double>(own_flops ? count(x.flops, what) : count(r.num_ops, what));
    const int64_t bytes = x.element_bytes > 0 ? x.element_bytes : options_.kernel_element_bytes;
    const DimValue dim = [&](const expr::Expr& d) {
      const expr::Rational v = dim_value(d, x.id());
      return static_cast<double>(v.num()) / static_cast<double>(v.den());
    };
    const OpKernel kernel = kernel_of_op(x, r.y_shape, ops, bytes, dim);
    n.kernel_seconds = op_kernel_seconds(*options_.kernel_model, kernel, bytes);
    n.kernel_kind = static_cast<uint8_t>(kernel.kind);
  }

  int node(int producer) const {
    if (node_of_[producer] == kNone)
      throw graph::GraphError("stage " + std::to_string(stage_) + ": " + g_[producer].id() +
                              " is read here but is on stage " +
                              std::to_string(g_[producer].stage) + " (no RECV)");
    return node_of_[producer];
  }

  // Data dependencies. A compute op waits for the collectives issued for it
  // first, then for its plain inputs, then for its extra dependencies (the
  // reference's order); a comm op for its input and its extra dependencies;
  // a RECV for nothing here.
  void connect(int t) {
    const Tensor& x = g_[t];
    if (x.op == graph::Op::kRecv) return;
    std::vector<uint64_t>& deps = nodes_[node_of_[t]].data_deps;
    auto dep = [&](int in) { deps.push_back(static_cast<uint64_t>(node(in))); };
    if (graph::is_comm(x.op)) {
      dep(x.x1);
      for (int d : x.extra_deps) dep(d);  // e.g. the tied embedding's sum waits for the flush
      return;
    }
    auto is_coll = [&](int in) { return in >= 0 && g_[in].op == graph::Op::kCollective; };
    for (int in : {x.x1, x.x2})
      if (is_coll(in)) dep(in);
    for (int in : {x.x1, x.x2})
      if (in >= 0 && !is_coll(in)) dep(in);
    for (int d : x.extra_deps) dep(d);
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

  // Whether the tensor is work of a micro-batch's step that a pipeline
  // schedule orders (not weights, accumulation or updates).
  static bool in_a_step(const Tensor& x) {
    return x.micro_batch >= 0 && x.role != graph::Role::kWeight && x.role != graph::Role::kUpdate;
  }

  // Drops removed nodes and duplicate deps and numbers the nodes 0..n-1 in
  // the order they were created (NodeOrder::kReference; lower::FlatStage
  // derives the schedule's ctrl_deps and the issue order from it).
  StageGraph finish() {
    const int n = static_cast<int>(nodes_.size());
    std::vector<std::vector<int>> children(n);
    for (int i = 0; i < n; ++i) {
      if (removed_[i]) continue;
      std::vector<uint64_t> unique;
      for (uint64_t d : nodes_[i].data_deps)
        if (std::find(unique.begin(), unique.end(), d) == unique.end()) unique.push_back(d);
      nodes_[i].data_deps = std::move(unique);
      for (uint64_t d : nodes_[i].data_deps) children[d].push_back(i);
    }
    const auto keep = [this](size_t k) { return !removed_[k]; };
    const auto kept = std::count(removed_.begin(), removed_.end(), false);
    if (static_cast<int64_t>(util::topological_order(children, keep).size()) != kept)
      throw graph::GraphError("stage " + std::to_string(stage_) + " has a dependency cycle");
    std::vector<uint64_t> new_id(n, 0);
    StageGraph out;
    out.stage = stage_;
    out.feeder_attributes = options_.feeder_attributes;
    for (int i = 0; i < n; ++i) {
      if (!keep(i)) {
        if (nodes_[i].succeeds >= 0)
          throw graph::GraphError("stage " + std::to_string(stage_) + ": " + nodes_[i].name +
                                  " succeeds another node but does no work");
        continue;
      }
      new_id[i] = out.nodes.size();
      out.nodes.push_back(std::move(nodes_[i]));
    }
    for (size_t i = 0; i < out.nodes.size(); ++i) {
      LoweredNode& node = out.nodes[i];
      node.id = i;
      for (uint64_t& d : node.data_deps) d = new_id[d];
      for (uint64_t& d : node.previous_step_deps) d = new_id[d];
      if (node.succeeds >= 0) {
        if (removed_[node.succeeds])
          throw graph::GraphError("stage " + std::to_string(stage_) + ": " + node.name +
                                  " succeeds a node without work");
        node.succeeds = static_cast<int64_t>(new_id[node.succeeds]);
      }
    }
    return out;
  }

  const Graph& g_;
  const std::vector<int>& members_;
  const int stage_;
  const Values& values_;
  const LowerOptions& options_;
  std::vector<LoweredNode> nodes_;
  std::vector<int> node_of_;  // by tensor: its node, kNone if not on this stage
  std::vector<bool> removed_;
  std::vector<TensorInfoRef> info_cache_;  // by 2 * tensor + shadow
  std::unordered_map<const void*, int64_t> counts_;
  std::unordered_map<const void*, expr::Rational> dims_;
  StrCache strings_;
};

}  // namespace

StageGraph lower_stage(const Graph& g, const std::vector<int>& members, int stage,
                       const Values& values, const LowerOptions& options) {
  return StageLowering(g, members, stage, values, options).run();
}

}  // namespace stg::lower
