#include "stg/models/blocks/frame.h"

#include "stg/models/flat_weights.h"
#include "stg/models/mixers/mixer_row.h"
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

std::string mixer_tensor(const BlockSpec& spec, const std::string& name) {
  return std::string(spec.mixer->slot) + "." + name;
}

Graph frame_block(const Layout& l, const BlockSpec& spec, const Graph& mixer, const Graph* ffn,
                  const FfnPorts& ports, const PartChoices& choices) {
  const std::string slot = spec.mixer->slot;
  // The mixer's residual, named after its slot; without an MLP it is the
  // block's output.
  const std::string mixer_res = slot + "_res.";
  const std::string res = ffn ? mixer_res : "ffn_res.";
  Graph g;
  g.append(layer_norm(l), "input_norm.", {}, {});
  g.append(mixer, slot + ".", {}, {});
  g.append(residual(l), res, {}, {});
  g.link("input_norm.y", mixer_tensor(spec, "x"));
  g.link(mixer_tensor(spec, "o"), res + "x1");
  g.link("input_norm.x", res + "x2");
  g.link(res + "dx1", mixer_tensor(spec, "do"));
  if (!ffn) {
    sum_gradients(g, "input_norm.dy", mixer_tensor(spec, "dx"), res + "dx2");
    flatten_block_weights(g, choices.reduce_per_step, choices.expert_data_symbol);
    return g;
  }
  g.append(layer_norm(l), "post_attn_norm.", {}, {});
  g.append(*ffn, ports.prefix, {}, {});
  g.append(residual(l), "ffn_res.", {}, {});
  g.link(mixer_res + "y", "post_attn_norm.x");
  g.link("post_attn_norm.dx", mixer_res + "dy");
  g.link("post_attn_norm.y", ports.x);
  g.link(ports.y, "ffn_res.x1");
  g.link("post_attn_norm.x", "ffn_res.x2");
  g.link("ffn_res.dx1", ports.dy);
  // The norms' input gradients sum the branch and the residual gradient.
  sum_gradients(g, "input_norm.dy", mixer_tensor(spec, "dx"), mixer_res + "dx2");
  sum_gradients(g, "post_attn_norm.dy", ports.dx, "ffn_res.dx2");
  flatten_block_weights(g, choices.reduce_per_step, choices.expert_data_symbol);
  return g;
}

}  // namespace stg::models
