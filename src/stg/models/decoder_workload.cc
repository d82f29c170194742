// The decoder families' workloads (gpt alias dense, llama, moe; the later
// reference's models): the flags checked and bound, the family's blocks
// built (models/decoder.h).
#include <algorithm>

#include "stg/lower/schedule.h"
#include "stg/models/decoder.h"
#include "stg/models/families/registry.h"
#include "stg/models/flag_binding.h"
#include "stg/models/mixers/mixer_row.h"
#include "stg/models/mlps/mlp_row.h"

namespace stg::models {

namespace {

// Every dimension of every weight must be whole on its rank: a vocabulary of
// 50257 rows cannot be split over 8 tensor-parallel ranks. (Dimensions with
// symbols that passes bind, such as the FSDP shard count, and activations are
// checked by their sizes when the stages are lowered.)
void check_weight_dims(const Workload& w) {
  const graph::Graph& g = w.model.graph;
  const auto bound = [&](const expr::Expr& dim) {
    for (const std::string& s : dim.free_symbols())
      if (!w.values.by_symbol.count(s)) return false;
    return true;
  };
  for (size_t i = 0; i < g.size(); ++i) {
    if (g[i].role != graph::Role::kWeight) continue;
    for (const expr::Expr& dim : g.result(static_cast<int>(i)).y_shape) {
      if (!bound(dim)) continue;
      try {
        expr::whole_count(dim, w.values, "a dimension of weight " + g[i].name);
      } catch (const expr::SizeError& e) {
        throw UsageError(e.what());
      }
    }
  }
}

// Every tensor-parallel, sequence and expert split is whole (the dims
// bound; `degree` with the dense models' tp x ep).
void check_parallel_split(const expr::Values& values, const Options& o, const DecoderSpec& d,
                          const mesh::Degrees& degree, int64_t micro, bool tpsp,
                          const DecoderPolicy& f) {
  const auto& v = values.by_symbol;
  const int64_t tp = degree["tp"];
  if (tpsp)
    require(v.at("Seq") % (degree["sp"] * tp) == 0,
            "--seq " + num(v.at("Seq")) + " is not divisible by --sp * --tp = " +
                num(degree["sp"] * tp) + ": with --tpsp 1 the sequence is split over both");
  require(v.at("Head") % tp == 0, "--head " + num(v.at("Head")) + " is not divisible by --tp " +
                                      num(tp) + ": every tensor-parallel rank needs whole heads");
  // The FFN weights are stored flat, so check_weight_dims cannot see Dff/tp.
  require(v.at("Dff") % tp == 0, "--dff " + num(v.at("Dff")) + " is not divisible by --tp " +
                                     num(tp) +
                                     ": every tensor-parallel rank needs a whole share of the FFN");
  check_mixers(d, v, o, degree);
  check_cp_algo(d, v, o, degree);
  f.check_decoder(o, d, micro);
  check_mlps(d, v, o, degree);
}

// The dimensions only some blocks have (BlockSpec), bound when a block
// has them, so that the other models' values stay as they were.
void bind_block_dims(Workload& w, const Options& o) {
  const DecoderSpec& d = w.decoder;
  const auto& v = w.values.by_symbol;
  std::vector<Dim> dims = mixer_dims(d, v, o);
  for (const Dim& m : mlp_dims(d, v, o)) dims.push_back(m);
  bind_dims(w, dims);
}

// Flags that no block of this model reads: the experts row's dimensions
// (--experts, --kexperts) without a MoE block, then the 2025-26 families'.
void note_unread(Workload& w, const Options& o, const Family& family, bool moe) {
  auto note = [&](bool given, const std::string& flag) {
    if (given) w.notes.push_back(flag + " has no effect with --model_type " + family.name);
  };
  for (const RowFlag& flag : experts_row().flags)
    if (flag.symbol) note(row_flag(o, flag.flag).has_value() && !moe, flag.flag);
  note_unread_mixers(w.decoder, o, family.name, w.notes);
  // The MoE families lay out their blocks with them (families/expert_layout.h).
  for (const RowFlag& flag : experts_row().flags)
    if (!flag.symbol) note(row_flag(o, flag.flag).has_value() && !family.reads_experts, flag.flag);
  note(o.dense_blocks.has_value() && !family.reads_experts, "--dense_blocks");
}

// --mtp_depth modules after the last block, each with a block like the
// last one (DeepSeek-V3: MLA and experts).
void add_mtp_modules(DecoderSpec& d, const Options& o) {
  const int64_t depth = o.mtp_depth.value_or(0);
  require(
      depth >= 0 && depth <= kMaxStacks,
      "--mtp_depth " + num(depth) + " is not valid: use an integer from 0 to " + num(kMaxStacks));
  BlockSpec module = d.blocks.back();
  module.kind = BlockKind::kMtp;
  d.mtp.assign(static_cast<size_t>(depth), module);
}

// The dimension symbols of the decoders, bound; returns the micro-batch.
int64_t bind_decoder_dims(Workload& w, const Options& o) {
  const int64_t batch = o.batch.value_or(64);
  // -1 is the reference's spelling of "no micro-batching".
  const bool micro_given = o.micro_batch.value_or(-1) != -1;
  const int64_t micro = micro_given ? *o.micro_batch : batch;
  // Without --micro_batch the micro-batch is the batch: messages name --batch.
  bind_dims(w, {{"Dvocal", "--dvocal", o.dvocal, 32000},
                {"Dmodel", "--dmodel", o.dmodel, 8192},
                {"Dff", "--dff", o.dff, 28672},
                {"Batch", "--batch", batch, 64},
                {"MicroBatch", micro_given ? "--micro_batch" : "--batch", micro, batch},
                {"Seq", "--seq", o.seq, 1024},
                {"Head", "--head", o.head, 64}});
  // The dimensions the rows declare for every decoder (row_flag.h).
  for (const RowFlag* f : component_row_flags())
    if (f->symbol) bind_dims(w, {{f->symbol, f->flag, row_flag(o, f->flag), f->decoder_default}});
  bind_block_dims(w, o);
  return micro;
}

// The batch splits into whole micro-batches and data-parallel shares, and
// every pipeline stage has a block or an embedding.
void check_batch_and_stages(const Options& o, int64_t batch, int64_t micro, int64_t dp,
                            int64_t stacks, int64_t pp) {
  require(batch % micro == 0, "--batch " + num(batch) + " is not divisible by --micro_batch " +
                                  num(micro) +
                                  ": choose a micro-batch size that divides the batch");
  // Without --micro_batch the whole batch is the one micro-batch: name the
  // flag the user gave.
  const bool micro_given = o.micro_batch.value_or(-1) != -1;
  require(micro % dp == 0, micro_given
                               ? "--micro_batch " + num(micro) + " is not divisible by --dp " +
                                     num(dp) + ": each data-parallel rank needs a whole share"
                               : "--batch " + num(batch) + " is not divisible by --dp " + num(dp) +
                                     ": each data-parallel rank needs a whole share of the batch");
  require(stacks >= 1, "--num_stacks " + num(stacks) + " is not valid: use >= 1");
  require(pp <= stacks + 2, "--pp " + num(pp) + " is larger than --num_stacks " + num(stacks) +
                                " + 2: every stage needs a block or an embedding");
}

// The mesh's groups beyond the axes: the stages that share the embedding,
// DualPipe's mirrored stages and the dp x cp product gradients reduce over.
void add_groups(Workload& w, const Options& o, const PartChoices& choices,
                const mesh::Degrees& degree, bool ends_apart) {
  const int64_t pp = degree.stages();
  // Tied embeddings, or the input embedding's copy on the multi-token
  // prediction modules' stage (models/parts/mtp_vocabulary.h).
  if (choices.tied_stages_apart || (!w.decoder.mtp.empty() && ends_apart))
    w.embedding_group = w.mesh.add_stage_group({"embedding", {0, w.mesh.stages() - 1}});
  // DualPipe's two copies of each pipeline stage's parameters: stages i and pp-1-i.
  if (lower::mirrors_model(o.pipeline_schedule))
    for (int64_t s = 0; s < pp / 2; ++s) {
      const int group = w.mesh.add_stage_group({"dualpipe", {s, pp - 1 - s}});
      if (s == 0) w.mirror_group = group;
    }
  if (choices.reduce_over_dp_cp && degree["dp"] > 1 && degree["sp"] > 1)
    w.mesh.add_axis_product({"dp x cp", {w.mesh.find("dp"), w.mesh.find("sp")}});
}

}  // namespace

Workload decoder_workload(const Options& o, const DecoderPolicy& f) {
  return decoder_workload(o, f, family_of(o));
}

Workload decoder_workload(const Options& o, const DecoderPolicy& f, const Family& family) {
  return decoder_workload(o, f, family, build_decoder);
}

Workload decoder_workload(const Options& o, const DecoderPolicy& f, const Family& family,
                          const DecoderBuilder& build) {
  const std::string& type = family.name;
  // The blocks (one when --num_stacks is not valid: refused below).
  const int64_t stacks = o.num_stacks.value_or(80);
  Workload w;
  w.decoder = family.decoder(o, stacks >= 1 ? static_cast<int>(stacks) : 1);
  const bool moe = w.decoder.any(BlockKind::kMoe);
  // The reference accepts these for every model and ignores some of them:
  // stay compatible with its command lines, but say so instead of ignoring.
  note_unread(w, o, family, moe);
  require(!o.din.has_value() && !o.dout.has_value(),
          "--din/--dout belong to --model_type transformer: use --dvocal for " + type);
  const int64_t batch = o.batch.value_or(64);
  const int64_t micro = bind_decoder_dims(w, o);
  // The rows' mixers on the blocks their flags choose; a multi-token
  // prediction module's block is like the last block.
  place_mixers(w.decoder, w.values.by_symbol, o, w.notes);
  add_mtp_modules(w.decoder, o);
  // The reference's dense path multiplies tp by ep; moe has ep as its own axis.
  mesh::Degrees degree = o.degree;
  if (!moe) degree["tp"] *= degree["ep"];
  const int64_t tp = degree["tp"], dp = degree["dp"], ep = degree["ep"], pp = degree.stages();
  f.adjust_decoder_dims(w, o, tp);
  const auto& v = w.values.by_symbol;
  check_batch_and_stages(o, batch, micro, dp, stacks, pp);
  const bool tpsp = o.tpsp.value_or(true);
  require(tpsp || !moe,
          "--tpsp 0 is not available for --model_type moe: its layouts need "
          "sequence-sharded activations (use --tpsp 1)");
  check_parallel_split(w.values, o, w.decoder, degree, micro, tpsp, f);
  w.zero_stage = zero_stage(o);
  const PartChoices choices = f.decoder_parts(o, w.decoder, w.zero_stage);
  // Under DualPipeV the first and the last part share stage 0.
  const bool ends_apart = pp > 1 && !lower::v_shaped(o.pipeline_schedule);
  w.model = build({.spec = w.decoder,
                   .tpsp = tpsp,
                   .experts_per_rank = moe ? static_cast<int>(v.at("Experts") / ep) : 0,
                   .choices = choices,
                   .cp = {o.cp_algo, static_cast<int>(degree["sp"])},
                   .ends_apart = ends_apart});
  w.micro_batches = static_cast<int>(batch / micro);
  w.bindings = zero_bindings(w.zero_stage);
  w.micro_batch_renames = {{"Batch", expr::Expr::symbol("MicroBatch")}};
  bind_axes(w, degree, {Spelling::kLater});
  add_groups(w, o, choices, degree, ends_apart);
  check_weight_dims(w);
  return w;
}

}  // namespace stg::models
