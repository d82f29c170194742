// Tests of the model presets (`stg models`, `--model NAME`) and of
// `--hf_config PATH` (src/stg/models/presets.*, hf_config.*): the published
// dimensions, the rule that explicit flags win, the refusals, and that every
// preset and example config generates a small workload.
#include "stg/models/presets.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "stg/generate.h"
#include "stg/models/families/registry.h"
#include "stg/models/hf_config.h"
#include "stg/models/row_flag.h"
#include "stg/options.h"
#include "support/temp_dir.h"

namespace stg::models {
namespace {

namespace fs = std::filesystem;

const fs::path kHfData = fs::path(STG_TEST_DATA) / "hf";

// A fresh directory under the system temp dir, removed with its content.
class ScratchDir : public stg_test::TempDir {
 public:
  ScratchDir() : stg_test::TempDir({.prefix = "stg_presets"}) {}
};

// The message of the UsageError that `f` throws ("" if it throws none).
std::string usage_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

// ---------------------------------------------------------------------------
// Presets.

// The published figures, written out independently of presets.cc.
struct Published {
  const char* name;
  const char* type;
  int64_t dmodel, head, kvhead, dff, layers, vocab, experts, kexperts, seq;
};

const Published kPublished[] = {
    {"gpt3-175b", "gpt", 12288, 96, 96, 49152, 96, 50257, 0, 0, 2048},
    {"llama2-7b", "llama", 4096, 32, 32, 11008, 32, 32000, 0, 0, 4096},
    {"llama2-70b", "llama", 8192, 64, 8, 28672, 80, 32000, 0, 0, 4096},
    {"llama3-8b", "llama", 4096, 32, 8, 14336, 32, 128256, 0, 0, 8192},
    {"llama3-70b", "llama", 8192, 64, 8, 28672, 80, 128256, 0, 0, 8192},
    {"llama3-405b", "llama", 16384, 128, 8, 53248, 126, 128256, 0, 0, 8192},
    {"mixtral-8x7b", "moe", 4096, 32, 8, 14336, 32, 32000, 8, 2, 32768},
    {"mixtral-8x22b", "moe", 6144, 48, 8, 16384, 56, 32768, 8, 2, 65536},
    // Hugging Face config.json of each model card (docs/models_2025.md has
    // their own dimensions: head_dim, expert width, MLA ranks).
    {"qwen2.5-72b", "qwen2", 8192, 64, 8, 29568, 80, 152064, 0, 0, 4096},
    {"qwen3-32b", "qwen3", 5120, 64, 8, 25600, 64, 151936, 0, 0, 4096},
    {"qwen3-235b-a22b", "qwen3-moe", 4096, 64, 4, 12288, 94, 151936, 128, 8, 4096},
    {"deepseek-v3", "deepseek", 7168, 128, 128, 18432, 61, 129280, 256, 8, 4096},
};

TEST(Presets, EveryPresetFoundByNameWithPublishedDims) {
  EXPECT_EQ(presets().size(), std::size(kPublished));
  for (const Published& e : kPublished) {
    SCOPED_TRACE(e.name);
    const Preset* p = find_preset(e.name);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->name, e.name);
    EXPECT_EQ(p->model_type, e.type);
    EXPECT_FALSE(p->description.empty());
    EXPECT_EQ(p->dmodel, e.dmodel);
    EXPECT_EQ(p->head, e.head);
    EXPECT_EQ(p->kvhead, e.kvhead);
    EXPECT_EQ(p->dff, e.dff);
    EXPECT_EQ(p->num_stacks, e.layers);
    EXPECT_EQ(p->dvocal, e.vocab);
    EXPECT_EQ(p->experts, e.experts);
    EXPECT_EQ(p->kexperts, e.kexperts);
    EXPECT_EQ(p->seq, e.seq);
    // Head dimension 128 for all of them.
    EXPECT_EQ(p->dmodel % p->head, 0);
    EXPECT_EQ(p->head % p->kvhead, 0);
  }
}

TEST(Presets, NamesAreUniqueAndLookupIgnoresOnlyCase) {
  std::set<std::string> names;
  for (const Preset& p : presets()) EXPECT_TRUE(names.insert(p.name).second) << p.name;
  EXPECT_EQ(find_preset("llama3"), nullptr);
  ASSERT_NE(find_preset("LLAMA3-8B"), nullptr);
  EXPECT_EQ(find_preset("LLAMA3-8B")->name, "llama3-8b");
  EXPECT_EQ(find_preset(""), nullptr);
  EXPECT_EQ(find_preset("llama3-8b "), nullptr);
}

TEST(Presets, ApplyFillsEveryUnsetDim) {
  Options o;
  apply_preset(*find_preset("llama3-8b"), o);
  EXPECT_EQ(o.model, stg::models::find_family("llama").name);
  EXPECT_EQ(o.dmodel, 4096);
  EXPECT_EQ(o.dff, 14336);
  EXPECT_EQ(o.head, 32);
  EXPECT_EQ(stg::models::row_flag(o, "--kvhead"), 8);
  EXPECT_EQ(o.num_stacks, 32);
  EXPECT_EQ(o.dvocal, 128256);
  EXPECT_EQ(o.seq, 8192);
  // Not model dimensions, and not used by llama: left alone.
  EXPECT_FALSE(o.batch.has_value());
  EXPECT_FALSE(o.micro_batch.has_value());
  EXPECT_FALSE(stg::models::row_flag(o, "--experts").has_value());
  EXPECT_FALSE(stg::models::row_flag(o, "--kexperts").has_value());
  EXPECT_FALSE(o.din.has_value());
  EXPECT_FALSE(o.dout.has_value());
}

TEST(Presets, ExplicitFlagsWin) {
  Options o;
  o.num_stacks = 2;
  o.seq = 256;
  o.dff = 1000;
  o.component_flags["--kvhead"] = 4;
  o.batch = 2;
  apply_preset(*find_preset("llama2-70b"), o);
  EXPECT_EQ(o.model, stg::models::find_family("llama").name);
  EXPECT_EQ(o.num_stacks, 2);
  EXPECT_EQ(o.seq, 256);
  EXPECT_EQ(o.dff, 1000);
  EXPECT_EQ(stg::models::row_flag(o, "--kvhead"), 4);
  EXPECT_EQ(o.batch, 2);
  EXPECT_EQ(o.dmodel, 8192);
  EXPECT_EQ(o.head, 64);
  EXPECT_EQ(o.dvocal, 32000);
}

TEST(Presets, MoePresetSetsExpertsOthersDoNot) {
  Options moe;
  apply_preset(*find_preset("mixtral-8x22b"), moe);
  EXPECT_EQ(moe.model, stg::models::find_family("moe").name);
  EXPECT_EQ(stg::models::row_flag(moe, "--experts"), 8);
  EXPECT_EQ(stg::models::row_flag(moe, "--kexperts"), 2);
  EXPECT_EQ(stg::models::row_flag(moe, "--kvhead"), 8);

  Options explicit_experts;
  explicit_experts.component_flags["--experts"] = 4;
  apply_preset(*find_preset("mixtral-8x7b"), explicit_experts);
  EXPECT_EQ(stg::models::row_flag(explicit_experts, "--experts"), 4);
  EXPECT_EQ(stg::models::row_flag(explicit_experts, "--kexperts"), 2);

  // gpt has no grouped-query attention: kvhead stays unset (no note).
  Options gpt;
  apply_preset(*find_preset("gpt3-175b"), gpt);
  EXPECT_EQ(gpt.model, stg::models::find_family("gpt").name);
  EXPECT_FALSE(stg::models::row_flag(gpt, "--kvhead").has_value());
  EXPECT_FALSE(stg::models::row_flag(gpt, "--experts").has_value());
  EXPECT_FALSE(stg::models::row_flag(gpt, "--kexperts").has_value());
  EXPECT_EQ(gpt.dvocal, 50257);
}

TEST(Presets, MatchingModelTypeAccepted) {
  Options llama;
  llama.model = stg::models::find_family("llama").name;
  apply_preset(*find_preset("llama3-70b"), llama);
  EXPECT_EQ(llama.model, stg::models::find_family("llama").name);

  Options dense;  // dense is an alias of gpt
  dense.model = stg::models::find_family("dense").name;
  apply_preset(*find_preset("gpt3-175b"), dense);
  EXPECT_EQ(dense.model, stg::models::find_family("dense").name);
  EXPECT_EQ(dense.dmodel, 12288);
}

TEST(Presets, ConflictingModelTypeRefused) {
  Options o;
  o.model = stg::models::find_family("gpt").name;
  const std::string message = usage_error([&] { apply_preset(*find_preset("llama3-8b"), o); });
  EXPECT_NE(message.find("--model llama3-8b"), std::string::npos) << message;
  EXPECT_NE(message.find("--model_type 'gpt'"), std::string::npos) << message;
  // Nothing applied.
  EXPECT_EQ(o.model, stg::models::find_family("gpt").name);
  EXPECT_FALSE(o.dmodel.has_value());

  Options moe;
  moe.model = stg::models::find_family("moe").name;
  EXPECT_NE(usage_error([&] { apply_preset(*find_preset("llama2-7b"), moe); }), "");
  Options llama;
  llama.model = stg::models::find_family("llama").name;
  EXPECT_NE(usage_error([&] { apply_preset(*find_preset("mixtral-8x7b"), llama); }), "");
}

TEST(Presets, ModelsTableListsEveryPreset) {
  const std::string table = models_table();
  ASSERT_FALSE(table.empty());
  EXPECT_EQ(table.back(), '\n');
  std::vector<std::string> lines;
  std::istringstream in(table);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  for (const Preset& p : presets()) {
    SCOPED_TRACE(p.name);
    int matches = 0;
    for (const std::string& line : lines) {
      if (line.rfind(p.name + " ", 0) != 0) continue;
      ++matches;
      EXPECT_NE(line.find(" " + p.model_type + " "), std::string::npos) << line;
      EXPECT_NE(line.find(" " + std::to_string(p.dmodel) + " "), std::string::npos) << line;
      EXPECT_NE(line.find(" " + std::to_string(p.dvocal) + " "), std::string::npos) << line;
    }
    EXPECT_EQ(matches, 1) << table;
  }
}

// ---------------------------------------------------------------------------
// Hugging Face configs.

std::string hf(const char* name) { return (kHfData / name).string(); }

TEST(HfConfig, Llama3) {
  Options o;
  apply_hf_config(hf("llama3_8b.json"), o);
  EXPECT_EQ(o.model, stg::models::find_family("llama").name);
  EXPECT_EQ(o.dmodel, 4096);
  EXPECT_EQ(o.dff, 14336);
  EXPECT_EQ(o.head, 32);
  EXPECT_EQ(stg::models::row_flag(o, "--kvhead"), 8);
  EXPECT_EQ(o.num_stacks, 32);
  EXPECT_EQ(o.dvocal, 128256);
  EXPECT_EQ(o.seq, 8192);
  EXPECT_FALSE(stg::models::row_flag(o, "--experts").has_value());
  EXPECT_FALSE(stg::models::row_flag(o, "--kexperts").has_value());
  EXPECT_FALSE(o.batch.has_value());
}

TEST(HfConfig, MatchesTheLlama3Preset) {
  Options from_file, from_preset;
  apply_hf_config(hf("llama3_8b.json"), from_file);
  apply_preset(*find_preset("llama3-8b"), from_preset);
  EXPECT_EQ(from_file.model, from_preset.model);
  EXPECT_EQ(from_file.dmodel, from_preset.dmodel);
  EXPECT_EQ(from_file.dff, from_preset.dff);
  EXPECT_EQ(from_file.head, from_preset.head);
  EXPECT_EQ(stg::models::row_flag(from_file, "--kvhead"),
            stg::models::row_flag(from_preset, "--kvhead"));
  EXPECT_EQ(from_file.num_stacks, from_preset.num_stacks);
  EXPECT_EQ(from_file.dvocal, from_preset.dvocal);
  EXPECT_EQ(from_file.seq, from_preset.seq);
}

TEST(HfConfig, Mixtral) {
  Options o;
  apply_hf_config(hf("mixtral_8x7b.json"), o);
  EXPECT_EQ(o.model, stg::models::find_family("moe").name);
  EXPECT_EQ(o.dmodel, 4096);
  EXPECT_EQ(o.dff, 14336);
  EXPECT_EQ(o.head, 32);
  EXPECT_EQ(stg::models::row_flag(o, "--kvhead"), 8);
  EXPECT_EQ(o.num_stacks, 32);
  EXPECT_EQ(o.dvocal, 32000);
  EXPECT_EQ(stg::models::row_flag(o, "--experts"), 8);
  EXPECT_EQ(stg::models::row_flag(o, "--kexperts"), 2);
  EXPECT_EQ(o.seq, 32768);
}

TEST(HfConfig, Gpt2) {
  Options o;
  apply_hf_config(hf("gpt2.json"), o);
  EXPECT_EQ(o.model, stg::models::find_family("gpt").name);
  EXPECT_EQ(o.dmodel, 768);
  EXPECT_EQ(o.dff, 3072);  // n_inner absent: 4 * n_embd
  EXPECT_EQ(o.head, 12);
  EXPECT_EQ(o.num_stacks, 12);
  EXPECT_EQ(o.dvocal, 50257);
  EXPECT_EQ(o.seq, 1024);
  EXPECT_FALSE(stg::models::row_flag(o, "--kvhead").has_value());
  EXPECT_FALSE(stg::models::row_flag(o, "--experts").has_value());
}

TEST(HfConfig, GptVariants) {
  ScratchDir dir;
  Options null_inner;
  apply_hf_config(dir.write("a.json", R"({"architectures": ["GPTJForCausalLM"], "n_embd": 4096,
      "n_inner": null, "n_head": 16, "n_layer": 28, "n_positions": 2048, "vocab_size": 50400})"),
                  null_inner);
  EXPECT_EQ(null_inner.model, stg::models::find_family("gpt").name);
  EXPECT_EQ(null_inner.dff, 16384);
  EXPECT_EQ(null_inner.seq, 2048);

  Options inner;
  apply_hf_config(dir.write("b.json", R"({"architectures": ["GPT2LMHeadModel"], "n_embd": 64,
      "n_inner": 100, "n_head": 4, "n_layer": 2, "vocab_size": 1000})"),
                  inner);
  EXPECT_EQ(inner.dff, 100);
  EXPECT_FALSE(inner.seq.has_value());  // no n_positions: the generator's default

  Options neox;
  apply_hf_config(
      dir.write("c.json", R"({"architectures": ["GPTNeoXForCausalLM"], "hidden_size": 2560,
      "intermediate_size": 10240, "num_attention_heads": 32, "num_hidden_layers": 32,
      "max_position_embeddings": 2048, "vocab_size": 50432})"),
      neox);
  EXPECT_EQ(neox.model, stg::models::find_family("gpt").name);
  EXPECT_EQ(neox.dmodel, 2560);
  EXPECT_EQ(neox.dff, 10240);
  EXPECT_EQ(neox.head, 32);
  EXPECT_EQ(neox.num_stacks, 32);
  EXPECT_EQ(neox.dvocal, 50432);
}

TEST(HfConfig, MistralWithoutKvHeadsUsesAttentionHeads) {
  ScratchDir dir;
  Options o;
  apply_hf_config(dir.write("m.json", R"({"architectures": ["MistralForCausalLM"],
      "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
      "num_hidden_layers": 32, "vocab_size": 32000, "max_position_embeddings": 32768})"),
                  o);
  EXPECT_EQ(o.model, stg::models::find_family("llama").name);
  EXPECT_EQ(stg::models::row_flag(o, "--kvhead"), 32);
}

TEST(HfConfig, ExplicitFlagsWin) {
  Options o;
  o.model = stg::models::find_family("moe").name;  // matches
  o.num_stacks = 2;
  o.seq = 256;
  o.component_flags["--kvhead"] = 4;
  o.component_flags["--experts"] = 4;
  apply_hf_config(hf("mixtral_8x7b.json"), o);
  EXPECT_EQ(o.model, stg::models::find_family("moe").name);
  EXPECT_EQ(o.num_stacks, 2);
  EXPECT_EQ(o.seq, 256);
  EXPECT_EQ(stg::models::row_flag(o, "--kvhead"), 4);
  EXPECT_EQ(stg::models::row_flag(o, "--experts"), 4);
  EXPECT_EQ(stg::models::row_flag(o, "--kexperts"), 2);
  EXPECT_EQ(o.dmodel, 4096);
}

void expect_refused(const std::string& path, const std::vector<std::string>& words,
                    Options o = {}) {
  const Options before = o;
  const std::string message = usage_error([&] { apply_hf_config(path, o); });
  ASSERT_NE(message, "") << path << " was accepted";
  EXPECT_EQ(message.rfind("--hf_config ", 0), 0u) << message;
  for (const std::string& w : words) EXPECT_NE(message.find(w), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  // A refused config changes nothing.
  EXPECT_EQ(o.model, before.model);
  EXPECT_EQ(o.dmodel, before.dmodel);
  EXPECT_EQ(o.num_stacks, before.num_stacks);
}

TEST(HfConfig, UnsupportedArchitectureRefused) {
  expect_refused(hf("unsupported.json"), {"BertForMaskedLM", "is not supported", "Llama-"});
}

TEST(HfConfig, ConflictingModelTypeRefused) {
  Options o;
  o.model = stg::models::find_family("gpt").name;
  expect_refused(hf("llama3_8b.json"), {"LlamaForCausalLM", "--model_type 'gpt'"}, o);
}

TEST(HfConfig, MissingFieldRefused) {
  ScratchDir dir;
  expect_refused(dir.write("no_ffn.json", R"({"architectures": ["LlamaForCausalLM"],
      "hidden_size": 4096, "num_attention_heads": 32, "num_hidden_layers": 32,
      "vocab_size": 32000})"),
                 {"'intermediate_size'", "missing"});
  expect_refused(dir.write("no_experts.json", R"({"architectures": ["MixtralForCausalLM"],
      "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
      "num_hidden_layers": 32, "vocab_size": 32000, "num_experts_per_tok": 2})"),
                 {"'num_local_experts'", "missing"});
  expect_refused(dir.write("no_layers.json", R"({"architectures": ["GPT2LMHeadModel"],
      "n_embd": 768, "n_head": 12, "vocab_size": 50257})"),
                 {"'n_layer'", "missing"});
  expect_refused(dir.write("no_arch.json", R"({"hidden_size": 4096})"), {"'architectures'"});
  expect_refused(dir.write("empty_arch.json", R"({"architectures": []})"), {"'architectures'"});
}

TEST(HfConfig, BadValuesRefused) {
  ScratchDir dir;
  auto llama = [](const std::string& hidden) {
    return R"({"architectures": ["LlamaForCausalLM"], "hidden_size": )" + hidden +
           R"(, "intermediate_size": 14336, "num_attention_heads": 32,
           "num_hidden_layers": 32, "vocab_size": 32000})";
  };
  for (const char* bad :
       {"0", "-4096", "4096.5", "\"4096\"", "true", "[4096]", "99999999999999999999"}) {
    SCOPED_TRACE(bad);
    expect_refused(dir.write("bad.json", llama(bad)), {"'hidden_size'", "whole number"});
  }
}

TEST(HfConfig, BadJsonAndUnreadableFileRefused) {
  ScratchDir dir;
  expect_refused(dir.write("bad.json", R"({"architectures": ["LlamaForCausalLM"],)"),
                 {"not valid JSON"});
  expect_refused(dir.write("empty.json", ""), {"not valid JSON"});
  expect_refused(dir.write("list.json", "[1, 2]"), {"not a JSON object"});
  expect_refused((dir.path() / "missing.json").string(), {"cannot read"});
  expect_refused(dir.path().string(), {"cannot read"});
}

// ---------------------------------------------------------------------------
// Every preset and example config generates a small workload.

Options small(const fs::path& out) {
  Options o;
  o.output_dir = out.string();
  o.num_stacks = 2;
  o.batch = 2;
  o.seq = 256;
  o.threads = 1;
  return o;
}

TEST(PresetsGenerate, EveryPresetSmall) {
  for (const Preset& p : presets()) {
    SCOPED_TRACE(p.name);
    ScratchDir dir;
    Options o = small(dir.path());
    // Two blocks: one dense where the model starts dense; 8 experts.
    if (p.dense_blocks > 0) o.dense_blocks = 1;
    if (p.experts > 8) o.component_flags["--experts"] = 8;
    apply_preset(p, o);
    RunSummary s;
    ASSERT_NO_THROW(s = generate(o));
    EXPECT_EQ(s.ranks, 1);
    EXPECT_GT(s.nodes, 0);
  }
}

TEST(PresetsGenerate, Llama3WithTensorAndPipelineParallelism) {
  ScratchDir dir;
  Options o = small(dir.path());
  o.degree["dp"] = 2;
  o.degree["tp"] = 2;
  o.degree["pp"] = 2;
  apply_preset(*find_preset("llama3-8b"), o);
  RunSummary s;
  ASSERT_NO_THROW(s = generate(o));
  EXPECT_EQ(s.ranks, 8);
}

TEST(PresetsGenerate, EveryExampleConfigSmall) {
  for (const char* name : {"llama3_8b.json", "mixtral_8x7b.json", "gpt2.json", "qwen2_5_72b.json",
                           "qwen3_32b.json", "qwen3_235b_a22b.json", "deepseek_v3.json"}) {
    SCOPED_TRACE(name);
    ScratchDir dir;
    Options o = small(dir.path());
    o.dense_blocks = 1;  // DeepSeek-V3 starts with 3 dense blocks of 61
    o.component_flags["--experts"] = 8;
    apply_hf_config(hf(name), o);
    RunSummary s;
    ASSERT_NO_THROW(s = generate(o));
    EXPECT_EQ(s.ranks, 1);
  }
}

}  // namespace
}  // namespace stg::models
