// Every component row's flags, from the mixer and MLP tables (row_flag.h).
#include "stg/models/mixers/mixer_row.h"
#include "stg/models/mlps/mlp_row.h"
#include "stg/models/row_flag.h"

namespace stg::models {

const std::vector<const RowFlag*>& component_row_flags() {
  static const std::vector<const RowFlag*> all = [] {
    std::vector<const RowFlag*> flags;
    for (const MixerRow* row : mixer_rows())
      for (const RowFlag& f : row->flags) flags.push_back(&f);
    for (const MlpRow* row : mlp_rows())
      for (const RowFlag& f : row->flags) flags.push_back(&f);
    return flags;
  }();
  return all;
}

}  // namespace stg::models
