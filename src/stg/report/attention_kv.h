// The K and V an attention kernel holds on a rank while it runs, by how it
// crosses the context-parallel axis (--cp_algo; docs/context_parallelism.md):
// a share, the algorithm's (models/parts/context_parallel.h: allgather all,
// ring 2/cp, ulysses 1/cp), of those of the whole sequence, b·s·(dk+dv)·kv,
// with b sequences per rank, s the sequence, dk and dv the per-head widths
// of a key and a value (equal but in multi-head latent attention) and kv
// the KV heads per tp rank. One block's attention runs at a time, so this
// is counted once per rank, beside the resident memory of the report.
#pragma once

#include <cstdint>
#include <string>

#include "stg/options.h"

namespace stg::report {

struct AttentionKv {
  // The algorithm's --cp_algo name, its bytes from those of the whole
  // sequence (null: all of them) and what it holds.
  std::string algo = "allgather";
  double (*held)(double whole, int64_t cp) = nullptr;
  std::string what = "K and V gathered over the whole sequence";
  int64_t cp = 1;
  double sequences = 0;                                 // per rank, per micro-batch
  int64_t seq = 0, k_dim = 0, v_dim = 0, kv_heads = 0;  // kv_heads: per tp rank
  int element_bytes = 2;
};

double attention_kv_bytes(const AttentionKv& a);

// "memory attention K/V per rank (--cp_algo ring, cp 4): 0.012 GiB ..."
std::string format_attention_kv(const AttentionKv& a);

}  // namespace stg::report
