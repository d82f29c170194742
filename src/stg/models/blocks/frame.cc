#include "stg/models/blocks/frame.h"

#include "stg/models/flat_weights.h"
#include "stg/models/parts/norms.h"

namespace stg::models {

using graph::Graph;

void sum_gradients(Graph& g, const std::string& target, const std::string& a,
                   const std::string& b) {
  graph::Tensor& t = g.mutable_tensor(g.at(target));
  t.op = graph::Op::kAdd;
  t.x1 = g.at(a);
  t.x2 = g.at(b);
  t.x2_shape = t.x1_shape;
  t.x2_hidden = t.x1_hidden;
}

namespace {

// The mixer's slot keeps the name of the attention it held first.
constexpr const char* kMixerSlot = "mha.";

}  // namespace

std::string mixer_tensor(const std::string& name) { return kMixerSlot + name; }

Graph frame_block(const Layout& l, const Graph& mixer, const Graph* ffn, const FfnPorts& ports,
                  const PartChoices& choices) {
  // Without an MLP the mixer's residual is the block's output.
  const std::string res = ffn ? "mha_res." : "ffn_res.";
  Graph g;
  g.append(layer_norm(l), "input_norm.", {}, {});
  g.append(mixer, kMixerSlot, {}, {});
  g.append(residual(l), res, {}, {});
  g.link("input_norm.y", mixer_tensor("x"));
  g.link(mixer_tensor("o"), res + "x1");
  g.link("input_norm.x", res + "x2");
  g.link(res + "dx1", mixer_tensor("do"));
  if (!ffn) {
    sum_gradients(g, "input_norm.dy", mixer_tensor("dx"), res + "dx2");
    flatten_block_weights(g, choices.reduce_per_step, choices.expert_data_symbol);
    return g;
  }
  g.append(layer_norm(l), "post_attn_norm.", {}, {});
  g.append(*ffn, ports.prefix, {}, {});
  g.append(residual(l), "ffn_res.", {}, {});
  g.link("mha_res.y", "post_attn_norm.x");
  g.link("post_attn_norm.dx", "mha_res.dy");
  g.link("post_attn_norm.y", ports.x);
  g.link(ports.y, "ffn_res.x1");
  g.link("post_attn_norm.x", "ffn_res.x2");
  g.link("ffn_res.dx1", ports.dy);
  // The norms' input gradients sum the branch and the residual gradient.
  sum_gradients(g, "input_norm.dy", mixer_tensor("dx"), "mha_res.dx2");
  sum_gradients(g, "post_attn_norm.dy", ports.dx, "ffn_res.dx2");
  flatten_block_weights(g, choices.reduce_per_step, choices.expert_data_symbol);
  return g;
}

}  // namespace stg::models
