#include "stg/models/presets.h"

#include <algorithm>
#include <optional>

#include "stg/models/model_kind.h"

namespace stg::models {
namespace {

// Dimensions from the papers and the published model cards / config.json
// files. seq is the training context length.
std::vector<Preset> make_presets() {
  std::vector<Preset> v;
  auto add = [&](Preset p) { v.push_back(std::move(p)); };
  // Brown et al. 2020, "Language Models are Few-Shot Learners", table 2.1:
  // 96 layers, d_model 12288, 96 heads of 128, d_ff = 4 * d_model, context
  // 2048; the GPT-2 BPE vocabulary has 50257 tokens (odd: a --tp that does
  // not divide it is refused by the generator's whole-number check).
  add({"gpt3-175b", "gpt", "GPT-3 175B (Brown et al. 2020)", 12288, 49152, 96, 96, 96, 50257, 0, 0,
       2048});
  // Touvron et al. 2023, "Llama 2"; meta-llama/Llama-2-*-hf config.json.
  add({"llama2-7b", "llama", "Llama 2 7B (Touvron et al. 2023)", 4096, 11008, 32, 32, 32, 32000, 0,
       0, 4096});
  add({"llama2-70b", "llama", "Llama 2 70B (Touvron et al. 2023)", 8192, 28672, 64, 8, 80, 32000, 0,
       0, 4096});
  // Meta Llama 3 model cards and "The Llama 3 Herd of Models" (2024); seq is
  // the 8K pre-training context (the 3.1 releases extend it to 128K).
  add({"llama3-8b", "llama", "Llama 3 8B (Meta 2024)", 4096, 14336, 32, 8, 32, 128256, 0, 0, 8192});
  add({"llama3-70b", "llama", "Llama 3 70B (Meta 2024)", 8192, 28672, 64, 8, 80, 128256, 0, 0,
       8192});
  add({"llama3-405b", "llama", "Llama 3.1 405B (Llama 3 Herd of Models 2024)", 16384, 53248, 128, 8,
       126, 128256, 0, 0, 8192});
  // Jiang et al. 2024, "Mixtral of Experts"; mistralai/Mixtral-* config.json.
  add({"mixtral-8x7b", "moe", "Mixtral 8x7B (Jiang et al. 2024)", 4096, 14336, 32, 8, 32, 32000, 8,
       2, 32768});
  add({"mixtral-8x22b", "moe", "Mixtral 8x22B (Mistral AI 2024)", 6144, 16384, 48, 8, 56, 32768, 8,
       2, 65536});
  return v;
}

void fill(std::optional<int64_t>& field, int64_t value) {
  if (!field.has_value()) field = value;
}

}  // namespace

const std::vector<Preset>& presets() {
  static const std::vector<Preset> all = make_presets();
  return all;
}

const Preset* find_preset(std::string_view name) {
  for (const Preset& p : presets())
    if (p.name == name) return &p;
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
  const ModelKind kind = parse_model_kind(p.model_type);
  if (o.model && *o.model != kind)
    throw UsageError("--model " + p.name + " is a '" + p.model_type + "' model but --model_type '" +
                     model_name(*o.model).name + "' was given: drop --model_type or use " +
                     "--model_type " + p.model_type);
  o.model = kind;
  fill(o.dmodel, p.dmodel);
  fill(o.dff, p.dff);
  fill(o.head, p.head);
  fill(o.num_stacks, p.num_stacks);
  fill(o.dvocal, p.dvocal);
  fill(o.seq, p.seq);
  // gpt has no grouped-query attention and gpt/llama have no experts: the
  // generator would note these as "given but unused", so leave them unset.
  if (p.model_type != "gpt") fill(o.kvhead, p.kvhead);
  if (p.model_type == "moe") {
    fill(o.experts, p.experts);
    fill(o.kexperts, p.kexperts);
  }
}

}  // namespace stg::models
