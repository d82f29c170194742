// The table of MLP rows (mlp_row.h); the drivers that run them:
// mlp_drivers.cc.
#include "stg/models/mlps/mlp_row.h"

namespace stg::models {

const std::vector<const MlpRow*>& mlp_rows() {
  static const std::vector<const MlpRow*> rows = {&dense_mlp_row(), &experts_row()};
  return rows;
}

const MlpRow* default_mlp() { return &dense_mlp_row(); }

}  // namespace stg::models
