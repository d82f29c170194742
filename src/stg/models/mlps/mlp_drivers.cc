// The drivers that run the MLP rows' table (mlp_row.h): whether a block
// routes tokens to experts, and dims and checks over the blocks that have
// each row (models/row_table.h).
#include <algorithm>

#include "stg/models/mlps/mlp_row.h"
#include "stg/models/row_table.h"

namespace stg::models {

bool DecoderSpec::any_experts() const {
  return std::any_of(blocks.begin(), blocks.end(),
                     [](const BlockSpec& b) { return b.mlp && b.mlp->experts; });
}

namespace {

bool options_in(const BlockSpec& b, const MlpRow& row, std::vector<int64_t>& options) {
  if (b.mlp != &row) return false;
  options = b.mlp_options;
  return true;
}

const RowTable<MlpRow>& table() {
  static const RowTable<MlpRow> rows{mlp_rows(), options_in};
  return rows;
}

}  // namespace

std::vector<Dim> mlp_dims(const DecoderSpec& d, const std::map<std::string, int64_t>& values,
                          const Options& o) {
  return table().dims(d, values, o);
}

void check_mlps(const DecoderSpec& d, const std::map<std::string, int64_t>& values,
                const Options& o, const mesh::Degrees& degree) {
  table().check(d, values, o, degree);
}

}  // namespace stg::models
