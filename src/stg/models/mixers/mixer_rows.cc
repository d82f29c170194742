// The table of mixer rows (mixer_row.h); the drivers that run them:
// mixer_drivers.cc.
#include "stg/models/mixers/mixer_row.h"

namespace stg::models {

const MixerRow& sliding_window_row();  // sliding_window_attention.cc
const MixerRow& mamba2_row();          // mamba2_mixer.cc

const std::vector<const MixerRow*>& mixer_rows() {
  static const std::vector<const MixerRow*> rows = {&mha_row(), &mla_row(), &sliding_window_row(),
                                                    &mamba2_row()};
  return rows;
}

const MixerRow* default_mixer() { return &mha_row(); }

}  // namespace stg::models
