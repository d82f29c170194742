// The table of cp algorithm rows (context_parallel.h): a new algorithm is
// its kernel's file, which defines its row, and one line here, in --help's
// order.
#include "stg/models/parts/context_parallel.h"

#include "stg/models/flag_binding.h"
#include "stg/models/mixers/mixer_row.h"
#include "stg/util/ignore_case.h"

namespace stg::models {

const CpAlgoRow& all_gather_cp_row();  // all_gather_attention.cc
const CpAlgoRow& ring_cp_row();        // ring_attention.cc
const CpAlgoRow& ulysses_cp_row();     // ulysses_attention.cc

const std::vector<const CpAlgoRow*>& cp_algo_rows() {
  static const std::vector<const CpAlgoRow*> rows = {&all_gather_cp_row(), &ring_cp_row(),
                                                     &ulysses_cp_row()};
  return rows;
}

std::string cp_algo_names(bool (*keep)(const CpAlgoRow&), const char* joiner) {
  std::vector<const char*> names;
  for (const CpAlgoRow* row : cp_algo_rows())
    if (!keep || keep(*row)) names.push_back(row->name);
  std::string out;
  for (size_t i = 0; i < names.size(); ++i)
    out += std::string(i == 0 ? "" : i + 1 == names.size() ? joiner : ", ") + names[i];
  return out;
}

const CpAlgoRow& cp_algo_row(std::string_view name) {
  for (const CpAlgoRow* row : cp_algo_rows())
    if (util::equal_ignoring_case(name, row->name)) return *row;
  throw UsageError("--cp_algo '" + std::string(name) + "' is unknown: use " + cp_algo_names());
}

void add_kernel_passes(passes::PassManager& pm, const ContextParallel& cp) {
  const CpAlgoRow& row = cp_algo_row(cp.algo);
  if (cp.degree > 1 && row.add_passes) row.add_passes(pm);
}

void check_cp_algo(const DecoderSpec& d, const std::map<std::string, int64_t>& values,
                   const Options& o, const mesh::Degrees& degree) {
  const CpAlgoRow& algo = cp_algo_row(o.cp_algo);
  if (degree["sp"] == 1 || !algo.require) return;
  for (const MixerRow* row : mixer_rows())
    for (const std::vector<int64_t>& options : options_of(d, *row))
      algo.require(*row, options, values, degree);
}

}  // namespace stg::models
