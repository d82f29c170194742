// The model's dimensions as typed expressions (expr::Expr) over the symbols
// the flags bind (docs/facts.md §9) and the parallel degrees, with the
// sharded forms the parts use, and the builder calls that take shapes as
// such expressions: a part writes {d.batch_dp, d.seq_cp, d.hidden}, not
// "Batch/dp, Seq/cp, Dmodel".
#pragma once

#include <string>

#include "stg/graph/graph.h"

namespace stg::models {

struct Dims {
  using E = expr::Expr;
  static E sym(const char* name) { return E::symbol(name); }

  // Model dimensions and parallel degrees.
  E batch = sym("Batch"), seq = sym("Seq"), hidden = sym("Dmodel"), ffn = sym("Dff");
  E heads = sym("Head"), kv_heads = sym("KVHead"), vocab = sym("Dvocal");
  E experts = sym("Experts"), k_experts = sym("KExperts");
  // The 2025-26 families' own widths (docs/models_2025.md): a head
  // dimension of its own, the experts' FFN, the shared experts' count.
  E own_head_dim = sym("HeadDim"), ffn_expert = sym("DffExpert");
  E shared_experts = sym("SharedExperts");
  // Multi-head latent attention: the query and key-value compression
  // ranks, the per-head dims of the queries and keys without and with
  // rotary embedding, and of the values.
  E q_lora_rank = sym("QLoraRank"), kv_lora_rank = sym("KvLoraRank");
  E qk_nope_dim = sym("QkNopeDim"), qk_rope_dim = sym("QkRopeDim"), v_head_dim = sym("VHeadDim");
  E dp = sym("dp"), tp = sym("tp"), cp = sym("cp"), ep = sym("ep");
  // Serving (models/parts/kv_cache.h): the tokens a decode step attends
  // over (its context: the tokens before it and its own) and the tokens a
  // sequence's KV cache holds.
  E context = sym("Ctx"), cache_tokens = sym("CacheTokens");
  // Sharded forms: per data-parallel rank, per context (and tensor)
  // parallel rank, per tensor-parallel rank.
  E batch_dp = batch / dp;
  E seq_cp = seq / cp;
  E seq_cp_tp = seq / (cp * tp);
  E ffn_tp = ffn / tp;
  E head_dim = hidden / heads;
  E heads_tp = heads / tp;
  E kv_heads_tp = kv_heads / tp;
  E vocab_tp = vocab / tp;
};

// A whole number as an expression (3*Head/tp is c(3) * d.heads_tp).
inline expr::Expr c(int64_t n) { return expr::Expr::constant(n); }

// The one set of dimensions every part uses.
const Dims& dims();

// Graph builder calls with typed shapes (graph/graph.h has their text
// forms, which the module sheets use).
namespace typed {
int input(graph::Graph& g, const std::string& name, const graph::Shape& shape,
          const std::string& grad_of = "");
int weight(graph::Graph& g, const std::string& name, const graph::Shape& shape);
int einsum(graph::Graph& g, const std::string& name, const std::string& x1, const std::string& x2,
           const std::string& spec, const graph::Shape& x1_shape, const graph::Shape& x2_shape,
           const std::string& grad_of = "");
int elementwise(graph::Graph& g, const std::string& name, const std::string& x1,
                expr::Rational ops_per_element, const graph::Shape& shape,
                const std::string& grad_of = "");
int identity(graph::Graph& g, const std::string& name, const std::string& x1,
             const graph::Shape& shape, const std::string& grad_of = "");
int add_op(graph::Graph& g, const std::string& name, const std::string& x1, const std::string& x2,
           const graph::Shape& shape, const std::string& grad_of = "");
// Any op with explicit views and hidden shapes (x2_shape null: no x2).
int op(graph::Graph& g, const std::string& name, graph::Op op, const std::string& x1,
       const std::string& x2, const graph::Shape& x1_shape, const graph::Shape* x2_shape,
       const graph::Shape& x1_hidden, const graph::Shape& x2_hidden);
int slice(graph::Graph& g, const std::string& name, const std::string& x1, int axis,
          const expr::Expr& size, const graph::Shape& x1_shape);
int slice(graph::Graph& g, const std::string& name, const std::string& x1, int axis,
          const expr::Expr& size, const graph::Shape& x1_shape, const std::string& x2,
          const graph::Shape& x2_shape);
int custom(graph::Graph& g, const std::string& name, const std::string& x1,
           const expr::Expr& num_ops, const graph::Shape& x1_shape, const graph::Shape& out_shape,
           const graph::Shape& out_hidden);
int custom(graph::Graph& g, const std::string& name, const std::string& x1,
           const expr::Expr& num_ops, const graph::Shape& x1_shape, const graph::Shape& out_shape);
int reshape(graph::Graph& g, const std::string& name, const std::string& x1,
            const graph::Shape& from_shape, const graph::Shape& to_shape);
int broadcast(graph::Graph& g, const std::string& name, const std::string& x1, int axis,
              const expr::Expr& factor, const graph::Shape& x1_shape);
int elementwise2(graph::Graph& g, const std::string& name, const std::string& x1,
                 const std::string& x2, expr::Rational ops_per_element, const graph::Shape& shape);
// Sets the FLOP count of the last added custom op (Tensor::flops).
void flops(graph::Graph& g, const expr::Expr& flops);
}  // namespace typed

}  // namespace stg::models
