// The drivers that run the mixer rows' table (mixer_row.h): place, check,
// dims, notes, cp and Hugging Face reading over the rows, in the table's
// order; the loops shared with the MLP rows are models/row_table.h's.
#include "stg/models/mixers/mixer_row.h"
#include "stg/models/row_table.h"

namespace stg::models {

void place_mixers(DecoderSpec& d, const std::map<std::string, int64_t>& values, const Options& o,
                  std::vector<std::string>& notes) {
  for (const MixerRow* row : mixer_rows())
    if (row->place) row->place(d, values, o, notes);
}

namespace {

// A block's options for `row`: its own, or a wrapping row's part for it.
bool options_in(const BlockSpec& b, const MixerRow& row, std::vector<int64_t>& options) {
  if (b.mixer == &row) {
    options = b.mixer_options;
    return true;
  }
  if (!b.mixer->wraps || &b.mixer->wraps() != &row) return false;
  options.assign(b.mixer_options.begin() + static_cast<long>(b.mixer->own_options),
                 b.mixer_options.end());
  return true;
}

const RowTable<MixerRow>& table() {
  static const RowTable<MixerRow> rows{mixer_rows(), options_in};
  return rows;
}

}  // namespace

std::vector<std::vector<int64_t>> options_of(const DecoderSpec& d, const MixerRow& row) {
  return table().options_of(d, row);
}

void check_mixers(const DecoderSpec& d, const std::map<std::string, int64_t>& values,
                  const Options& o, const mesh::Degrees& degree) {
  table().check(d, values, o, degree);
}

std::vector<Dim> mixer_dims(const DecoderSpec& d, const std::map<std::string, int64_t>& values,
                            const Options& o) {
  return table().dims(d, values, o);
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
