#include "stg/models/decoder.h"

#include <string>
#include <utility>
#include <vector>

#include "stg/models/blocks/block_kinds.h"
#include "stg/models/blocks/frame.h"
#include "stg/models/blocks/mtp_module.h"
#include "stg/models/model_axes.h"
#include "stg/models/parts/dims.h"
#include "stg/models/parts/embeddings.h"
#include "stg/models/parts/mtp_vocabulary.h"

namespace stg::models {

using graph::Graph;

std::string decoder_block_prefix(int i) { return "transformer." + std::to_string(i) + "."; }

// Appends the blocks in order, each linked to the one before; a block of a
// spec already built is appended again, not built again.
void append_decoder_blocks(Graph& g, const DecoderConfig& c, const KvCache& kv) {
  using Kind = graph::Placement::Kind;
  const BlockContext context{c.tpsp, c.experts_per_rank, c.choices, c.cp, kv};
  std::vector<std::pair<BlockSpec, Graph>> built;
  for (size_t i = 0; i < c.spec.blocks.size(); ++i) {
    const BlockSpec& spec = c.spec.blocks[i];
    auto it = built.begin();
    while (it != built.end() && !(it->first == spec)) ++it;
    if (it == built.end())
      it = built.insert(built.end(), {spec, block_kind(spec.kind).build(spec, context)});
    const int n = static_cast<int>(i);
    const std::string p = decoder_block_prefix(n);
    g.append(it->second, p, {}, {Kind::kBlock, n});
    if (n > 0) {
      g.link(decoder_block_prefix(n - 1) + "ffn_res.y", p + "input_norm.x");
      g.link(p + "input_norm.dx", decoder_block_prefix(n - 1) + "ffn_res.dy");
    }
  }
}

namespace {

std::string mtp_prefix(int depth) { return "mtp." + std::to_string(depth) + "."; }

// The multi-token prediction modules after the output layer: depth k reads
// the hidden state of the one before (the last block's for the first) and
// returns its gradient, summed with what that block's output layer returns.
void append_mtp(Graph& g, const DecoderConfig& c) {
  using Kind = graph::Placement::Kind;
  const BlockContext context{c.tpsp, c.experts_per_rank, c.choices, c.cp, {}};
  const int n = static_cast<int>(c.spec.blocks.size());
  std::string out = decoder_block_prefix(n - 1) + "ffn_res.y";
  std::string dout = decoder_block_prefix(n - 1) + "ffn_res.dy", dout_from_head = "out_emb.dx";
  for (size_t k = 0; k < c.spec.mtp.size(); ++k) {
    const int depth = static_cast<int>(k);
    const std::string p = mtp_prefix(depth);
    const BlockSpec& spec = c.spec.mtp[k];
    g.append(block_kind(spec.kind).build(spec, context), p, {}, {Kind::kBlock, n + depth});
    append_mtp_vocabulary(g, p, mtp_prefix(0), depth, c.tpsp, c.choices, c.ends_apart);
    g.link(out, p + MtpPorts::hidden);
    sum_gradients(g, dout, dout_from_head, p + MtpPorts::dhidden);
    out = p + MtpPorts::out;
    dout = p + MtpPorts::dout;
    dout_from_head = p + MtpPorts::dout_from_head;
  }
}

}  // namespace

Model build_decoder(const DecoderConfig& c) {
  Model m;
  const int n = static_cast<int>(c.spec.blocks.size());
  append_decoder_blocks(m.graph, c);
  append_vocabulary(m.graph, decoder_block_prefix(0), decoder_block_prefix(n - 1), c.tpsp,
                    c.choices);
  append_mtp(m.graph, c);
  set_decoder_axes(m, c);
  return m;
}

void set_decoder_axes(Model& m, const DecoderConfig& c) {
  const int n = static_cast<int>(c.spec.blocks.size());
  m.axes = common_axes(Spelling::kLater);
  m.degree_symbols = all_degree_symbols();
  m.claim = graph::ClaimRule::kEveryAxisInDim;  // the later reference's rule
  m.num_blocks = n;
  if (c.spec.any(BlockKind::kMoe)) {
    if (c.choices.experts_carved_from_dp) {
      // The token side's data parallelism is dp·ep; the experts' is dp.
      m.graph.substitute({{"dp", dims().dp * dims().ep}});
      m.graph.substitute({{"edp", dims().dp}});
    }
    m.axes.push_back(model_axis("ep", Spelling::kLater));
  }
}

DecoderSpec uniform_decoder(int n, const BlockSpec& block) {
  DecoderSpec d;
  d.blocks.assign(n, block);
  return d;
}

}  // namespace stg::models
