#include "stg/models/cp_attention_kv.h"

namespace stg::models {
namespace {

// Per-head widths of a key and a value, and KV heads per tp rank:
// Dmodel/Head or a family's own HeadDim, multi-head latent attention's key
// (nope + rope) and value widths; grouped-query attention's KV heads.
void set_head_widths(const DecoderSpec& d, const expr::Values& values, report::AttentionKv& kv) {
  const auto& v = values.by_symbol;
  if (d.any(AttentionKind::kMla)) {
    kv.k_dim = v.at("QkNopeDim") + v.at("QkRopeDim");
    kv.v_dim = v.at("VHeadDim");
  } else {
    kv.k_dim = kv.v_dim = v.count("HeadDim") ? v.at("HeadDim") : v.at("Dmodel") / v.at("Head");
  }
  const bool gqa = d.any(AttentionKind::kGqa);
  kv.kv_heads = (gqa ? v.at("KVHead") : v.at("Head")) / v.at("tp");
}

}  // namespace

std::optional<report::AttentionKv> cp_attention_kv(const Options& o, const Workload& w,
                                                   bool ep_carved_out_of_dp) {
  const auto& v = w.values.by_symbol;
  if (o.degree["sp"] <= 1 || w.decoder.blocks.empty() || !v.count("cp")) return std::nullopt;
  report::AttentionKv kv;
  kv.algo = o.cp_algo;
  kv.cp = v.at("cp");
  double split = static_cast<double>(v.at("dp"));
  if (ep_carved_out_of_dp && w.decoder.any(BlockKind::kMoe))
    split *= static_cast<double>(v.at("ep"));
  kv.sequences = static_cast<double>(v.at("MicroBatch")) / split;
  kv.seq = v.at("Seq");
  set_head_widths(w.decoder, w.values, kv);
  return kv;
}

}  // namespace stg::models
