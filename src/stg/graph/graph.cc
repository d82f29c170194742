#include "stg/graph/graph.h"

namespace stg::graph {

using expr::Expr;

Shape parse_shape(std::string_view text) {
  Shape shape;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    shape.push_back(Expr::parse(text.substr(start, comma - start)));
    start = comma + 1;
  }
  return shape;
}

std::string shape_str(const Shape& shape) {
  if (shape.empty()) return "1";
  std::string out;
  for (const Expr& dim : shape) {
    if (!out.empty()) out += ',';
    out += dim.str();
  }
  return out;
}

int Graph::find(std::string_view id) const {
  std::string key(id);
  if (key.find('@') == std::string::npos) key += "@0";
  auto it = index_.find(key);
  return it == index_.end() ? -1 : it->second;
}

int Graph::at(std::string_view id) const {
  int i = find(id);
  if (i < 0) throw GraphError("no tensor '" + std::string(id) + "' in the graph");
  return i;
}

int Graph::add(Tensor t) {
  const std::string id = t.id();
  if (!index_.emplace(id, static_cast<int>(tensors_.size())).second)
    throw GraphError("duplicate tensor id '" + id + "'");
  tensors_.push_back(std::move(t));
  return static_cast<int>(tensors_.size()) - 1;
}

int Graph::add(Tensor t, std::shared_ptr<const OpResult> known) {
  const int i = add(std::move(t));
  if (results_.size() < tensors_.size()) results_.resize(tensors_.size());
  results_[i] = std::move(known);
  return i;
}

void Graph::set_input(int i, int operand, int producer) {
  Tensor& t = tensors_.at(i);
  (operand == 1 ? t.x1 : t.x2) = producer;
}

void Graph::permute(const std::vector<int>& order) {
  const size_t n = tensors_.size();
  if (order.size() != n) throw GraphError("permute: the order does not list every tensor");
  std::vector<int> new_index(n, -1);
  for (size_t i = 0; i < n; ++i) {
    const int old = order[i];
    if (old < 0 || static_cast<size_t>(old) >= n || new_index[old] >= 0)
      throw GraphError("permute: the order is not a permutation");
    new_index[old] = static_cast<int>(i);
  }
  results_.resize(n);
  std::vector<Tensor> tensors(n);
  std::vector<std::shared_ptr<const OpResult>> results(n);
  auto map = [&](int& ref) {
    if (ref >= 0) ref = new_index[ref];
  };
  for (size_t i = 0; i < n; ++i) {
    Tensor& t = tensors[i];
    t = std::move(tensors_[order[i]]);
    results[i] = std::move(results_[order[i]]);
    map(t.x1);
    map(t.x2);
    map(t.grad_of);
    map(t.succeeds);
    for (int& d : t.extra_deps) map(d);
  }
  tensors_ = std::move(tensors);
  results_ = std::move(results);
  for (auto& [id, index] : index_) index = new_index[index];
}

void Graph::set_grad(int tensor, const std::string& grad_of) {
  if (!grad_of.empty()) tensors_[tensor].grad_of = at(grad_of);
}

// The builders below are op() with their attributes, plus the gradient link.
int Graph::input(const std::string& name, std::string_view shape, const std::string& grad_of) {
  const int i = op(name, Op::kPlaceholder, "", "", shape);
  set_grad(i, grad_of);
  return i;
}

int Graph::weight(const std::string& name, std::string_view shape) {
  int i = input(name, shape);
  tensors_[i].require_grads = true;
  tensors_[i].role = Role::kWeight;
  return i;
}

int Graph::einsum(const std::string& name, const std::string& x1, const std::string& x2,
                  const std::string& spec, std::string_view x1_shape, std::string_view x2_shape,
                  const std::string& grad_of) {
  const int i = op(name, Op::kEinsum, x1, x2, x1_shape, x2_shape);
  tensors_[i].einsum = spec;
  set_grad(i, grad_of);
  if (tensors_[i].grad_of >= 0 && tensors_[tensors_[i].grad_of].role == Role::kWeight)
    tensors_[i].role = Role::kGradient;
  return i;
}

int Graph::add_op(const std::string& name, const std::string& x1, const std::string& x2,
                  std::string_view shape, const std::string& grad_of) {
  const int i = op(name, Op::kAdd, x1, x2, shape, shape);
  set_grad(i, grad_of);
  return i;
}

int Graph::elementwise(const std::string& name, const std::string& x1,
                       expr::Rational ops_per_element, std::string_view shape,
                       const std::string& grad_of) {
  const int i = op(name, Op::kElementwise, x1, "", shape);
  tensors_[i].amplifier = ops_per_element;
  set_grad(i, grad_of);
  return i;
}

int Graph::identity(const std::string& name, const std::string& x1, std::string_view shape,
                    const std::string& grad_of) {
  const int i = op(name, Op::kIdentity, x1, "", shape);
  set_grad(i, grad_of);
  return i;
}

int Graph::reshape(const std::string& name, const std::string& x1, std::string_view from_shape,
                   std::string_view to_shape, const std::string& grad_of) {
  const int i = op(name, Op::kReshape, x1, "", from_shape, to_shape);
  set_grad(i, grad_of);
  return i;
}

int Graph::op(const std::string& name, Op op, const std::string& x1, const std::string& x2,
              std::string_view x1_shape, std::string_view x2_shape, std::string_view x1_hidden,
              std::string_view x2_hidden) {
  Tensor t;
  t.name = name;
  t.op = op;
  t.x1 = ref(x1);
  t.x2 = ref(x2);
  if (!x1_shape.empty()) {
    t.x1_shape = parse_shape(x1_shape);
    t.x1_hidden = parse_shape(x1_hidden);
  }
  if (!x2_shape.empty()) {
    t.x2_shape = parse_shape(x2_shape);
    t.x2_hidden = parse_shape(x2_hidden);
  }
  return add(std::move(t));
}

int Graph::slice(const std::string& name, const std::string& x1, int axis, std::string_view size,
                 std::string_view x1_shape, const std::string& x2, std::string_view x2_shape) {
  int i = op(name, Op::kSlice, x1, x2, x1_shape, x2_shape);
  tensors_[i].axis = axis;
  tensors_[i].factor = Expr::parse(size);
  return i;
}

int Graph::custom(const std::string& name, const std::string& x1, std::string_view num_ops,
                  std::string_view x1_shape, std::string_view out_shape,
                  std::string_view out_hidden) {
  int i = op(name, Op::kCustom, x1, "", x1_shape, out_shape, "1", out_hidden);
  tensors_[i].factor = Expr::parse(num_ops);
  return i;
}

int Graph::broadcast(const std::string& name, const std::string& x1, int axis,
                     std::string_view factor, std::string_view x1_shape) {
  int i = op(name, Op::kBroadcast, x1, "", x1_shape);
  tensors_[i].axis = axis;
  tensors_[i].factor = Expr::parse(factor);
  return i;
}

int Graph::elementwise2(const std::string& name, const std::string& x1, const std::string& x2,
                        expr::Rational ops_per_element, std::string_view shape) {
  int i = op(name, Op::kElementwise2, x1, x2, shape, shape);
  tensors_[i].amplifier = ops_per_element;
  return i;
}

void Graph::mark_backward(std::initializer_list<const char*> names) {
  for (const char* n : names) tensors_[at(n)].phase = Phase::kBackwardInput;
}

Graph& Graph::flops(std::string_view flops) {
  tensors_.back().flops = Expr::parse(flops);
  return *this;
}

Graph& Graph::grad_of(const std::string& grad_of) {
  set_grad(static_cast<int>(tensors_.size()) - 1, grad_of);
  return *this;
}

void Graph::mark_backward_from(int first) {
  for (size_t i = first; i < tensors_.size(); ++i) tensors_[i].phase = Phase::kBackwardInput;
}

Phase phase_of(const Graph& g, int t) {
  const Tensor& x = g[t];
  if (x.is_backward() && x.grad_of >= 0 && g[x.grad_of].require_grads)
    return Phase::kBackwardWeight;
  return x.phase;
}

void rename_symbols(Tensor& t, const std::map<std::string, Expr>& renames, RenameMemo* memo) {
  if (renames.empty()) return;
  auto rename = [&](Expr& e) {
    if (!memo || !e.identity()) {
      e = e.substitute(renames);
      return;
    }
    auto [it, fresh] = memo->try_emplace(e.identity());
    if (fresh) it->second = {e, e.substitute(renames)};
    e = it->second.second;
  };
  for (auto* shape : {&t.x1_shape, &t.x1_hidden, &t.x2_shape, &t.x2_hidden})
    if (*shape)
      for (Expr& dim : **shape) rename(dim);
  if (!t.factor.is_zero()) rename(t.factor);
  if (!t.flops.is_zero()) rename(t.flops);
}

void Graph::substitute(const std::map<std::string, Expr>& renames) {
  RenameMemo memo;  // replicated blocks share their expressions
  for (Tensor& t : tensors_) rename_symbols(t, renames, &memo);
  results_.clear();
}

void Graph::append(const Graph& module, const std::string& prefix,
                   const std::map<std::string, Expr>& renames, Placement placement) {
  const int offset = static_cast<int>(tensors_.size());
  for (const Tensor& src : module.tensors_) {
    Tensor t = src;
    t.name = prefix + src.name;
    t.placement = placement;
    auto shift = [&](int& i) {
      if (i >= 0) i += offset;
    };
    shift(t.x1);
    shift(t.x2);
    shift(t.grad_of);
    shift(t.succeeds);
    for (int& d : t.extra_deps) shift(d);
    // A prefix moves the numbers a template's name holds.
    t.number_at = number_after(src.number_at, prefix.size());
    t.step_at = number_after(src.step_at, prefix.size());
    rename_symbols(t, renames);
    add(std::move(t));
  }
}

void Graph::link(std::string_view from, std::string_view to, bool force) {
  const int f = at(from);
  const int to_index = at(to);
  Tensor& t = tensors_[to_index];
  if (t.op != Op::kPlaceholder && !force)
    throw GraphError("cannot link into '" + t.id() + "': not a placeholder");
  t.op = Op::kIdentity;
  t.x1 = f;
  if (static_cast<size_t>(to_index) < results_.size()) results_[to_index].reset();
}

void Graph::evaluate_all() const {
  for (size_t i = 0; i < tensors_.size(); ++i) result(static_cast<int>(i));
}

int carried(const Graph& g, int t) {
  while (t >= 0 && is_comm(g[t].op)) t = g[t].x1;
  return t;
}

std::vector<std::vector<int>> tensors_by_stage(const Graph& g, int stages) {
  std::vector<std::vector<int>> members(static_cast<size_t>(stages));
  for (size_t i = 0; i < g.size(); ++i)
    members.at(static_cast<size_t>(g[static_cast<int>(i)].stage)).push_back(static_cast<int>(i));
  return members;
}

const std::shared_ptr<const OpResult>& Graph::shared_result(int i) const {
  if (results_.size() < tensors_.size()) results_.resize(tensors_.size());
  auto& slot = results_.at(i);
  if (!slot) slot = std::make_shared<const OpResult>(evaluate_op(tensors_[i]));
  return slot;
}

}  // namespace stg::graph
