// The drivers every table of component rows shares (a mixer row,
// mixers/mixer_row.h; an MLP row, mlps/mlp_row.h): over the blocks of a
// decoder that have a row, each distinct options once, in block order;
// the rows' dimension symbols and checks in the table's order. A row kind
// gives its table and how a block names its row and options of that kind.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "stg/mesh/axes.h"
#include "stg/models/blocks/block_spec.h"
#include "stg/models/flag_binding.h"
#include "stg/options.h"

namespace stg::models {

template <class Row>
struct RowTable {
  const std::vector<const Row*>& rows;
  // Whether block `b` has `row` (or runs it), and then its options for it.
  bool (*options_in)(const BlockSpec& b, const Row& row, std::vector<int64_t>& options);

  // The distinct options of `row` over the blocks that have it.
  std::vector<std::vector<int64_t>> options_of(const DecoderSpec& d, const Row& row) const {
    std::vector<std::vector<int64_t>> found;
    for (const BlockSpec& b : d.blocks) {
      std::vector<int64_t> options;
      if (options_in(b, row, options) &&
          std::find(found.begin(), found.end(), options) == found.end())
        found.push_back(options);
    }
    return found;
  }

  // Each row's dims() per distinct options, each symbol once (the first).
  std::vector<Dim> dims(const DecoderSpec& d, const std::map<std::string, int64_t>& values,
                        const Options& o) const {
    std::vector<Dim> out;
    for (const Row* row : rows) {
      if (!row->dims) continue;
      for (const std::vector<int64_t>& options : options_of(d, *row)) {
        std::vector<Dim> more;
        row->dims(options, values, o, more);
        for (const Dim& m : more)
          if (std::none_of(out.begin(), out.end(),
                           [&](const Dim& x) { return std::string(x.symbol) == m.symbol; }))
            out.push_back(m);
      }
    }
    return out;
  }

  // Each row's check() per distinct options.
  void check(const DecoderSpec& d, const std::map<std::string, int64_t>& values, const Options& o,
             const mesh::Degrees& degree) const {
    for (const Row* row : rows)
      if (row->check)
        for (const std::vector<int64_t>& options : options_of(d, *row))
          row->check(options, values, o, degree);
  }
};

}  // namespace stg::models
