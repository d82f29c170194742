#include "stg/report/attention_kv.h"

#include <cstdio>

namespace stg::report {

double attention_kv_bytes(const AttentionKv& a) {
  const double whole = a.sequences * static_cast<double>(a.seq) *
                       static_cast<double>((a.k_dim + a.v_dim) * a.kv_heads) * a.element_bytes;
  return a.held ? a.held(whole, a.cp) : whole;
}

std::string format_attention_kv(const AttentionKv& a) {
  char line[400];
  std::snprintf(line, sizeof line,
                "memory attention K/V per rank (--cp_algo %s, cp %lld): %.3f GiB while a block's "
                "attention runs (%s)\n",
                a.algo.c_str(), static_cast<long long>(a.cp),
                attention_kv_bytes(a) / (1024.0 * 1024.0 * 1024.0), a.what.c_str());
  return line;
}

}  // namespace stg::report
