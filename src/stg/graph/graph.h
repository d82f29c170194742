// A tensor graph: the tensors of a module (or of a whole model) in
// definition order, with a builder API to write modules in C++ and the two
// composition primitives of the reference: replicate a module under a name
// prefix (optionally renaming symbols) and link an output of one module to a
// placeholder input of another.
#pragma once

#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "stg/graph/op.h"
#include "stg/graph/tensor.h"

namespace stg::graph {

// Renames symbols in a tensor's views and op attributes. `memo` (optional)
// remembers results per expression across calls with the same renames.
// (The original is kept so that its identity cannot be reused.)
using RenameMemo = std::unordered_map<const void*, std::pair<expr::Expr, expr::Expr>>;
void rename_symbols(Tensor& t, const std::map<std::string, expr::Expr>& renames,
                    RenameMemo* memo = nullptr);

// Parses "Batch/dp, Seq/sp, Dmodel/tp" into a shape.
Shape parse_shape(std::string_view text);
// Prints a shape as the reference does: dims joined by "," ("1" when empty).
std::string shape_str(const Shape& shape);

class Graph {
 public:
  const std::vector<Tensor>& tensors() const { return tensors_; }
  size_t size() const { return tensors_.size(); }
  const Tensor& operator[](int i) const { return tensors_.at(i); }
  // Mutable access drops the tensor's cached op result (an op's result
  // depends on its own fields only).
  Tensor& mutable_tensor(int i) {
    if (static_cast<size_t>(i) < results_.size()) results_[i].reset();
    return tensors_.at(i);
  }

  // Mutable access for fields that do not enter the op's result (placement,
  // stage, roles, comm attributes; not the name, which the index keys on):
  // the cached result stays.
  Tensor& mutable_tensor_keep_result(int i) { return tensors_.at(i); }

  // Index of the tensor with this id ("name@rev", or "name" for revision 0);
  // throws GraphError when absent.
  int at(std::string_view id) const;
  // -1 when absent.
  int find(std::string_view id) const;

  // Adds a tensor (its id must be new) and returns its index.
  int add(Tensor t);
  // Adds a copy of a tensor with the same op and views, whose op result is
  // therefore known (replicas share it instead of evaluating it again).
  int add(Tensor t, std::shared_ptr<const OpResult> known);
  void reserve(size_t n) {
    tensors_.reserve(n);
    index_.reserve(n);
  }

  // ---- builder: shapes are written as text, as in a sharding spreadsheet.
  int input(const std::string& name, std::string_view shape, const std::string& grad_of = "");
  int weight(const std::string& name, std::string_view shape);
  int einsum(const std::string& name, const std::string& x1, const std::string& x2,
             const std::string& spec, std::string_view x1_shape, std::string_view x2_shape,
             const std::string& grad_of = "");
  int add_op(const std::string& name, const std::string& x1, const std::string& x2,
             std::string_view shape, const std::string& grad_of = "");
  int elementwise(const std::string& name, const std::string& x1, expr::Rational ops_per_element,
                  std::string_view shape, const std::string& grad_of = "");
  int identity(const std::string& name, const std::string& x1, std::string_view shape,
               const std::string& grad_of = "");
  int reshape(const std::string& name, const std::string& x1, std::string_view from_shape,
              std::string_view to_shape, const std::string& grad_of = "");

  // Any op with explicit views (empty x?_shape: no such input).
  int op(const std::string& name, Op op, const std::string& x1, const std::string& x2,
         std::string_view x1_shape, std::string_view x2_shape = "",
         std::string_view x1_hidden = "1", std::string_view x2_hidden = "1");
  // Output is x1 with dim `axis` set to `size`; x2 is an optional extra input.
  int slice(const std::string& name, const std::string& x1, int axis, std::string_view size,
            std::string_view x1_shape, const std::string& x2 = "", std::string_view x2_shape = "");
  // Opaque kernel of `num_ops` operations whose output is (out_shape, out_hidden).
  int custom(const std::string& name, const std::string& x1, std::string_view num_ops,
             std::string_view x1_shape, std::string_view out_shape,
             std::string_view out_hidden = "1");
  // Output is x1 with dim `axis` multiplied by `factor` (broadcast/reduce).
  int broadcast(const std::string& name, const std::string& x1, int axis, std::string_view factor,
                std::string_view x1_shape);
  // Binary element-wise op of `ops_per_element` operations per element.
  int elementwise2(const std::string& name, const std::string& x1, const std::string& x2,
                   expr::Rational ops_per_element, std::string_view shape);
  // Marks the named tensors as the backward pass.
  void mark_backward(std::initializer_list<const char*> names);
  // Marks the last added tensor as the gradient of `grad_of`.
  Graph& grad_of(const std::string& grad_of);
  // Sets the FLOP count of the last added custom op (Tensor::flops).
  Graph& flops(std::string_view flops);
  // Marks the tensors from index `first` on as the backward pass.
  void mark_backward_from(int first);

  // ---- composition
  // Appends a copy of `module` whose tensor names are `prefix + name`, with
  // symbols renamed as given, placed at `placement`.
  void append(const Graph& module, const std::string& prefix,
              const std::map<std::string, expr::Expr>& renames, Placement placement);
  // Turns placeholder `to` into an identity of `from` (the reference's
  // ConnectGraph); `force` also allows a non-placeholder `to`.
  void link(std::string_view from, std::string_view to, bool force = false);

  // ---- editing (passes)
  // Points input `operand` (1 or 2) of tensor `i` at `producer`. The view
  // the op reads it in is unchanged, so its cached result stays.
  void set_input(int i, int operand, int producer);
  // Replaces extra dependency `k` of tensor `i` (cached result kept).
  void set_extra_dep(int i, size_t k, int producer) { tensors_.at(i).extra_deps.at(k) = producer; }
  // Reorders the graph: tensor i of the result is the old tensor order[i]
  // (a permutation of all indices). References follow; cached results too.
  void permute(const std::vector<int>& order);

  // Renames symbols in every shape and op attribute of the graph.
  void substitute(const std::map<std::string, expr::Expr>& renames);

  // Output shape/hidden/ops of every tensor, cached until the graph changes.
  const OpResult& result(int i) const { return *shared_result(i); }
  const std::shared_ptr<const OpResult>& shared_result(int i) const;
  // Fills the cache so that concurrent result() calls only read it.
  void evaluate_all() const;

 private:
  int ref(const std::string& id) const { return id.empty() ? -1 : at(id); }
  void set_grad(int tensor, const std::string& grad_of);

  std::vector<Tensor> tensors_;
  std::unordered_map<std::string, int> index_;
  mutable std::vector<std::shared_ptr<const OpResult>> results_;
};

// The tensor's phase, with the backward pass's weight gradients told apart:
// a backward tensor that is the gradient of a weight is kBackwardWeight.
Phase phase_of(const Graph& g, int t);

// The tensor whose data `t` is: comm ops (collectives, send, recv) carry
// their input's data, so they are looked through; -1 stays -1.
int carried(const Graph& g, int t);

// Per pipeline stage (0 .. stages-1): its tensors in graph order
// (Tensor::stage).
std::vector<std::vector<int>> tensors_by_stage(const Graph& g, int stages);

}  // namespace stg::graph
