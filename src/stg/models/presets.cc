#include "stg/models/presets.h"

#include <algorithm>
#include <optional>

#include "stg/models/families/registry.h"
#include "stg/util/ignore_case.h"

namespace stg::models {
namespace {

void fill(std::optional<int64_t>& field, int64_t value) {
  if (!field.has_value()) field = value;
}

}  // namespace

// Dimensions from the papers and the published model cards / config.json
// files (each family's file); seq is the training context length.
const std::vector<Preset>& presets() {
  static const std::vector<Preset> all = [] {
    std::vector<Preset> v;
    for (const Family* f : families()) v.insert(v.end(), f->presets.begin(), f->presets.end());
    return v;
  }();
  return all;
}

const Preset* find_preset(std::string_view name) {
  for (const Preset& p : presets())
    if (util::equal_ignoring_case(p.name, name)) return &p;
  return nullptr;
}

std::string models_table() {
  struct Column {
    const char* title;
    std::string (*cell)(const Preset&);
  };
  static const Column columns[] = {
      {"name", [](const Preset& p) { return p.name; }},
      {"type", [](const Preset& p) { return p.model_type; }},
      {"dmodel", [](const Preset& p) { return std::to_string(p.dmodel); }},
      {"dff", [](const Preset& p) { return std::to_string(p.dff); }},
      {"head", [](const Preset& p) { return std::to_string(p.head); }},
      {"kvhead", [](const Preset& p) { return std::to_string(p.kvhead); }},
      {"num_stacks", [](const Preset& p) { return std::to_string(p.num_stacks); }},
      {"dvocal", [](const Preset& p) { return std::to_string(p.dvocal); }},
      {"experts",
       [](const Preset& p) {
         return p.experts > 0 ? std::to_string(p.experts) + "/" + std::to_string(p.kexperts)
                              : std::string("-");
       }},
      {"seq", [](const Preset& p) { return std::to_string(p.seq); }},
      {"description", [](const Preset& p) { return p.description; }},
  };
  constexpr size_t kColumns = sizeof(columns) / sizeof(columns[0]);
  std::vector<std::vector<std::string>> rows;
  rows.emplace_back();
  for (const Column& c : columns) rows.back().push_back(c.title);
  for (const Preset& p : presets()) {
    rows.emplace_back();
    for (const Column& c : columns) rows.back().push_back(c.cell(p));
  }
  size_t width[kColumns] = {};
  for (const auto& row : rows)
    for (size_t i = 0; i < kColumns; ++i) width[i] = std::max(width[i], row[i].size());
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < kColumns; ++i) {
      line += row[i];
      if (i + 1 < kColumns) line += std::string(width[i] - row[i].size() + 2, ' ');
    }
    out += line + "\n";
  }
  out +=
      "experts: experts per layer / chosen per token. Use --model NAME; flags given "
      "explicitly override the preset.\n";
  return out;
}

void apply_preset(const Preset& p, Options& o) {
  // The preset chooses the model type; one the user chose must match it.
  const Family& family = find_family(p.model_type);
  if (o.model && &family_of(o) != &family)
    throw UsageError("--model " + p.name + " is a '" + p.model_type + "' model but --model_type '" +
                     family_of(o).name + "' was given: drop --model_type or use " +
                     "--model_type " + p.model_type);
  o.model = family.name;
  fill(o.dmodel, p.dmodel);
  fill(o.dff, p.dff);
  fill(o.head, p.head);
  fill(o.num_stacks, p.num_stacks);
  fill(o.dvocal, p.dvocal);
  fill(o.seq, p.seq);
  // The attention row's and the experts row's flags. gpt has no
  // grouped-query attention and gpt/llama have no experts: the generator
  // would note these as "given but unused", so leave them unset.
  if (family.reads_kvhead) o.component_flags.emplace("--kvhead", p.kvhead);
  if (family.reads_experts) {
    o.component_flags.emplace("--experts", p.experts);
    o.component_flags.emplace("--kexperts", p.kexperts);
  }
  auto fill_given = [](std::optional<int64_t>& field, int64_t value) {
    if (value > 0) fill(field, value);
  };
  fill_given(o.dense_blocks, p.dense_blocks);
  for (const auto& [flag, value] : p.row_flags)
    if (value > 0) o.component_flags.emplace(flag, value);
  fill_given(o.mtp_depth, p.mtp_depth);
  if (family.reads_tied_embeddings && !o.model_tied_embeddings)
    o.model_tied_embeddings = p.tied_embeddings;
}

}  // namespace stg::models
