// The table of mixer rows (mixer_row.h), and the drivers that run them.
#include <algorithm>

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

void place_mixers(DecoderSpec& d, const std::map<std::string, int64_t>& values, const Options& o,
                  std::vector<std::string>& notes) {
  for (const MixerRow* row : mixer_rows())
    if (row->place) row->place(d, values, o, notes);
}

std::vector<std::vector<int64_t>> options_of(const DecoderSpec& d, const MixerRow& row) {
  std::vector<std::vector<int64_t>> found;
  for (const BlockSpec& b : d.blocks) {
    std::vector<int64_t> options;
    if (b.mixer == &row)
      options = b.mixer_options;
    else if (b.mixer->wraps && &b.mixer->wraps() == &row)
      options.assign(b.mixer_options.begin() + static_cast<long>(b.mixer->own_options),
                     b.mixer_options.end());
    else
      continue;
    if (std::find(found.begin(), found.end(), options) == found.end()) found.push_back(options);
  }
  return found;
}

void check_mixers(const DecoderSpec& d, const std::map<std::string, int64_t>& values,
                  const Options& o, const mesh::Degrees& degree) {
  for (const MixerRow* row : mixer_rows())
    if (row->check)
      for (const std::vector<int64_t>& options : options_of(d, *row))
        row->check(options, values, o, degree);
}

std::vector<Dim> mixer_dims(const DecoderSpec& d, const std::map<std::string, int64_t>& values,
                            const Options& o) {
  std::vector<Dim> dims;
  for (const MixerRow* row : mixer_rows()) {
    if (!row->dims) continue;
    for (const std::vector<int64_t>& options : options_of(d, *row)) {
      std::vector<Dim> more;
      row->dims(options, values, o, more);
      for (const Dim& m : more)
        if (std::none_of(dims.begin(), dims.end(),
                         [&](const Dim& x) { return std::string(x.symbol) == m.symbol; }))
          dims.push_back(m);
    }
  }
  return dims;
}

void note_unread_mixers(const DecoderSpec& d, const Options& o, const std::string& family,
                        std::vector<std::string>& notes) {
  for (const MixerRow* row : mixer_rows())
    if (row->note_unread) row->note_unread(d, o, family, notes);
}

std::pair<const MixerRow*, std::vector<int64_t>> cp_kv_row(const DecoderSpec& d) {
  for (const BlockSpec& b : d.blocks) {
    if (b.mixer->cp_kv) return {b.mixer, b.mixer_options};
    if (b.mixer->wraps && b.mixer->wraps().cp_kv)
      return {&b.mixer->wraps(), std::vector<int64_t>(b.mixer_options.begin() +
                                                          static_cast<long>(b.mixer->own_options),
                                                      b.mixer_options.end())};
  }
  return {nullptr, {}};
}

std::map<std::string, int64_t> read_mixers_hf(const HfConfig& cfg) {
  std::map<std::string, int64_t> read;
  for (const MixerRow* row : mixer_rows())
    if (row->read_hf) row->read_hf(cfg, read);
  return read;
}

}  // namespace stg::models
