// The activation layout between a decoder's parts: [Batch, Seq, Dmodel],
// with the sequence also split over tp under Megatron's tensor + sequence
// parallel layouts (`tpsp`), else only inside attention and the MLP.
#pragma once

namespace stg::models {

struct Layout {
  bool tpsp = true;
  const char* act;  // [B, S, Dmodel] as stored between parts
  explicit Layout(bool tpsp_)
      : tpsp(tpsp_), act(tpsp_ ? "Batch/dp, Seq/(cp*tp), Dmodel" : "Batch/dp, Seq/cp, Dmodel") {}
};

// The activation whole on every tp rank, and split into heads over tp.
inline constexpr const char* kFull = "Batch/dp, Seq/cp, Dmodel";
inline constexpr const char* kHeads = "Batch/dp, Seq/cp, Dmodel/Head, Head/tp";

}  // namespace stg::models
