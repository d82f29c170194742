// Everything the generator needs to know, as given on the command line
// (already parsed: choices are enums; parse_* turn flag text into them).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "stg/hardware/gpus.h"
#include "stg/hardware/roofline.h"
#include "stg/lower/schedule.h"
#include "stg/mesh/axes.h"
#include "stg/trace_format.h"

namespace stg {

// Bad input: the message names the flag and what would be valid. The
// command exits with status 2 and writes nothing.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Refuses bad input: a UsageError with `message` (the flag and the fix).
inline void require(bool ok, const std::string& message) {
  if (!ok) throw UsageError(message);
}

enum class Units { kStg, kPhysical };  // elements and MACs, or bytes and FLOPs
enum class DType { kFp32, kBf16, kFp16, kFp8 };
// What the backward pass recomputes: nothing, every block's forward, or only
// the attention core (Korthikanti et al.'s selective recomputation).
enum class Recompute { kNone, kFull, kSelective };

const char* dtype_name(DType dtype);  // "bf16", as --dtype spells it
int64_t dtype_bytes(DType dtype);

// Upper bounds of integer flags (generate() refuses more; the command line
// refuses text beyond them before converting it).
inline constexpr int64_t kMaxRanks = 2147483647;  // Chakra's comm_src/comm_dst are int32
inline constexpr int kMaxThreads = 1024;          // writer threads
inline constexpr int64_t kMaxStacks = 10000;      // blocks: 10,000 take ~1 GB and ~17 s

// `stg infer` (docs/inference.md): one serving iteration of the model instead
// of a training step: the prefill of `requests` prompts of `prompt_len`
// tokens and/or `decode_steps` steps of one token per request with a KV
// cache of kv_dtype; the plan must fit `hbm_gb` per rank.
struct Serving {
  // Without the prefill (`prefill` false) the decode steps start from
  // caches that hold the prompts already.
  bool prefill = true;
  int64_t requests = 64;
  int64_t prompt_len = 2048;
  int64_t decode_steps = 128;
  DType kv_dtype = DType::kBf16;
  double hbm_gb = 80;  // an H100's HBM
  // The roofline of the per-phase figures (stg validate's defaults).
  hardware::RooflineFigures roofline;
  // --disaggregate P:D: the prefill on P replicas of the plan, the decode
  // steps on D others (0:0: on the same ranks).
  int64_t prefill_replicas = 0, decode_replicas = 0;
  bool disaggregated() const { return prefill_replicas > 0; }
};

struct Options {
  std::string output_dir = ".";
  std::string output_name = "workload.%d.et";
  // Keep an --output_name that ASTRA-sim cannot open (PREFIX.<rank>.et).
  bool allow_any_name = false;
  std::optional<std::string> comm_group_file;
  // --astra_sim DIR: also write ASTRA-sim's network, system and remote-memory
  // configurations and run.sh next to the traces (emit/astra_sim_inputs.h);
  // DIR is output_dir. network_dims: "2,4" overrides the network's
  // dimensions ("": one per parallel axis of degree > 1).
  bool astra_sim = false;
  std::string network_dims;
  emit::Schema schema = emit::Schema::kV004;
  emit::TraceDetail trace_detail = emit::TraceDetail::kFull;  // full or sim

  mesh::Degrees degree;  // by axis (mesh/axes.h): degree["dp"]
  // How attention crosses the context-parallel axis: a name of the cp
  // algorithm table (models/parts/context_parallel.h; --cp_algo).
  std::string cp_algo = "allgather";
  bool weight_sharded = false;
  std::optional<int> zero_stage;  // 0-3; 3 is --weight_sharded 1

  // The model family, a name of the family registry
  // (models/families/registry.h; --model_type); unset: the seed's
  // transformer (presets and HF configs may choose one).
  std::optional<std::string> model;
  std::string module_csv;  // a reference-format sharding spreadsheet as the model
  // Model dimensions; unset ones take the model type's defaults.
  std::optional<int64_t> din, dout, dmodel, dff, seq, head, num_stacks, batch;
  std::optional<int64_t> dvocal, micro_batch;
  std::optional<bool> tpsp, mixed_precision, print_gpu_vram;
  // Decoder structure of the 2025-26 families (docs/models_2025.md): the
  // first blocks dense, and pipeline stages split by cost instead of by
  // block count.
  std::optional<int64_t> dense_blocks;
  bool pp_balance_cost = false;
  // Multi-token prediction (DeepSeek-V3): the MTP modules after the last
  // block, each predicting one token further (unset or 0: none).
  std::optional<int64_t> mtp_depth;
  // The model's own choice of one weight for the input and output embedding
  // (a preset's or a config's tie_word_embeddings); --tie_embeddings wins.
  std::optional<bool> model_tied_embeddings;
  std::optional<Recompute> activation_recompute;
  // The flags of the component rows (models/row_flag.h: the attention's
  // --kvhead and --head_dim, MLA's dims, the experts' counts and widths,
  // --window, ...),
  // by flag name, as given: each row declares, checks and reads its own.
  std::map<std::string, int64_t> component_flags;

  // Whose training step the trace models: a name of the framework registry
  // (frameworks/registry.h), e.g. the reference generator's or Megatron-LM's.
  std::string framework = "reference";
  // --framework megatron only: the input and output embedding share one
  // weight (default: on for gpt, off for llama and moe); attention charged
  // for the causal half only; the element type of gradients (fp32).
  std::optional<bool> tie_embeddings;
  std::optional<bool> causal_saving;
  std::optional<DType> grad_dtype;
  // Megatron-LM pads the vocabulary to a multiple of this x tp (its
  // --make-vocab-size-divisible-by, default 128); 1: no padding.
  std::optional<int64_t> make_vocab_size_divisible_by;

  lower::Schedule pipeline_schedule = lower::Schedule::kNone;
  int virtual_stages = 1;  // chunks per stage (interleaved)

  std::optional<Units> units;  // unset: the framework's (stg, or physical under megatron)
  std::optional<DType> dtype;  // bytes per element for --units physical (unset: bf16)

  // "A-B" or "A-B,C,D-E": write only these ranks (same bytes as a full run).
  std::string ranks;
  // The first rank of every pipeline stage must be among them (a replay of
  // one rank per stage reads them: --print_makespan).
  bool needs_first_rank_of_each_stage = false;
  // --shard i/n: write the i-th of n contiguous rank ranges (same bytes as a
  // full run); only shard 0 writes the comm-group file.
  int64_t shard_index = 0, shard_count = 1;
  int threads = 0;  // 0: one per core

  // Pass pipeline inspection: --dump_after PASS writes the graph after that
  // pass as <output_dir>/<PASS>.csv.
  std::string dump_after;

  // `stg infer`: a serving iteration (unset: a training step).
  std::optional<Serving> serving;

  // --gpu NAME (hardware/gpus.h): the roofline, memory and ASTRA-sim
  // network figures of that GPU (null: the H100-like defaults).
  const hardware::Gpu* gpu = nullptr;
  // --compute_time: compute nodes timed at the roofline of their FLOPs and
  // bytes (the default), or each also carrying duration_micros from the
  // kernel model (hardware/kernel_model.h; docs/kernel-model.md) on --gpu's
  // row (h100-sxm without --gpu), which ASTRA-sim replays with its roofline
  // off.
  enum class ComputeTime { kRoofline, kModel };
  ComputeTime compute_time = ComputeTime::kRoofline;

  Recompute recompute() const { return activation_recompute.value_or(Recompute::kNone); }
};

// Refuses values beyond the upper bounds above (UsageError naming the flag
// and the bound): more ranks than kMaxRanks (the product of the degrees,
// once each is >= 1), more threads than kMaxThreads, more blocks than
// kMaxStacks.
void check_limits(const Options& o);

}  // namespace stg
