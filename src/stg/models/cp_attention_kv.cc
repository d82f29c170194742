#include "stg/models/cp_attention_kv.h"

#include "stg/models/mixers/mixer_row.h"

namespace stg::models {

std::optional<report::AttentionKv> cp_attention_kv(const Options& o, const Workload& w,
                                                   bool ep_carved_out_of_dp) {
  const auto& v = w.values.by_symbol;
  if (o.degree["sp"] <= 1 || w.decoder.blocks.empty() || !v.count("cp")) return std::nullopt;
  report::AttentionKv kv;
  const CpAlgoRow& algo = cp_algo_row(o.cp_algo);
  kv.algo = algo.name;
  kv.held = algo.kv_bytes;
  kv.what = algo.kv_held;
  kv.cp = v.at("cp");
  double split = static_cast<double>(v.at("dp"));
  if (ep_carved_out_of_dp && w.decoder.any(BlockKind::kMoe))
    split *= static_cast<double>(v.at("ep"));
  kv.sequences = static_cast<double>(v.at("MicroBatch")) / split;
  kv.seq = v.at("Seq");
  // Per-head widths of a key and a value, and KV heads per tp rank, as the
  // blocks' attention row says.
  const auto [row, options] = cp_kv_row(w.decoder);
  if (!row) return std::nullopt;
  row->cp_kv(options, v, kv);
  return kv;
}

}  // namespace stg::models
