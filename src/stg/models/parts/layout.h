// The activation layout between a decoder's parts: [Batch, Seq, Dmodel],
// with the sequence also split over tp under Megatron's tensor + sequence
// parallel layouts (`tpsp`), else only inside attention and the MLP.
#pragma once

#include "stg/models/parts/dims.h"

namespace stg::models {

struct Layout {
  bool tpsp = true;
  graph::Shape shape;  // [B, S, Dmodel] as stored between parts
  // [B, S, Dmodel] whole on every tp rank (inside attention and the MLP).
  graph::Shape full = {dims().batch_dp, dims().seq_cp, dims().hidden};
  explicit Layout(bool tpsp_)
      : tpsp(tpsp_),
        shape{dims().batch_dp, tpsp_ ? dims().seq_cp_tp : dims().seq_cp, dims().hidden} {}
};

}  // namespace stg::models
