// What the decoder builders (models/decoder_workload.cc) ask of the run's
// framework: its changes to the bound dimensions, its checks of them, and
// the model parts it builds. The framework (frameworks/framework.h)
// implements it, so the model layer names no framework.
#pragma once

#include <cstdint>

#include "stg/models/blocks/block_spec.h"
#include "stg/models/parts/part_choices.h"
#include "stg/options.h"

namespace stg::models {

struct Workload;

class DecoderPolicy {
 public:
  virtual ~DecoderPolicy() = default;

  // Dimensions the framework changes once bound (`tp`: the tensor-parallel
  // degree the vocabulary is split over).
  virtual void adjust_decoder_dims(Workload& w, const Options& o, int64_t tp) const = 0;
  // Checks of the bound numbers; `d`: the decoder's blocks and ends
  // (models/blocks/block_spec.h).
  virtual void check_decoder(const Options& o, const DecoderSpec& d, int64_t micro_batch) const = 0;
  // The model parts it builds (embeddings, tied weights, attention
  // accounting, gradient buckets).
  virtual PartChoices decoder_parts(const Options& o, const DecoderSpec& d,
                                    int zero_stage) const = 0;
};

}  // namespace stg::models
