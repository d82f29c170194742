// The decoder families' workloads (gpt alias dense, llama, moe; the later
// reference's models): the flags checked and bound, the family's blocks
// built (models/decoder.h).
#include "stg/frameworks/framework.h"
#include "stg/models/decoder.h"
#include "stg/models/families/registry.h"
#include "stg/models/flag_binding.h"

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
                          const frameworks::Framework& f) {
  const auto& v = values.by_symbol;
  const int64_t tp = degree["tp"], ep = degree["ep"];
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
  require(v.at("Dmodel") % v.at("Head") == 0,
          "--dmodel " + num(v.at("Dmodel")) + " is not divisible by --head " + num(v.at("Head")) +
              ": every attention head needs a whole head dimension (--dmodel / --head)");
  if (d.any(AttentionKind::kGqa)) {
    require(v.at("Head") % v.at("KVHead") == 0, "--kvhead " + num(v.at("KVHead")) +
                                                    " does not divide --head " + num(v.at("Head")) +
                                                    ": query heads are shared by whole groups");
    require(v.at("KVHead") % tp == 0, "--kvhead " + num(v.at("KVHead")) +
                                          " is not divisible by --tp " + num(tp) +
                                          ": every tensor-parallel rank needs whole KV heads");
  }
  f.check_decoder(o, d, micro);
  if (d.any(BlockKind::kMoe)) {
    require(v.at("Experts") % ep == 0, "--experts " + num(v.at("Experts")) +
                                           " is not divisible by --ep " + num(ep) +
                                           ": every expert-parallel rank holds whole experts");
    // Each expert of a rank is a part of the graph of its own (1,024 of one
    // block take seconds).
    constexpr int64_t kMaxExpertsPerRank = 1024;
    require(v.at("Experts") / ep <= kMaxExpertsPerRank,
            "--experts " + num(v.at("Experts")) + " / --ep " + num(ep) + " is " +
                num(v.at("Experts") / ep) + " experts per rank: use at most " +
                num(kMaxExpertsPerRank) + " (a larger --ep, or fewer --experts)");
    require(v.at("KExperts") <= v.at("Experts"),
            "--kexperts " + num(v.at("KExperts")) + " is larger than --experts " +
                num(v.at("Experts")) + ": a token cannot pick more experts than exist");
  }
}

// The dimension symbols of the decoders, bound; returns the micro-batch.
int64_t bind_decoder_dims(Workload& w, const Options& o) {
  const int64_t batch = o.batch.value_or(64);
  // -1 is the reference's spelling of "no micro-batching".
  const int64_t micro = o.micro_batch.value_or(-1) == -1 ? batch : *o.micro_batch;
  bind_dims(w, {{"Dvocal", "--dvocal", o.dvocal, 32000},
                {"Dmodel", "--dmodel", o.dmodel, 8192},
                {"Dff", "--dff", o.dff, 28672},
                {"Batch", "--batch", batch, 64},
                {"MicroBatch", "--micro_batch", micro, batch},
                {"Seq", "--seq", o.seq, 1024},
                {"Head", "--head", o.head, 64},
                {"KVHead", "--kvhead", o.kvhead, 8},
                {"Experts", "--experts", o.experts, 8},
                {"KExperts", "--kexperts", o.kexperts, 2}});
  return micro;
}

}  // namespace

Workload decoder_workload(const Options& o, const frameworks::Framework& f) {
  return decoder_workload(o, f, family_of(o));
}

Workload decoder_workload(const Options& o, const frameworks::Framework& f, const Family& family) {
  const std::string& type = family.name;
  // The blocks (one when --num_stacks is not valid: refused below).
  const int64_t stacks = o.num_stacks.value_or(80);
  Workload w;
  w.decoder = family.decoder(o, stacks >= 1 ? static_cast<int>(stacks) : 1);
  const bool moe = w.decoder.any(BlockKind::kMoe);
  // The reference accepts these for every model and ignores some of them:
  // stay compatible with its command lines, but say so instead of ignoring.
  auto note = [&](bool given, const std::string& flag) {
    if (given) w.notes.push_back(flag + " has no effect with --model_type " + type);
  };
  if (!moe) {
    note(o.experts.has_value(), "--experts");
    note(o.kexperts.has_value(), "--kexperts");
  }
  require(!o.din.has_value() && !o.dout.has_value(),
          "--din/--dout belong to --model_type transformer: use --dvocal for " + type);
  const int64_t batch = o.batch.value_or(64);
  const int64_t micro = bind_decoder_dims(w, o);
  // The reference's dense path multiplies tp by ep; moe has ep as its own axis.
  mesh::Degrees degree = o.degree;
  if (!moe) degree["tp"] *= degree["ep"];
  const int64_t tp = degree["tp"], dp = degree["dp"], ep = degree["ep"], pp = degree.stages();
  f.adjust_decoder_dims(w, o, tp);
  const auto& v = w.values.by_symbol;
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
  const bool tpsp = o.tpsp.value_or(true);
  require(tpsp || !moe,
          "--tpsp 0 is not available for --model_type moe: its layouts need "
          "sequence-sharded activations (use --tpsp 1)");
  check_parallel_split(w.values, o, w.decoder, degree, micro, tpsp, f);
  if (!w.decoder.any(AttentionKind::kGqa))
    note(o.kvhead.has_value(), "--kvhead (grouped-query attention is --model_type llama)");
  w.zero_stage = zero_stage(o);
  const MegatronParts megatron = f.decoder_parts(o, w.decoder, w.zero_stage);
  w.model = build_decoder({.spec = w.decoder,
                           .tpsp = tpsp,
                           .experts_per_rank = moe ? static_cast<int>(v.at("Experts") / ep) : 0,
                           .megatron = megatron});
  w.micro_batches = static_cast<int>(batch / micro);
  w.bindings = zero_bindings(w.zero_stage);
  w.micro_batch_renames = {{"Batch", expr::Expr::symbol("MicroBatch")}};
  bind_axes(w, degree, {Spelling::kLater});
  if (megatron.tied_stages_apart)
    w.embedding_group = w.mesh.add_stage_group({"embedding", {0, w.mesh.stages() - 1}});
  check_weight_dims(w);
  return w;
}

}  // namespace stg::models
