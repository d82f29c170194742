// One module from a sharding spreadsheet, over the given degrees.
#include <map>
#include <set>

#include "stg/graph/op.h"
#include "stg/graph/sharding.h"
#include "stg/models/csv_model.h"
#include "stg/models/flag_binding.h"
#include "stg/models/row_flag.h"

namespace stg::models {
namespace {

// A row that reads an input in a sharding no collective can produce (e.g.
// partial-sum over an axis its producer does not split) is the sheet's
// mistake: name its row and column here, before the passes run.
void check_transitions(const Workload& w, const std::string& path) {
  const graph::ShardingRule rule = sharding_rule(w);
  const graph::Graph& g = w.model.graph;
  for (size_t i = 0; i < g.size(); ++i) {
    const graph::Tensor& t = g[static_cast<int>(i)];
    for (int operand : {1, 2}) {
      const int in = operand == 1 ? t.x1 : t.x2;
      if (in < 0) continue;
      const graph::OpResult& from = g.result(in);
      try {
        graph::collectives_between(from.y_shape, from.y_hidden,
                                   *(operand == 1 ? t.x1_shape : t.x2_shape),
                                   *(operand == 1 ? t.x1_hidden : t.x2_hidden), rule);
      } catch (const graph::GraphError& e) {
        // Rows are numbered from 1 with the header; tensors keep sheet order.
        throw UsageError(
            "--module_csv " + path + " row " + std::to_string(i + 2) + ", column x" +
            std::to_string(operand) + "_hidden: " + t.id() + " reads " + g[in].id() +
            " as a partial sum it cannot be made into: " + e.what() +
            " (drop the axis from the hidden view or make the producer a partial sum)");
      }
    }
  }
}

}  // namespace

Workload csv_workload(const Options& o, const DecoderPolicy& /*f*/) {
  Workload w;
  try {
    w.model = build_csv_model(o.module_csv);
  } catch (const graph::GraphError& e) {
    throw UsageError(std::string("--module_csv: ") + e.what());
  }
  require(o.degree.stages() == 1,
          "--pp " + num(o.degree.stages()) +
              " needs a model with blocks: a --module_csv module runs on one stage "
              "(use --pp 1)");
  std::map<std::string, std::pair<const char*, std::optional<int64_t>>> dims = {
      {"Batch", {"--batch", o.batch}},    {"MicroBatch", {"--micro_batch", o.micro_batch}},
      {"Seq", {"--seq", o.seq}},          {"Dmodel", {"--dmodel", o.dmodel}},
      {"Dff", {"--dff", o.dff}},          {"Head", {"--head", o.head}},
      {"Din", {"--din", o.din}},          {"Dout", {"--dout", o.dout}},
      {"Dvocal", {"--dvocal", o.dvocal}}, {"Dvocab", {"--dvocal", o.dvocal}},
  };
  // The symbols a sheet may use, for the message: the flags' above, then the
  // decoders' dimensions that rows declare (KVHead, Experts, KExperts).
  std::string symbols = "Batch, Seq, Dmodel, Dff, Head, Din, Dout, Dvocal";
  std::string last;
  for (const RowFlag* f : component_row_flags()) {
    if (!f->symbol) continue;
    dims[f->symbol] = {f->flag, row_flag(o, f->flag)};
    if (!last.empty()) symbols += ", " + last;
    last = f->symbol;
  }
  if (!last.empty()) symbols += " or " + last;
  const std::set<std::string> degree_symbols(w.model.degree_symbols.begin(),
                                             w.model.degree_symbols.end());
  const std::map<std::string, expr::Expr> zero = zero_bindings(0);
  for (const std::string& symbol : csv_model_symbols(w.model)) {
    if (degree_symbols.count(symbol) || symbol == mesh::kAxes[mesh::stage_row()].symbol ||
        zero.count(symbol))
      continue;
    auto it = dims.find(symbol);
    require(it != dims.end(), "--module_csv " + o.module_csv + " uses the symbol '" + symbol +
                                  "', which no flag sets: use " + symbols);
    require(it->second.second.has_value(),
            "--module_csv " + o.module_csv + " uses " + symbol + ": give " + it->second.first);
    bind_dims(w, {{symbol.c_str(), it->second.first, it->second.second, 1}});
  }
  w.zero_stage = zero_stage(o);
  w.bindings = zero_bindings(w.zero_stage);
  bind_axes(w, o.degree, {Spelling::kSeed, Spelling::kLater});  // a sheet may use either
  check_transitions(w, o.module_csv);
  return w;
}

}  // namespace stg::models
