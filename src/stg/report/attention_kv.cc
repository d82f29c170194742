#include "stg/report/attention_kv.h"

#include <cstdio>

namespace stg::report {

double attention_kv_bytes(const AttentionKv& a) {
  const double whole = a.sequences * static_cast<double>(a.seq) *
                       static_cast<double>((a.k_dim + a.v_dim) * a.kv_heads) * a.element_bytes;
  const double cp = static_cast<double>(a.cp);
  switch (a.algo) {
    case CpAlgo::kAllGather:
      return whole;
    case CpAlgo::kRing:
      return 2.0 * whole / cp;
    case CpAlgo::kUlysses:
      return whole / cp;
  }
  return whole;
}

std::string format_attention_kv(const AttentionKv& a) {
  const char* algo = a.algo == CpAlgo::kRing      ? "ring"
                     : a.algo == CpAlgo::kUlysses ? "ulysses"
                                                  : "allgather";
  const char* what =
      a.algo == CpAlgo::kRing      ? "two chunks of K and V, the one held and the one arriving"
      : a.algo == CpAlgo::kUlysses ? "K and V of the whole sequence for 1/cp of the rank's KV heads"
                                   : "K and V gathered over the whole sequence";
  char line[400];
  std::snprintf(line, sizeof line,
                "memory attention K/V per rank (--cp_algo %s, cp %lld): %.3f GiB while a block's "
                "attention runs (%s)\n",
                algo, static_cast<long long>(a.cp),
                attention_kv_bytes(a) / (1024.0 * 1024.0 * 1024.0), what);
  return line;
}

}  // namespace stg::report
