// The table of MLP rows (mlp_row.h), and the drivers that run them.
#include <algorithm>

#include "stg/models/mlps/mlp_row.h"

namespace stg::models {

const std::vector<const MlpRow*>& mlp_rows() {
  static const std::vector<const MlpRow*> rows = {&dense_mlp_row(), &experts_row()};
  return rows;
}

const MlpRow* default_mlp() { return &dense_mlp_row(); }

bool DecoderSpec::any_experts() const {
  return std::any_of(blocks.begin(), blocks.end(),
                     [](const BlockSpec& b) { return b.mlp && b.mlp->experts; });
}

namespace {

// The distinct options of `row` over the blocks that have it, in block order.
std::vector<std::vector<int64_t>> options_of(const DecoderSpec& d, const MlpRow& row) {
  std::vector<std::vector<int64_t>> found;
  for (const BlockSpec& b : d.blocks)
    if (b.mlp == &row && std::find(found.begin(), found.end(), b.mlp_options) == found.end())
      found.push_back(b.mlp_options);
  return found;
}

}  // namespace

std::vector<Dim> mlp_dims(const DecoderSpec& d, const std::map<std::string, int64_t>& values,
                          const Options& o) {
  std::vector<Dim> dims;
  for (const MlpRow* row : mlp_rows()) {
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

void check_mlps(const DecoderSpec& d, const std::map<std::string, int64_t>& values,
                const Options& o, const mesh::Degrees& degree) {
  for (const MlpRow* row : mlp_rows())
    if (row->check)
      for (const std::vector<int64_t>& options : options_of(d, *row))
        row->check(options, values, o, degree);
}

}  // namespace stg::models
