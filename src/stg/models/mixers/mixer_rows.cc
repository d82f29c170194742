// The table of mixer rows (mixer_row.h), and the drivers that run them.
#include <set>

#include "stg/models/mixers/mixer_row.h"

namespace stg::models {

const MixerRow& sliding_window_row();  // sliding_window_attention.cc
const MixerRow& mamba2_row();          // mamba2_mixer.cc

const std::vector<const MixerRow*>& mixer_rows() {
  static const std::vector<const MixerRow*> rows = {&sliding_window_row(), &mamba2_row()};
  return rows;
}

void place_mixers(DecoderSpec& d, const std::map<std::string, int64_t>& values, const Options& o,
                  std::vector<std::string>& notes) {
  for (const MixerRow* row : mixer_rows()) row->place(d, values, o, notes);
}

void check_mixers(const DecoderSpec& d, const std::map<std::string, int64_t>& values,
                  const Options& o, const mesh::Degrees& degree) {
  std::set<const MixerRow*> placed;
  for (const BlockSpec& b : d.blocks)
    if (b.mixer) placed.insert(b.mixer);
  for (const MixerRow* row : mixer_rows())
    if (placed.count(row)) row->check(values, o, degree);
}

std::map<std::string, int64_t> read_mixers_hf(const HfConfig& cfg) {
  std::map<std::string, int64_t> read;
  for (const MixerRow* row : mixer_rows()) row->read_hf(cfg, read);
  return read;
}

}  // namespace stg::models
