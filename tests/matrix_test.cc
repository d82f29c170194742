// The configuration matrix: a few hundred distinct, small configurations of
// every model type and feature, each generated and checked with
// `stg validate --replay` (stg::tools::validate_dir: the static consumer
// rules that keep ASTRA-sim from hanging, then the order-only replay of all
// ranks, which must complete) and compared byte for byte with the full
// expansion (support/full_expansion.h: every micro-batch lowered, written by
// libprotobuf), which also shows the bytes do not depend on the writer
// threads.
//
// Most configurations call stg::generate() in-process (fast); the ones marked
// `binary` run the stg executable instead (twice) and are also compared with
// the in-process output byte for byte. Each configuration is its own test,
// named after its flags
// (Matrix/MatrixConfig.ValidAndDeterministic/llama_dp2_pp2_z1_mb2_1f1b_v004).
// MatrixSummary.Configs<N> checks that the matrix has at least 200 distinct
// configurations and covers every value of every dimension listed below.
//
// Dimensions are chosen per configuration so that every tensor dimension is
// a whole number after dividing by the degrees (see stg/generate.cc and the
// model files); a configuration the generator refuses is a failure here.
// Refusals are tested deliberately in MatrixRefusal.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <numeric>
#include <optional>
#include <ostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/flag_text.h"
#include "stg/generate.h"
#include "stg/models/families/registry.h"
#include "stg/models/hf_config.h"
#include "stg/models/presets.h"
#include "stg/options.h"
#include "stg/tools/replay.h"
#include "stg/tools/validate.h"
#include "support/files.h"
#include "support/full_expansion.h"
#include "support/small_dims.h"
#include "support/temp_dir.h"

namespace stg::matrix {
namespace {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------
// One configuration.

struct Config {
  std::string model = "transformer";  // transformer, gpt, dense, llama, moe, csv
  std::string csv;                    // sheet in tests/data/csv (model == "csv")
  std::string preset;                 // --model NAME
  std::string hf;                     // --hf_config tests/data/hf/<hf>
  int64_t dp = 1, tp = 1, sp = 1, pp = 1, ep = 1;
  bool weight_sharded = false;
  std::optional<int> zero;
  int stacks = 2;
  int micro_batches = 1;  // batch / micro_batch (gpt, llama, moe)
  std::optional<bool> tpsp;
  bool recompute = false;
  bool mixed_precision = false;
  std::string schedule = "none";
  int vstages = 1;
  std::string units = "stg";
  std::string dtype = "bf16";
  std::string schema = "v0.0.4";
  bool binary = false;    // run the executable (and compare with in-process output)
  bool megatron = false;  // --framework megatron (implies physical units and bf16)
  // Presets of the 2025-26 families: fewer experts than published, the
  // first blocks dense, stages split by cost, lean traces.
  int64_t preset_experts = 0;
  int dense_blocks = 0;
  bool pp_balance_cost = false;
  bool sim = false;
  std::string cp_algo = "allgather";  // --cp_algo (gpt, llama, moe)
  bool causal = false;                // --causal_saving 1 (megatron)
  // --mtp_depth (multi-token prediction modules; 0: not given).
  int mtp_depth = 0;
  // Sliding-window attention: --window of a quarter of the sequence (or
  // prompt), --global_every (0: not given).
  bool swa = false;
  int global_every = 0;
  // Mamba-2 blocks: state 16, 4 x tp heads of 16, tp groups; attention in
  // every `attention_period`-th block (0: none).
  bool mamba = false;
  int attention_period = 0;
  // stg infer (docs/inference.md): decode steps after the prefill (-1: a
  // training step); the batch is the requests, the sequence the prompt.
  int decode_steps = -1;
  bool kv_fp8 = false;  // --kv_dtype fp8
  bool prefill = true;  // --prefill 0: decode steps only
  // --disaggregate P:D (0:0: off): the prefill and the decode steps on
  // replicas of the plan of their own.
  int64_t prefill_replicas = 0, decode_replicas = 0;
  bool disaggregated() const { return prefill_replicas > 0; }
  // --compute_time model (docs/kernel-model.md): durations from the kernel
  // model on --gpu `gpu` ("": the default, h100-sxm).
  bool kernel_time = false;
  std::string gpu;

  bool serving() const { return decode_steps >= 0; }

  // Dimensions, derived from the above by finalize().
  int64_t batch = 0, micro = 0, seq = 0, dmodel = 0, dff = 0, head = 0, kvhead = 0, dvocal = 0,
          experts = 0, kexperts = 0;

  bool later() const {
    return model == "gpt" || model == "dense" || model == "llama" || model == "moe";
  }
  // DeepSeek from its flags in small dimensions (not the preset): MLA,
  // the first block dense, 4 experts of 32 (2 chosen) and one shared.
  bool small_deepseek() const { return model == "deepseek" && preset.empty() && hf.empty(); }
  bool is_moe() const { return model == "moe"; }
  bool grouped() const { return model == "llama" || model == "moe"; }
  // The tensor-parallel degree the shapes see (gpt/llama multiply tp by ep).
  int64_t tp_eff() const {
    return (model == "gpt" || model == "dense" || model == "llama") ? tp * ep : tp;
  }
  int64_t ranks() const {
    return dp * tp * sp * pp * (model == "csv" || model == "transformer" ? 1 : ep) *
           (disaggregated() ? prefill_replicas + decode_replicas : 1);
  }

  void finalize();
  std::vector<std::string> args() const;  // flags, without --output_dir
  Options options(const std::string& dir) const;
  std::string name() const;
  std::vector<std::pair<std::string, int64_t>> mamba_flags() const {
    if (!mamba) return {};
    std::vector<std::pair<std::string, int64_t>> f = {{"--mamba_state", 16},
                                                      {"--mamba_heads", 4 * tp_eff()},
                                                      {"--mamba_head_dim", 16},
                                                      {"--mamba_groups", tp_eff()}};
    if (attention_period) f.push_back({"--attention_period", attention_period});
    return f;
  }
};

int64_t lcm(int64_t a, int64_t b) { return std::lcm(a, b); }

void Config::finalize() {
  if (small_deepseek()) {
    head = 4;
    dmodel = 64;
    dff = 128;
    dvocal = 256;
    experts = 4;
    kexperts = 2;
    seq = 64;
    micro = dp * (megatron ? ep : 1) * (micro_batches == 1 ? 2 : 1);
    batch = micro * micro_batches;
    return;
  }
  if (!preset.empty() || !hf.empty()) {
    // The preset or config gives the model; only batch and seq are set here.
    // Megatron carves ep out of dp: every dp x ep rank needs whole sequences.
    micro = dp * (megatron ? ep : 1);
    batch = micro * micro_batches;
    return;
  }
  const int64_t t = tp_eff();
  head = t >= 4 ? t : t * ((4 + t - 1) / t);    // 4..8 heads, a multiple of tp
  if (cp_algo == "ulysses") head = 2 * t * sp;  // cp divides the (KV) heads per tp rank
  kvhead = head / 2 >= 1 && (head / 2) % t == 0 && head % (head / 2) == 0 ? head / 2 : t;
  const int64_t head_dim = lcm(16, dp * sp * ep);
  dmodel = head * head_dim;
  dff = 4 * dmodel;
  dvocal = 2 * dmodel;
  if (is_moe()) {
    experts = ep == 1 ? 4 : ep < 4 ? 2 * ep : ep;
    kexperts = 2;
  }
  int64_t seq_div = sp;
  if (later() && tpsp.value_or(true)) seq_div *= t;
  if (is_moe()) seq_div *= experts * ep;
  seq = lcm(64, seq_div);
  micro = later() || model == "csv" ? dp * (micro_batches == 1 ? 2 : 1) : dp * 2;
  // Megatron carves ep out of dp: every dp x ep rank needs whole sequences.
  if (megatron && is_moe()) micro *= ep;
  // Disaggregated: every prefill and every decode replica serves an equal
  // share of each replica's micro-batch.
  if (disaggregated()) micro *= std::lcm(prefill_replicas, decode_replicas);
  batch = micro * (later() ? micro_batches : 1);
}

std::vector<std::string> Config::args() const {
  std::vector<std::string> a;
  auto add = [&](const std::string& flag, const std::string& value) {
    a.push_back(flag);
    a.push_back(value);
  };
  auto num = [](int64_t v) { return std::to_string(v); };
  if (serving()) a.push_back("infer");
  if (model == "csv") {
    add("--module_csv", std::string(STG_TEST_DATA) + "/csv/" + csv);
  } else if (small_deepseek()) {
    add("--model_type", model);
  } else if (!preset.empty()) {
    add("--model", preset);
  } else if (!hf.empty()) {
    add("--hf_config", std::string(STG_TEST_DATA) + "/hf/" + hf);
  } else {
    add("--model_type", model);
  }
  add("--dp", num(dp));
  add("--tp", num(tp));
  add("--sp", num(sp));
  add("--pp", num(pp));
  if (ep != 1) add("--ep", num(ep));
  if (weight_sharded) add("--weight_sharded", "1");
  if (zero) add("--zero_stage", num(*zero));
  if (small_deepseek()) {
    for (const auto& [flag, value] :
         std::vector<std::pair<std::string, int64_t>>{{"--num_stacks", stacks},
                                                      {"--dense_blocks", 1},
                                                      {"--dmodel", dmodel},
                                                      {"--dff", dff},
                                                      {"--head", head},
                                                      {"--seq", seq},
                                                      {"--batch", batch},
                                                      {"--micro_batch", micro},
                                                      {"--dvocal", dvocal}})
      add(flag, num(value));
    for (const auto& [flag, value] : stg_test::small_mla_moe_flags(experts)) add(flag, num(value));
  } else if (preset.empty() && hf.empty()) {
    if (model != "csv") add("--num_stacks", num(stacks));
    add("--dmodel", num(dmodel));
    add("--dff", num(dff));
    add(serving() ? "--prompt_len" : "--seq", num(seq));
    add("--head", num(head));
    add(serving() ? "--requests" : "--batch", num(batch));
    if (serving()) add("--decode_steps", num(decode_steps));
    if (kv_fp8) add("--kv_dtype", "fp8");
    if (!prefill) add("--prefill", "0");
    if (disaggregated()) add("--disaggregate", num(prefill_replicas) + ":" + num(decode_replicas));
    if (model == "transformer") {
      add("--din", num(dvocal));
      add("--dout", num(dvocal));
    } else if (model == "csv") {
      add("--kexperts", "2");
    } else {
      add("--dvocal", num(dvocal));
      add("--micro_batch", num(micro));
      if (grouped()) add("--kvhead", num(kvhead));
      if (is_moe()) {
        add("--experts", num(experts));
        add("--kexperts", num(kexperts));
      }
    }
  } else {
    add("--num_stacks", num(stacks));
    add("--batch", num(batch));
    add("--micro_batch", num(micro));
    add("--seq", "4096");
    if (preset_experts) add("--experts", num(preset_experts));
    if (dense_blocks) add("--dense_blocks", num(dense_blocks));
  }
  if (mtp_depth) add("--mtp_depth", num(mtp_depth));
  if (swa) add("--window", num(seq / 4));
  if (global_every) add("--global_every", num(global_every));
  for (const auto& [flag, value] : mamba_flags()) add(flag, num(value));
  if (pp_balance_cost) add("--pp_balance", "cost");
  if (sim) add("--trace_detail", "sim");
  if (tpsp) add("--tpsp", *tpsp ? "1" : "0");
  if (recompute) add("--activation_recompute", "1");
  if (mixed_precision) add("--mixed_precision", "1");
  if (megatron) add("--framework", "megatron");
  if (cp_algo != "allgather") add("--cp_algo", cp_algo);
  if (causal) add("--causal_saving", "1");
  if (schedule != "none") add("--pipeline_schedule", schedule);
  if (vstages != 1) add("--virtual_stages", num(vstages));
  if (units != "stg" || serving()) add("--units", units);
  if (dtype != "bf16") add("--dtype", dtype);
  if (kernel_time) add("--compute_time", "model");
  if (!gpu.empty()) add("--gpu", gpu);
  add("--chakra_schema_version", schema);
  return a;
}

// The same flags as args(), as the command line would set them.
Options Config::options(const std::string& dir) const {
  Options o;
  o.output_dir = dir;
  o.schema = cli::parse_schema(schema);
  o.degree["dp"] = dp;
  o.degree["tp"] = tp;
  o.degree["sp"] = sp;
  o.degree["pp"] = pp;
  o.degree["ep"] = ep;
  o.weight_sharded = weight_sharded;
  o.zero_stage = zero;
  if (!preset.empty()) {
    const models::Preset* p = models::find_preset(preset);
    if (!p) throw UsageError("no preset " + preset);
    models::apply_preset(*p, o);
  }
  if (!hf.empty()) models::apply_hf_config(std::string(STG_TEST_DATA) + "/hf/" + hf, o);
  if (model == "csv") {
    o.module_csv = std::string(STG_TEST_DATA) + "/csv/" + csv;
  } else if (preset.empty() && hf.empty()) {
    o.model = stg::models::find_family(model).name;
  }
  if (small_deepseek()) {
    o.num_stacks = stacks;
    o.dense_blocks = 1;
    o.dmodel = dmodel;
    o.dff = dff;
    o.head = head;
    o.seq = seq;
    o.batch = batch;
    o.micro_batch = micro;
    o.dvocal = dvocal;
    stg_test::set_small_mla_moe(o, experts);
  } else if (preset.empty() && hf.empty()) {
    if (model != "csv") o.num_stacks = stacks;
    o.dmodel = dmodel;
    o.dff = dff;
    o.head = head;
    if (serving()) {
      Serving s;
      s.requests = batch;
      s.prompt_len = seq;
      s.decode_steps = decode_steps;
      if (kv_fp8) s.kv_dtype = DType::kFp8;
      s.prefill = prefill;
      s.prefill_replicas = prefill_replicas;
      s.decode_replicas = decode_replicas;
      o.serving = s;
    } else {
      o.seq = seq;
      o.batch = batch;
    }
    if (model == "transformer") {
      o.din = dvocal;
      o.dout = dvocal;
    } else if (model == "csv") {
      o.component_flags["--kexperts"] = 2;
    } else {
      o.dvocal = dvocal;
      o.micro_batch = micro;
      if (grouped()) o.component_flags["--kvhead"] = kvhead;
      if (is_moe()) {
        o.component_flags["--experts"] = experts;
        o.component_flags["--kexperts"] = kexperts;
      }
    }
  } else {
    o.num_stacks = stacks;
    o.batch = batch;
    o.micro_batch = micro;
    o.seq = 4096;
    if (preset_experts) o.component_flags["--experts"] = preset_experts;
    if (dense_blocks) o.dense_blocks = dense_blocks;
  }
  if (mtp_depth) o.mtp_depth = mtp_depth;
  if (swa) o.component_flags["--window"] = seq / 4;
  if (global_every) o.component_flags["--global_every"] = global_every;
  for (const auto& [flag, value] : mamba_flags()) o.component_flags[flag] = value;
  o.pp_balance_cost = pp_balance_cost;
  if (sim) o.trace_detail = emit::TraceDetail::kSim;
  o.tpsp = tpsp;
  if (recompute) o.activation_recompute = Recompute::kFull;
  if (mixed_precision) o.mixed_precision = true;
  o.pipeline_schedule = cli::parse_schedule(schedule);
  o.virtual_stages = vstages;
  if (megatron) o.framework = "megatron";
  o.cp_algo = cli::parse_cp_algo(cp_algo);
  if (causal) o.causal_saving = true;
  // Megatron without --units: the framework's default, as on the command line.
  if (!megatron || units != "stg" || serving()) o.units = cli::parse_units(units);
  o.dtype = cli::parse_dtype(dtype);
  if (kernel_time) o.compute_time = Options::ComputeTime::kModel;
  if (!gpu.empty()) o.gpu = hardware::find_gpu(gpu);
  return o;
}

std::string Config::name() const {
  std::string n;
  if (model == "csv")
    n = "csv_" + csv.substr(0, csv.find('.'));
  else if (!preset.empty())
    n = "preset_" + preset;
  else if (!hf.empty())
    n = "hf_" + hf.substr(0, hf.find('.'));
  else
    n = model;
  auto part = [&](const std::string& p) { n += "_" + p; };
  auto deg = [&](const char* axis, int64_t v) {
    if (v != 1) part(axis + std::to_string(v));
  };
  deg("dp", dp);
  deg("tp", tp);
  deg("sp", sp);
  deg("pp", pp);
  deg("ep", ep);
  if (dp == 1 && tp == 1 && sp == 1 && pp == 1 && ep == 1) part("single");
  if (weight_sharded) part("fsdp");
  if (zero) part("z" + std::to_string(*zero));
  if (stacks != 2 && model != "csv") part("L" + std::to_string(stacks));
  if (later() || small_deepseek() || !preset.empty() || !hf.empty())
    part("mb" + std::to_string(micro_batches));
  if (tpsp) part(*tpsp ? "tpsp1" : "tpsp0");
  if (recompute) part("recompute");
  if (mixed_precision) part("mixed");
  if (megatron) part("megatron");
  if (cp_algo != "allgather") part(cp_algo);
  if (causal) part("causal");
  if (schedule != "none") part(schedule);
  if (vstages != 1) part("V" + std::to_string(vstages));
  if (units != "stg") part(units + "_" + dtype);
  part(schema == "v0.0.4" ? "v004" : schema == "v0.0.1" ? "v001" : "json");
  if (dense_blocks) part("dense" + std::to_string(dense_blocks));
  if (mtp_depth) part("mtp" + std::to_string(mtp_depth));
  if (swa) part("swa");
  if (global_every) part("global" + std::to_string(global_every));
  if (mamba) part("mamba" + std::to_string(attention_period));
  if (pp_balance_cost) part("ppcost");
  if (sim) part("sim");
  if (serving()) part("infer" + std::to_string(decode_steps));
  if (kv_fp8) part("kvfp8");
  if (!prefill) part("noprefill");
  if (disaggregated())
    part(prefill_replicas == 1 && decode_replicas == 1
             ? "disaggregated"
             : "disaggregated_" + std::to_string(prefill_replicas) + "_" +
                   std::to_string(decode_replicas));
  if (kernel_time) part("kernel_time");
  if (!gpu.empty()) part(gpu);
  if (binary) part("bin");
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

// ---------------------------------------------------------------------------
// The matrix.

const std::vector<std::string> kSchemas = {"v0.0.4", "v0.0.1", "json"};
const std::vector<std::string> kDtypes = {"fp32", "bf16", "fp16", "fp8"};

std::vector<Config> build_matrix() {
  std::vector<Config> out;
  std::set<std::string> seen;
  int index = 0;  // rotates the secondary features
  auto push = [&](Config c) {
    c.finalize();
    std::ostringstream key;
    for (const std::string& a : c.args()) key << a << ' ';
    key << c.binary;
    if (!seen.insert(key.str()).second) return;
    out.push_back(c);
  };
  // Secondary features that rotate with the running index.
  auto rotate = [&](Config& c) {
    const int i = index++;
    c.schema = kSchemas[i % 3];
    if (i % 4 == 3) {
      c.units = "physical";
      c.dtype = kDtypes[(i / 4) % 4];
    }
    c.recompute = (i / 2) % 2 == 1;
    if (c.later() && i % 7 == 5) c.mixed_precision = true;
  };

  // A. One axis at a time, degrees 1..8, for every built-in model.
  for (const std::string model : {"transformer", "gpt", "llama", "moe"}) {
    for (const std::string axis : {"dp", "tp", "sp", "pp", "ep"}) {
      if (axis == "ep" && model == "transformer") continue;
      for (int64_t d = 1; d <= 8; ++d) {
        Config c;
        c.model = model;
        if (axis == "dp") c.dp = d;
        if (axis == "tp") c.tp = d;
        if (axis == "sp") c.sp = d;
        if (axis == "pp") c.pp = d;
        if (axis == "ep") c.ep = d;
        c.stacks = static_cast<int>(std::max<int64_t>(2, c.pp));
        rotate(c);
        const int i = index;
        if (c.later()) {
          c.zero = i % 4;
          c.micro_batches = 1 + i % 2;
          if (model != "moe" && i % 5 == 0) c.tpsp = false;
        } else {
          c.weight_sharded = i % 2 == 1;
        }
        if (c.pp > 1) c.schedule = (std::vector<std::string>{"none", "gpipe", "1f1b"})[i % 3];
        push(c);
      }
    }
  }

  // B. ZeRO stage x pipeline schedule for the later models.
  for (const std::string model : {"gpt", "llama", "moe"}) {
    for (int zero = 0; zero <= 3; ++zero) {
      for (const std::string schedule : {"none", "gpipe", "1f1b", "interleaved"}) {
        Config c;
        c.model = model;
        c.dp = 2;
        c.pp = 2;
        if (model == "moe") c.ep = 2;
        c.zero = zero;
        c.schedule = schedule;
        c.micro_batches = 2;
        if (schedule == "interleaved") {
          c.vstages = 2;
          c.stacks = 4;
        }
        rotate(c);
        push(c);
      }
    }
  }

  // C. The seed transformer: FSDP x schedule x recompute x schema.
  for (bool fsdp : {false, true}) {
    for (const std::string schedule : {"none", "gpipe", "1f1b"}) {
      for (bool recompute : {false, true}) {
        for (const std::string& schema : kSchemas) {
          Config c;
          c.dp = 2;
          c.tp = fsdp ? 1 : 2;
          c.sp = fsdp ? 2 : 1;
          c.pp = 2;
          c.weight_sharded = fsdp;
          if (fsdp && schema == "json") c.zero = 3;
          c.schedule = schedule;
          c.recompute = recompute;
          c.schema = schema;
          push(c);
        }
      }
    }
  }
  {
    Config c;  // explicit --zero_stage 0 on the transformer
    c.dp = 4;
    c.zero = 0;
    push(c);
  }

  // D. --tpsp 0/1 for the dense models over tp and sp.
  for (const std::string model : {"gpt", "dense", "llama"}) {
    for (bool tpsp : {false, true}) {
      for (auto [tp, sp] : std::vector<std::pair<int, int>>{{2, 1}, {1, 2}, {2, 2}, {4, 2}}) {
        Config c;
        c.model = model;
        c.tp = tp;
        c.sp = sp;
        c.tpsp = tpsp;
        c.micro_batches = 2;
        rotate(c);
        push(c);
      }
    }
  }
  for (bool tpsp : {false, true}) {  // gpt/llama: ep multiplies tp
    Config c;
    c.model = tpsp ? "llama" : "gpt";
    c.tp = 2;
    c.ep = 2;
    c.tpsp = tpsp;
    rotate(c);
    push(c);
  }
  {
    Config c;  // moe with an explicit --tpsp 1
    c.model = "moe";
    c.tp = 2;
    c.ep = 2;
    c.tpsp = true;
    push(c);
  }

  // E. Physical units with every dtype, every model.
  for (const std::string model : {"transformer", "gpt", "llama", "moe"}) {
    for (const std::string& dtype : kDtypes) {
      Config c;
      c.model = model;
      c.dp = 2;
      c.tp = 2;
      c.units = "physical";
      c.dtype = dtype;
      c.schema = kSchemas[index++ % 3];
      if (c.later()) c.mixed_precision = dtype == "fp32";
      push(c);
    }
  }

  // F. Several axes at once (at most 16 ranks).
  const std::vector<std::array<int, 4>> combos = {
      {2, 2, 2, 1}, {2, 2, 1, 2}, {1, 2, 2, 2}, {2, 1, 2, 2}, {2, 2, 2, 2},
      {4, 2, 1, 2}, {3, 2, 1, 1}, {2, 3, 1, 2}, {1, 1, 3, 3}, {2, 4, 2, 1}};
  for (const std::string model : {"transformer", "gpt", "llama", "moe"}) {
    for (const auto& [dp, tp, sp, pp] : combos) {
      Config c;
      c.model = model;
      c.dp = dp;
      c.tp = tp;
      c.sp = sp;
      c.pp = pp;
      c.stacks = std::max(2, pp);
      rotate(c);
      const int i = index;
      if (c.later()) {
        c.zero = i % 4;
        c.micro_batches = 2;
        if (c.pp > 1) c.schedule = i % 2 ? "1f1b" : "gpipe";
      } else {
        c.weight_sharded = i % 2 == 0;
        if (c.pp > 1) c.schedule = i % 2 ? "1f1b" : "none";
      }
      push(c);
    }
  }
  for (auto [tp, ep] : std::vector<std::pair<int, int>>{{2, 2}, {2, 4}, {4, 2}}) {
    Config c;  // moe: ep is its own axis next to tp and dp
    c.model = "moe";
    c.dp = 2;
    c.tp = tp;
    c.ep = ep;
    c.zero = 2;
    rotate(c);
    push(c);
  }

  // G. Interleaved schedules: (pp, virtual stages), micro-batches a multiple of pp.
  const std::vector<std::pair<int, int>> interleaved = {{1, 2}, {2, 2}, {2, 3}, {3, 2}, {4, 2}};
  for (const std::string model : {"gpt", "llama", "moe"}) {
    for (auto [pp, v] : interleaved) {
      Config c;
      c.model = model;
      c.pp = pp;
      c.vstages = v;
      c.stacks = pp * v;
      c.micro_batches = pp == 1 ? 2 : pp;
      c.schedule = "interleaved";
      rotate(c);
      push(c);
    }
  }

  // The seed transformer has one micro-batch, so interleaving needs pp 1.
  for (auto [v, stacks] : std::vector<std::pair<int, int>>{{2, 2}, {2, 4}, {3, 3}}) {
    Config c;
    c.vstages = v;
    c.stacks = stacks;
    c.schedule = "interleaved";
    rotate(c);
    c.weight_sharded = v == 3;
    push(c);
  }

  // H. More stages than blocks: pp = num_stacks + 1 or + 2 gives the
  // embeddings stages of their own.
  for (const std::string model : {"transformer", "gpt", "llama", "moe"}) {
    for (int extra : {1, 2}) {
      for (const std::string schedule : {"none", "1f1b"}) {
        Config c;
        c.model = model;
        c.stacks = 2;
        c.pp = 2 + extra;
        c.dp = extra;
        c.schedule = schedule;
        if (c.later()) c.micro_batches = 2;
        rotate(c);
        push(c);
      }
    }
  }

  // H2. The ends on stages of their own under every schedule that accepts
  // more stages than blocks, both frameworks (issue 30 point 6: Megatron-LM's
  // issue order numbered such a stage's micro-batch copies with one id).
  // One block at pp 3 (embedding, block, output layer), or two at pp 4.
  for (const bool megatron : {false, true})
    for (const std::string schedule : {"none", "gpipe", "1f1b", "interleaved", "zb-h1", "dualpipe"})
      for (const std::string model : {"gpt", "moe"}) {
        Config c;
        c.model = model;
        c.megatron = megatron;
        c.stacks = schedule == "dualpipe" || model == "moe" ? 2 : 1;
        c.pp = c.stacks + 2;
        if (model == "moe") c.ep = 2;
        c.micro_batches = schedule == "dualpipe" ? 2 * c.pp : c.pp;
        c.schedule = schedule;
        const int i = index++;
        c.schema = kSchemas[i % 3];
        c.zero = i % 4;
        c.recompute = i % 3 == 1;
        push(c);
      }
  {
    Config c;  // a small DeepSeek: 2 blocks at pp 4
    c.model = "deepseek";
    c.megatron = true;
    c.stacks = 2;
    c.pp = 4;
    c.micro_batches = 4;
    c.schedule = "1f1b";
    push(c);
  }
  {
    Config c;  // a Mixtral HF config: 1 block at pp 3
    c.hf = "mixtral_8x7b.json";
    c.model = "moe";
    c.megatron = true;
    c.stacks = 1;
    c.pp = 3;
    c.micro_batches = 3;
    c.schedule = "interleaved";
    push(c);
  }

  // I. Module spreadsheets over dp/tp/sp with every ZeRO stage.
  const std::vector<std::array<int, 3>> csv_degrees = {{1, 1, 1}, {2, 1, 1}, {1, 2, 1}, {1, 1, 2},
                                                       {2, 2, 2}, {3, 1, 1}, {1, 3, 1}, {1, 1, 3},
                                                       {4, 2, 1}, {8, 1, 1}, {1, 8, 1}, {1, 1, 8}};
  for (const std::string sheet : {"mlp.csv", "ops.csv", "fused_attention.csv"}) {
    for (const auto& [dp, tp, sp] : csv_degrees) {
      Config c;
      c.model = "csv";
      c.csv = sheet;
      c.dp = dp;
      c.tp = tp;
      c.sp = sp;
      rotate(c);
      const int z = index % 5;
      if (z == 4)
        c.weight_sharded = true;
      else
        c.zero = z;
      push(c);
    }
  }

  // J. Presets and Hugging Face configs with two blocks.
  for (const std::string preset : {"llama3-8b", "mixtral-8x7b", "gpt3-175b"}) {
    Config c;
    c.preset = preset;
    c.model = preset == "mixtral-8x7b" ? "moe" : preset == "gpt3-175b" ? "gpt" : "llama";
    c.dp = 2;
    if (c.model == "gpt")
      c.pp = 2;  // its vocabulary (50257) is odd: no tp
    else
      c.tp = 2;
    if (c.model == "moe") c.ep = 2;
    c.micro_batches = 2;
    rotate(c);
    push(c);
  }
  for (const std::string hf : {"llama3_8b.json", "mixtral_8x7b.json", "gpt2.json"}) {
    Config c;
    c.hf = hf;
    c.model = hf == "mixtral_8x7b.json" ? "moe" : hf == "gpt2.json" ? "gpt" : "llama";
    c.dp = 2;
    c.pp = 2;
    if (c.model == "llama") c.tp = 2;
    c.micro_batches = 2;
    c.schedule = "1f1b";
    rotate(c);
    push(c);
  }

  // M. The 2025-26 families (docs/models_2025.md): each preset with two or
  // three blocks (MoE presets with 8 experts), under both frameworks, with
  // tp, pp, ep, ZeRO, micro-batches and lean traces; their HF configs.
  {
    Config qwen2;
    qwen2.preset = "qwen2.5-72b";
    qwen2.model = "qwen2";
    qwen2.dp = 2;
    qwen2.tp = 2;
    qwen2.micro_batches = 2;
    qwen2.schedule = "1f1b";
    qwen2.pp = 2;
    push(qwen2);
    Config qwen3;
    qwen3.preset = "qwen3-32b";
    qwen3.model = "qwen3";
    qwen3.megatron = true;
    qwen3.dp = 2;
    qwen3.tp = 2;
    qwen3.pp = 2;
    qwen3.zero = 3;
    qwen3.micro_batches = 2;
    qwen3.schedule = "interleaved";
    qwen3.vstages = 2;
    qwen3.stacks = 4;
    push(qwen3);
    for (const bool megatron : {false, true}) {
      Config moe;
      moe.preset = "qwen3-235b-a22b";
      moe.model = "qwen3-moe";
      moe.preset_experts = 8;
      moe.megatron = megatron;
      moe.tp = 2;
      moe.ep = 2;
      moe.pp = megatron ? 2 : 1;
      moe.zero = megatron ? 1 : 2;
      moe.micro_batches = 2;
      moe.schedule = megatron ? "1f1b" : "none";
      moe.sim = megatron;
      push(moe);
      Config ds;
      ds.preset = "deepseek-v3";
      ds.model = "deepseek";
      ds.preset_experts = 8;
      ds.dense_blocks = 1;
      ds.stacks = 3;
      ds.megatron = megatron;
      ds.dp = 2;
      ds.ep = 2;
      ds.pp = 2;
      ds.tp = megatron ? 1 : 2;
      ds.pp_balance_cost = true;
      ds.micro_batches = 2;
      ds.schedule = megatron ? "1f1b" : "gpipe";
      ds.recompute = megatron;
      ds.sim = !megatron;
      push(ds);
    }
    // Multi-token prediction (docs/models_2025.md) on a small DeepSeek,
    // both frameworks: the modules on the last stage with a copy of the
    // embedding (1f1b, interleaved, ZeRO 1/3, recomputation; DualPipe's two
    // model copies), or on stage 0 with the embedding (DualPipeV), two
    // modules deep.
    struct Mtp {
      bool megatron;
      int64_t dp, tp, pp, ep;
      std::string schedule;
      int stacks, micro_batches, zero, depth;
      bool recompute, sim, binary;
    };
    for (const Mtp& m : {Mtp{false, 2, 2, 2, 2, "1f1b", 3, 2, 1, 1, false, false, true},
                         Mtp{true, 2, 1, 2, 2, "1f1b", 3, 2, 3, 1, true, false, false},
                         Mtp{true, 1, 1, 2, 2, "dualpipev", 4, 4, 1, 2, false, true, false},
                         Mtp{false, 2, 1, 2, 1, "interleaved", 4, 2, 2, 1, true, true, false},
                         Mtp{true, 1, 1, 2, 2, "dualpipe", 4, 4, 2, 1, false, false, false}}) {
      Config c;
      c.model = "deepseek";
      c.megatron = m.megatron;
      c.dp = m.dp;
      c.tp = m.tp;
      c.pp = m.pp;
      c.ep = m.ep;
      c.schedule = m.schedule;
      if (m.schedule == "interleaved") c.vstages = 2;
      c.stacks = m.stacks;
      c.micro_batches = m.micro_batches;
      c.zero = m.zero;
      c.mtp_depth = m.depth;
      c.recompute = m.recompute;
      c.sim = m.sim;
      c.binary = m.binary;
      push(c);
    }
    for (const std::string hf : {"qwen2_5_72b.json", "qwen3_32b.json"}) {
      Config c;
      c.hf = hf;
      c.model = hf == "qwen3_32b.json" ? "qwen3" : "qwen2";
      c.dp = 2;
      c.pp = 2;
      c.megatron = hf == "qwen3_32b.json";
      c.micro_batches = 2;
      c.schedule = "1f1b";
      push(c);
    }
  }

  // L. --framework megatron with every pipeline schedule, every later model.
  for (const std::string model : {"gpt", "llama", "moe"}) {
    for (const std::string schedule : {"none", "gpipe", "1f1b", "interleaved"}) {
      Config c;
      c.model = model;
      c.megatron = true;
      c.dp = 2;
      c.pp = 2;
      if (model == "moe") c.ep = 2;
      c.micro_batches = 2;
      c.schedule = schedule;
      if (schedule == "interleaved") {
        c.vstages = 2;
        c.stacks = 4;
      }
      const int i = index++;
      c.schema = kSchemas[i % 3];
      c.zero = i % 4;
      c.recompute = i % 2 == 1;
      if (model == "gpt" && schedule == "1f1b") c.tp = 2;
      push(c);
    }
  }

  // M. Context parallelism: ring attention and Ulysses with cp 2, 4 and 8,
  // every schedule, 2 micro-batches (docs/context_parallelism.md); Megatron's
  // dp x cp gradient group with every algorithm.
  struct CpCase {
    std::string model, algo, schedule;
    int dp, tp, cp, pp, ep;
    bool megatron;
    int zero;
  };
  const std::vector<CpCase> cp_cases = {
      {"llama", "ring", "none", 1, 1, 2, 1, 1, false, 0},
      {"gpt", "ring", "1f1b", 2, 1, 4, 2, 1, false, 1},
      {"llama", "ring", "none", 1, 1, 8, 1, 1, false, 0},
      {"moe", "ring", "gpipe", 1, 1, 2, 2, 2, true, 0},
      {"llama", "ring", "interleaved", 2, 1, 2, 2, 1, true, 1},
      {"gpt", "ring", "none", 1, 2, 2, 1, 1, false, 3},
      {"llama", "ulysses", "none", 1, 1, 2, 1, 1, false, 0},
      {"gpt", "ulysses", "1f1b", 2, 1, 4, 2, 1, true, 0},
      {"llama", "ulysses", "none", 1, 1, 8, 1, 1, false, 2},
      {"moe", "ulysses", "gpipe", 1, 2, 2, 2, 2, false, 0},
      {"llama", "ulysses", "interleaved", 2, 1, 2, 2, 1, true, 2},
      {"llama", "allgather", "1f1b", 2, 1, 2, 2, 1, true, 2},
  };
  for (const CpCase& k : cp_cases) {
    Config c;
    c.model = k.model;
    c.cp_algo = k.algo;
    c.schedule = k.schedule;
    c.dp = k.dp;
    c.tp = k.tp;
    c.sp = k.cp;
    c.pp = k.pp;
    c.ep = k.ep;
    c.megatron = k.megatron;
    c.micro_batches = 2;
    if (k.zero == 3)
      c.weight_sharded = true;
    else if (k.zero > 0)
      c.zero = k.zero;
    if (k.schedule == "interleaved") {
      c.vstages = 2;
      c.stacks = 4;
    }
    const int i = index++;
    c.schema = kSchemas[i % 3];
    c.recompute = i % 3 == 1;
    c.causal = k.megatron && i % 2 == 0;
    if (k.model == "gpt" && !k.megatron) c.tpsp = i % 2 == 0;
    push(c);
  }

  // O. DualPipe (two copies of the model, micro-batches from both ends, the
  // copies' gradients summed over stages i and pp-1-i): both frameworks,
  // every later model, ZeRO 0-3, recompute and lean traces rotating.
  for (const bool megatron : {false, true})
    for (const std::string model : {"gpt", "llama", "moe"}) {
      Config c;
      c.model = model;
      c.megatron = megatron;
      c.pp = model == "llama" && !megatron ? 4 : 2;
      if (model == "moe") c.ep = 2;
      if (model == "gpt" && megatron) c.tp = 2;
      if (model == "llama" && megatron) c.dp = 2;
      c.stacks = c.pp;
      c.micro_batches = 2 * c.pp;
      c.schedule = "dualpipe";
      const int i = index++;
      c.schema = kSchemas[i % 3];
      c.zero = i % 4;
      c.recompute = i % 3 == 1;
      c.sim = i % 2 == 0;
      push(c);
    }

  // Context parallelism under the schedules that run W apart.
  for (const bool ring : {true, false}) {
    Config c;
    c.model = ring ? "llama" : "gpt";
    c.cp_algo = ring ? "ring" : "ulysses";
    c.schedule = ring ? "zb-h1" : "dualpipev";
    c.megatron = !ring;
    c.sp = 2;
    c.pp = 2;
    c.stacks = 4;
    c.micro_batches = ring ? 3 : 4;
    c.schema = kSchemas[index++ % 3];
    push(c);
  }

  // N. Schedules that run W apart (zero-bubble ZB-H1; DualPipeV, two chunks
  // per stage in a V), both frameworks, every later model; ZeRO 0-3 and
  // recompute rotate.
  for (const bool megatron : {false, true})
    for (const std::string model : {"gpt", "llama", "moe"})
      for (const std::string schedule : {"zb-h1", "dualpipev"}) {
        Config c;
        c.model = model;
        c.megatron = megatron;
        c.pp = schedule == "zb-h1" && model == "llama" ? 4 : 2;
        if (model == "moe") c.ep = 2;
        if (model == "gpt" && megatron) c.tp = 2;
        c.stacks = schedule == "dualpipev" ? 2 * c.pp : c.pp;
        c.micro_batches = schedule == "dualpipev" ? 2 * c.pp + (megatron ? 0 : 1) : c.pp + 1;
        c.schedule = schedule;
        const int i = index++;
        c.schema = kSchemas[i % 3];
        c.zero = i % 4;
        c.recompute = i % 3 == 1;
        push(c);
      }

  // O. Serving (stg infer): prefill and decode steps written from one,
  // against every step built in the graph; tp, pp (micro-batches), dp, ep,
  // both frameworks, fp8 caches, every schema, lean traces.
  auto serve = [&](const std::string& model, int64_t dp, int64_t tp, int64_t pp, int64_t ep,
                   int steps, int micro_batches, auto tweak) {
    Config c;
    c.model = model;
    c.dp = dp;
    c.tp = tp;
    c.pp = pp;
    c.ep = ep;
    c.decode_steps = steps;
    c.micro_batches = micro_batches;
    c.units = "physical";
    tweak(c);
    push(c);
  };
  const auto none = [](Config&) {};
  serve("gpt", 1, 2, 1, 1, 3, 1, none);
  serve("llama", 2, 2, 2, 1, 2, 2, none);
  serve("llama", 1, 1, 4, 1, 2, 4, [](Config& c) { c.schema = "json"; });
  serve("moe", 1, 2, 1, 2, 2, 1, none);
  serve("moe", 2, 1, 2, 2, 1, 2, [](Config& c) { c.megatron = true; });
  serve("gpt", 1, 2, 2, 1, 2, 2, [](Config& c) { c.megatron = true; });
  serve("llama", 1, 2, 1, 1, 0, 1, [](Config& c) { c.schema = "v0.0.1"; });
  serve("llama", 2, 1, 1, 1, 3, 1, [](Config& c) {
    c.kv_fp8 = true;
    c.sim = true;
  });
  serve("llama", 1, 2, 2, 1, 2, 2, [](Config& c) {
    c.kv_fp8 = true;
    c.binary = true;
  });
  serve("moe", 1, 1, 2, 2, 3, 2, [](Config& c) { c.prefill = false; });
  // Decode only, both frameworks: the prompts' token copy folded into the
  // next node (lower/fold_token_copy.h), later steps reading the token.
  serve("llama", 1, 2, 1, 1, 3, 1, [](Config& c) {
    c.prefill = false;
    c.megatron = true;
  });
  serve("gpt", 1, 1, 4, 1, 2, 4, [](Config& c) { c.prefill = false; });
  serve("llama", 1, 2, 1, 1, 2, 1, [](Config& c) {
    c.sp = 2;
    c.cp_algo = "ring";
  });
  serve("gpt", 2, 1, 2, 1, 2, 1, [](Config& c) { c.sp = 2; });
  const auto pools = [](int64_t p, int64_t d) {
    return [p, d](Config& c) {
      c.prefill_replicas = p;
      c.decode_replicas = d;
    };
  };
  serve("llama", 1, 2, 2, 1, 3, 2, pools(1, 1));
  serve("moe", 2, 1, 1, 2, 2, 1, [&](Config& c) {
    pools(1, 1)(c);
    c.megatron = true;
  });
  // Pools of different sizes: each prefill pool sends each decode pool the
  // caches of the requests both serve.
  serve("llama", 1, 2, 1, 1, 2, 1, pools(1, 2));
  serve("gpt", 1, 1, 2, 1, 2, 2, pools(2, 1));
  serve("moe", 1, 1, 1, 2, 2, 1, [&](Config& c) {
    pools(2, 3)(c);
    c.megatron = true;
  });

  // P. Sliding-window attention (docs/models_2025.md): every block local or
  // every second one global; both frameworks, cp with the all-gather and
  // Ulysses kernels, schedules, recompute, serving with the window's cache.
  const auto windowed = [](int every) {
    return [every](Config& c) {
      c.swa = true;
      c.global_every = every;
    };
  };
  struct SwaCase {
    std::string model, algo, schedule;
    int dp, tp, cp, pp, every;
    bool megatron;
  };
  const std::vector<SwaCase> swa_cases = {
      {"llama", "allgather", "1f1b", 1, 2, 1, 2, 2, true},
      {"gpt", "allgather", "none", 2, 1, 1, 1, 0, false},
      {"llama", "allgather", "gpipe", 1, 1, 2, 2, 0, true},
      {"llama", "ulysses", "none", 1, 1, 2, 1, 2, true},
      {"moe", "allgather", "interleaved", 1, 1, 1, 2, 2, true},
      {"gpt", "ulysses", "zb-h1", 1, 2, 2, 2, 0, false},
  };
  for (const SwaCase& k : swa_cases) {
    Config c;
    c.model = k.model;
    c.cp_algo = k.algo;
    c.schedule = k.schedule;
    c.dp = k.dp;
    c.tp = k.tp;
    c.sp = k.cp;
    c.pp = k.pp;
    c.megatron = k.megatron;
    c.micro_batches = 2;
    windowed(k.every)(c);
    if (k.schedule == "interleaved") {
      c.vstages = 2;
      c.stacks = 4;
    }
    const int i = index++;
    c.recompute = i % 2 == 1;
    c.causal = k.megatron && i % 3 == 0;
    push(c);
  }
  serve("llama", 1, 2, 1, 1, 3, 1, windowed(0));
  serve("llama", 1, 2, 2, 1, 2, 2, [&](Config& c) {
    windowed(2)(c);
    c.megatron = true;
  });
  serve("gpt", 1, 1, 1, 1, 2, 1, [&](Config& c) {
    windowed(0)(c);
    c.sp = 2;
  });
  serve("llama", 1, 2, 1, 1, 2, 1, [&](Config& c) {
    windowed(0)(c);
    pools(1, 1)(c);
  });

  // Q. Mamba-2 hybrids (docs/models_2025.md): every block Mamba-2 or
  // attention in every second one; both frameworks, schedules, MoE, ZeRO,
  // serving with the state (prefill, decode only, disaggregated).
  const auto hybrid = [](int period) {
    return [period](Config& c) {
      c.mamba = true;
      c.attention_period = period;
    };
  };
  struct MambaCase {
    std::string model, schedule;
    int dp, tp, pp, ep, period;
    bool megatron;
  };
  const std::vector<MambaCase> mamba_cases = {
      {"llama", "1f1b", 1, 2, 2, 1, 2, true},      {"gpt", "none", 2, 1, 1, 1, 0, false},
      {"moe", "interleaved", 1, 1, 2, 2, 2, true}, {"llama", "zb-h1", 2, 1, 2, 1, 0, false},
      {"gpt", "dualpipev", 1, 2, 2, 1, 2, true},
  };
  for (const MambaCase& k : mamba_cases) {
    Config c;
    c.model = k.model;
    c.schedule = k.schedule;
    c.dp = k.dp;
    c.tp = k.tp;
    c.pp = k.pp;
    c.ep = k.ep;
    c.megatron = k.megatron;
    c.micro_batches = k.schedule == "dualpipev" ? 2 * k.pp : 2;
    hybrid(k.period)(c);
    if (k.schedule == "interleaved" || k.schedule == "dualpipev") c.stacks = 4;
    if (k.schedule == "interleaved") c.vstages = 2;
    const int i = index++;
    c.recompute = i % 2 == 0;
    c.zero = i % 4;
    push(c);
  }
  serve("llama", 1, 2, 1, 1, 3, 1, hybrid(2));
  serve("moe", 1, 1, 2, 2, 2, 2, [&](Config& c) {
    hybrid(0)(c);
    c.megatron = true;
  });
  serve("gpt", 1, 2, 1, 1, 2, 1, [&](Config& c) {
    hybrid(2)(c);
    c.prefill = false;
  });
  serve("llama", 1, 2, 1, 1, 2, 1, [&](Config& c) {
    hybrid(2)(c);
    pools(1, 1)(c);
  });

  // R. --compute_time model (docs/kernel-model.md): both frameworks, the
  // schedules, MoE, context parallelism, a GPU row, JSON, serving with
  // decode steps (whose durations grow with the context) and disaggregated.
  struct KernelCase {
    std::string model, schedule, cp_algo, gpu, schema;
    int dp, tp, cp, pp, ep;
    bool megatron;
  };
  const std::vector<KernelCase> kernel_cases = {
      {"gpt", "1f1b", "allgather", "", "v0.0.4", 2, 2, 1, 2, 1, true},
      {"moe", "zb-h1", "allgather", "", "v0.0.4", 1, 2, 1, 2, 2, false},
      {"moe", "1f1b", "allgather", "h800", "v0.0.4", 2, 1, 1, 2, 2, true},
      {"llama", "interleaved", "ring", "b200", "v0.0.4", 1, 2, 2, 2, 1, true},
      {"llama", "dualpipev", "ulysses", "a100-80gb", "json", 1, 1, 2, 2, 1, false},
      {"gpt", "none", "allgather", "mi300x", "v0.0.4", 4, 2, 1, 1, 1, true},
  };
  for (const KernelCase& k : kernel_cases) {
    Config c;
    c.model = k.model;
    c.schedule = k.schedule;
    c.cp_algo = k.cp_algo;
    c.gpu = k.gpu;
    c.schema = k.schema;
    c.dp = k.dp;
    c.tp = k.tp;
    c.sp = k.cp;
    c.pp = k.pp;
    c.ep = k.ep;
    c.megatron = k.megatron;
    // The reference's units too: durations are physical either way.
    c.units = k.model == "moe" && !k.megatron ? "stg" : "physical";
    c.kernel_time = true;
    c.micro_batches = k.schedule == "dualpipev" ? 2 * k.pp : 2;
    if (k.schedule == "interleaved" || k.schedule == "dualpipev") c.stacks = 4;
    if (k.schedule == "interleaved") c.vstages = 2;
    push(c);
  }
  const auto kernel_time = [](Config& c) { c.kernel_time = true; };
  serve("llama", 1, 2, 2, 1, 3, 2, kernel_time);
  serve("moe", 2, 1, 1, 2, 2, 1, [&](Config& c) {
    kernel_time(c);
    c.megatron = true;
    c.gpu = "h200";
  });
  serve("llama", 1, 2, 1, 1, 2, 1, [&](Config& c) {
    kernel_time(c);
    pools(1, 2)(c);
  });

  // K. A few through the executable (compared with the in-process bytes).
  std::vector<Config> binary;
  for (size_t k = 0; k < out.size(); k += out.size() / 10) binary.push_back(out[k]);
  for (Config& c : binary) {
    c.binary = true;
    push(c);
  }
  return out;
}

const std::vector<Config>& matrix() {
  static const std::vector<Config> m = build_matrix();
  return m;
}

// ---------------------------------------------------------------------------
// Running and comparing.

using stg_test::read_file;

// A fresh directory under the temp dir, removed unless the test failed.
class TempDir : public stg_test::TempDir {
 public:
  explicit TempDir(const std::string& tag)
      : stg_test::TempDir(
            {.prefix = "stg_matrix", .tag = tag, .keep_on_failure = true, .label = "matrix"}) {}
};

// file name -> content of every regular file in `dir`.
std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file()) files[e.path().filename().string()] = read_file(e.path());
  return files;
}

void expect_same_bytes(const fs::path& a, const fs::path& b, const std::string& what) {
  const auto fa = snapshot(a), fb = snapshot(b);
  std::vector<std::string> na, nb;
  for (const auto& [n, _] : fa) na.push_back(n);
  for (const auto& [n, _] : fb) nb.push_back(n);
  ASSERT_EQ(na, nb) << what << ": different file names";
  for (const auto& [n, content] : fa)
    EXPECT_TRUE(content == fb.at(n)) << what << ": " << n << " differs (" << content.size()
                                     << " vs " << fb.at(n).size() << " bytes)";
}

void expect_same_as_full_expansion(const Options& o, const fs::path& dir) {
  const stg_test::FullExpansion full = stg_test::full_expansion(o);
  const auto files = snapshot(dir);
  ASSERT_EQ(files.size(), full.files.size()) << "full expansion: different file counts";
  for (const auto& [name, content] : files) {
    const auto it = full.files.find(name);
    ASSERT_NE(it, full.files.end()) << "full expansion has no " << name;
    EXPECT_TRUE(content == it->second)
        << "full expansion: " << name << " differs (" << content.size() << " vs "
        << it->second.size() << " bytes)";
  }
}

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs the stg binary; returns its exit status (-1 if it did not exit).
int run_binary(const std::vector<std::string>& args, const fs::path& log) {
  std::string cmd = quote(STG_BINARY);
  for (const std::string& a : args) cmd += " " + quote(a);
  cmd += " >" + quote(log.string()) + " 2>&1 </dev/null";
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string command_line(const Config& c) {
  std::string s = "stg";
  for (const std::string& a : c.args()) s += " " + a;
  return s;
}

// Generates `c` into `dir`: in-process or with the binary.
void generate_into(const Config& c, const fs::path& dir, int threads) {
  if (c.binary) {
    std::vector<std::string> args = c.args();
    args.insert(args.end(),
                {"--output_dir", dir.string(), "--threads", std::to_string(threads), "--quiet"});
    const fs::path log = dir.string() + ".log";
    const int status = run_binary(args, log);
    ASSERT_EQ(status, 0) << "stg exited with " << status << ": " << read_file(log);
    return;
  }
  Options o = c.options(dir.string());
  o.threads = threads;
  try {
    const RunSummary s = generate(o);
    EXPECT_EQ(s.ranks, c.ranks());
    EXPECT_EQ(s.files, c.ranks() + 1);
  } catch (const std::exception& e) {
    FAIL() << "generate refused or failed: " << e.what();
  }
}

void expect_valid(const Config& c, const fs::path& dir) {
  tools::ValidateOptions vo;
  vo.threads = 2;
  vo.require_pg_name = c.schema == "v0.0.4";  // what ASTRA-sim HEAD reads
  vo.replay = true;
  const tools::ValidationReport r = tools::validate_dir(dir.string(), vo);
  std::ostringstream detail;
  for (const std::string& e : r.errors) detail << "\n  error: " << e;
  for (const tools::Violation& v : r.shown)
    detail << "\n  " << tools::rule_label(v.rule) << " " << v.message;
  if (r.replay) detail << "\n  " << tools::replay_summary(*r.replay);
  ASSERT_TRUE(r.replay.has_value()) << r.verdict() << detail.str();
  EXPECT_TRUE(r.replay->completed) << r.verdict() << detail.str();
  EXPECT_EQ(r.replay->nodes_done, r.nodes) << detail.str();
  EXPECT_TRUE(r.errors.empty()) << r.verdict() << detail.str();
  EXPECT_EQ(r.violations(), 0) << r.verdict() << detail.str();
  EXPECT_EQ(r.ranks, c.ranks()) << r.verdict();
  EXPECT_EQ(r.files, c.ranks()) << r.verdict();
  EXPECT_GT(r.nodes, 0);
  EXPECT_FALSE(r.comm_group_file.empty());
  EXPECT_EQ(r.exit_status(), 0);
}

// gtest prints a parameter of a failing test with this.
void PrintTo(const Config& c, std::ostream* os) { *os << command_line(c); }

class MatrixConfig : public ::testing::TestWithParam<Config> {};

TEST_P(MatrixConfig, ValidAndDeterministic) {
  const Config& c = GetParam();
  RecordProperty("command", command_line(c));
  SCOPED_TRACE(command_line(c));
  TempDir tmp(c.name());
  const fs::path first = tmp.path() / "a", second = tmp.path() / "b";
  ASSERT_NO_FATAL_FAILURE(generate_into(c, first, 3));
  if (::testing::Test::HasFailure()) return;
  expect_valid(c, first);
  if (!c.binary) {
    // The one lowering path against the full expansion (every micro-batch
    // lowered, libprotobuf writers; support/full_expansion.h), which has no
    // writer threads: the same bytes also mean the run did not depend on its
    // threads.
    expect_same_as_full_expansion(c.options(first.string()), first);
    return;
  }
  ASSERT_NO_FATAL_FAILURE(generate_into(c, second, 1));
  expect_same_bytes(first, second, "second run (1 writer thread)");
  if (c.binary) {
    Config in_process = c;
    in_process.binary = false;
    const fs::path third = tmp.path() / "c";
    ASSERT_NO_FATAL_FAILURE(generate_into(in_process, third, 2));
    expect_same_bytes(first, third, "in-process generate()");
  }
}

INSTANTIATE_TEST_SUITE_P(Matrix, MatrixConfig, ::testing::ValuesIn(matrix()),
                         [](const ::testing::TestParamInfo<Config>& info) {
                           return info.param.name();
                         });

// ---------------------------------------------------------------------------
// The matrix's size and coverage, in the test name: MatrixSummary.Configs<N>.

class Summary : public ::testing::Test {
 public:
  void TestBody() override {
    const std::vector<Config>& m = matrix();
    std::set<std::string> names, lines;
    for (const Config& c : m) {
      names.insert(c.name());
      lines.insert(command_line(c) + (c.binary ? " [binary]" : ""));
    }
    EXPECT_GE(m.size(), 200u);
    EXPECT_EQ(names.size(), m.size()) << "test names are not distinct";
    EXPECT_EQ(lines.size(), m.size()) << "configurations are not distinct";

    // Every value of every dimension appears at least once.
    std::map<std::string, std::set<std::string>> seen;
    int binary = 0;
    for (const Config& c : m) {
      seen["model"].insert(c.model == "csv" ? "csv:" + c.csv : c.model);
      for (auto [axis, v] : std::vector<std::pair<std::string, int64_t>>{
               {"dp", c.dp}, {"tp", c.tp}, {"sp", c.sp}, {"pp", c.pp}})
        seen[c.model + "." + axis].insert(std::to_string(v));
      if (c.is_moe()) seen["moe.ep"].insert(std::to_string(c.ep));
      seen["weight_sharded"].insert(c.weight_sharded ? "1" : "0");
      if (c.zero)
        seen[c.model == "transformer" ? "transformer.zero" : "zero"].insert(
            std::to_string(*c.zero));
      if (c.later()) seen["micro_batches>1"].insert(c.micro_batches > 1 ? "1" : "0");
      if (c.tpsp) seen[c.model == "moe" ? "moe.tpsp" : "tpsp"].insert(*c.tpsp ? "1" : "0");
      seen["recompute"].insert(c.recompute ? "1" : "0");
      seen["schedule"].insert(c.schedule);
      if (c.megatron) seen["megatron." + c.model].insert(c.schedule);
      seen["units"].insert(c.units);
      if (c.units == "physical") seen["dtype"].insert(c.dtype);
      seen["schema"].insert(c.schema);
      if (!c.preset.empty()) seen["preset"].insert(c.preset);
      if (c.mtp_depth > 0 && c.pp > 1) seen["mtp"].insert(c.megatron ? "megatron" : "reference");
      if (!c.hf.empty()) seen["hf"].insert(c.hf);
      const int chunks = c.schedule == "dualpipev" ? 2 : c.vstages;
      if (c.model != "csv" && c.pp * chunks > c.stacks)
        seen[std::string("own_ends.") + (c.megatron ? "megatron" : "reference")].insert(c.schedule);
      binary += c.binary;
    }
    const std::set<std::string> one_to_eight = {"1", "2", "3", "4", "5", "6", "7", "8"};
    for (const std::string model : {"transformer", "gpt", "llama", "moe"})
      for (const std::string axis : {"dp", "tp", "sp", "pp"})
        EXPECT_EQ(seen[model + "." + axis], one_to_eight) << model << " " << axis;
    EXPECT_EQ(seen["moe.ep"], one_to_eight);
    EXPECT_EQ(seen["model"],
              (std::set<std::string>{"transformer", "gpt", "dense", "llama", "moe", "qwen2",
                                     "qwen3", "qwen3-moe", "deepseek", "csv:mlp.csv", "csv:ops.csv",
                                     "csv:fused_attention.csv"}));
    EXPECT_EQ(seen["weight_sharded"], (std::set<std::string>{"0", "1"}));
    EXPECT_EQ(seen["zero"], (std::set<std::string>{"0", "1", "2", "3"}));
    EXPECT_EQ(seen["transformer.zero"], (std::set<std::string>{"0", "3"}));
    EXPECT_EQ(seen["micro_batches>1"], (std::set<std::string>{"0", "1"}));
    EXPECT_EQ(seen["tpsp"], (std::set<std::string>{"0", "1"}));
    EXPECT_EQ(seen["moe.tpsp"], (std::set<std::string>{"1"}));
    EXPECT_EQ(seen["recompute"], (std::set<std::string>{"0", "1"}));
    EXPECT_EQ(seen["schedule"], (std::set<std::string>{"none", "gpipe", "1f1b", "interleaved",
                                                       "zb-h1", "dualpipe", "dualpipev"}));
    for (const std::string model : {"gpt", "llama", "moe"})
      EXPECT_EQ(seen["megatron." + model],
                (std::set<std::string>{"none", "gpipe", "1f1b", "interleaved", "zb-h1", "dualpipe",
                                       "dualpipev"}))
          << "--framework megatron " << model;
    EXPECT_EQ(seen["units"], (std::set<std::string>{"stg", "physical"}));
    EXPECT_EQ(seen["dtype"], (std::set<std::string>{"fp32", "bf16", "fp16", "fp8"}));
    EXPECT_EQ(seen["schema"], (std::set<std::string>{"v0.0.4", "v0.0.1", "json"}));
    EXPECT_EQ(seen["preset"].size(), 7u);  // 3 + the 2025-26 families' 4
    EXPECT_EQ(seen["mtp"], (std::set<std::string>{"reference", "megatron"}));
    EXPECT_EQ(seen["hf"].size(), 5u);
    // More stages than blocks (the ends on stages of their own) under every
    // schedule that accepts it (DualPipeV needs a block per virtual stage).
    for (const std::string framework : {"reference", "megatron"})
      EXPECT_EQ(
          seen["own_ends." + framework],
          (std::set<std::string>{"none", "gpipe", "1f1b", "interleaved", "zb-h1", "dualpipe"}))
          << framework;
    EXPECT_GE(binary, 5);
    int serving = 0;
    for (const Config& c : m) serving += c.serving();
    EXPECT_GE(serving, 14);
    std::printf("matrix: %zu distinct configurations (%d through the stg binary)\n", m.size(),
                binary);
  }
};

[[maybe_unused]] const bool kSummaryRegistered = [] {
  const std::string name = "Configs" + std::to_string(matrix().size());
  ::testing::RegisterTest("MatrixSummary", name.c_str(), nullptr, nullptr, __FILE__, __LINE__,
                          []() -> ::testing::Test* { return new Summary; });
  return true;
}();

// ---------------------------------------------------------------------------
// Deliberate refusals: exit status 2 (UsageError) and no files.

struct Refusal {
  std::string name;
  Config config;
  std::string expect;  // part of the message
};

std::vector<Refusal> refusals() {
  std::vector<Refusal> r;
  auto add = [&](const std::string& name, Config c, const std::string& expect,
                 void (*tweak)(Config&) = nullptr) {
    c.finalize();
    if (tweak) tweak(c);
    r.push_back({name, c, expect});
  };
  Config t;
  t.dp = 2;
  t.zero = 1;
  add("TransformerZero1", t, "--zero_stage 1");
  t.zero = 2;
  add("TransformerZero2", t, "--zero_stage 2");
  Config moe;
  moe.model = "moe";
  moe.tpsp = false;
  add("MoeTpsp0", moe, "--tpsp 0");
  Config inter;
  inter.model = "llama";
  inter.pp = 2;
  inter.stacks = 4;
  inter.schedule = "interleaved";
  inter.vstages = 2;
  inter.micro_batches = 3;
  add("InterleavedMicroBatchesNotDivisibleByPp", inter, "divisible by --pp");
  inter.micro_batches = 2;
  inter.vstages = 3;
  add("InterleavedTooFewStacks", inter, "--virtual_stages 3");
  Config v;
  v.model = "gpt";
  v.vstages = 2;
  add("VirtualStagesWithoutInterleaved", v, "--virtual_stages");
  Config d;
  d.model = "gpt";
  d.dtype = "fp8";
  add("DtypeWithoutPhysicalUnits", d, "--dtype");
  Config w;
  w.model = "llama";
  w.dp = 2;
  w.weight_sharded = true;
  w.zero = 1;
  add("WeightShardedWithZero1", w, "--weight_sharded");
  Config h;
  h.model = "llama";
  h.tp = 3;
  add("HeadsNotDivisibleByTp", h, "--head", [](Config& c) {
    c.head = 4;
    c.kvhead = 3;
  });
  return r;
}

void PrintTo(const Refusal& r, std::ostream* os) {
  *os << r.name << ": " << command_line(r.config);
}

class MatrixRefusal : public ::testing::TestWithParam<Refusal> {};

TEST_P(MatrixRefusal, RefusedWithUsageErrorAndNoFiles) {
  const Refusal& r = GetParam();
  SCOPED_TRACE(command_line(r.config));
  TempDir tmp("refusal_" + r.name);
  const fs::path dir = tmp.path() / "out";
  try {
    generate(r.config.options(dir.string()));
    FAIL() << "accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(r.expect), std::string::npos) << e.what();
  }
  EXPECT_TRUE(!fs::exists(dir) || fs::is_empty(dir));
  if (r.name == "TransformerZero1") {
    // And through the binary: exit status 2.
    std::vector<std::string> args = r.config.args();
    args.insert(args.end(), {"--output_dir", dir.string()});
    EXPECT_EQ(run_binary(args, tmp.path() / "log"), 2) << read_file(tmp.path() / "log");
  }
}

INSTANTIATE_TEST_SUITE_P(Matrix, MatrixRefusal, ::testing::ValuesIn(refusals()),
                         [](const ::testing::TestParamInfo<Refusal>& info) {
                           return info.param.name;
                         });

// Found by this matrix: the seed transformer with --pipeline_schedule
// interleaved --virtual_stages 2 (pp 1, the only pp its single micro-batch
// allows) had a dependency cycle because its backward tensors were not
// marked as backward. Fixed; kept as a regression test.
TEST(MatrixRegression, TransformerInterleavedPp1) {
  Config c;
  c.schedule = "interleaved";
  c.vstages = 2;
  c.finalize();
  TempDir tmp("transformer_interleaved");
  ASSERT_NO_FATAL_FAILURE(generate_into(c, tmp.path() / "a", 2));
  expect_valid(c, tmp.path() / "a");
}

}  // namespace
}  // namespace stg::matrix
