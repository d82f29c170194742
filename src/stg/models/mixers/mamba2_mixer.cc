// The Mamba-2 mixer (Dao and Gu 2024, "Transformers are SSMs", its SSD
// layer; docs/models_2025.md "Mamba-2 hybrids") in place of attention, on
// the blocks a pattern chooses: --mamba_state N turns a decoder's blocks
// into Mamba-2 blocks, --attention_period / --attention_offset keep
// attention in every period-th block from the offset (Jamba: 8 / 4; IBM
// Granite 4.0-H: 10 / 5), each block still followed by its MLP or experts.
//
// One block, per token, H heads of P dims (d_inner = H·P), G groups of B and
// C of N (the state size), a causal convolution of width K over x, B and C:
//   in_proj  [z | x | B | C | dt] = x·W_in, width 2·H·P + 2·G·N + H;
//   conv     depthwise over the H·P + 2·G·N channels of x, B, C (2·K FLOPs each);
//   dt       softplus(dt + dt_bias), dA = exp(dt·A) (per head: dt_bias, A, D);
//   SSD      the chunked scan over chunks of Q tokens: per group C·B^T inside
//            each chunk (2·Q·N FLOPs per token), per head its masked product
//            with x (2·Q·P), the chunk states B^T·x (2·N·P) and their outputs
//            C·h (2·N·P), and the states passed between chunks (2·N·P per
//            chunk);
//   gate     y·silu(z), RMS-normed (a weight of d_inner), then out_proj
//            [d_inner -> hidden].
// Backward is twice the forward. Tensor parallelism splits heads and groups
// as Megatron-LM's Mamba layer does (G a multiple of tp): in_proj is column
// parallel, out_proj row parallel, so a block has attention's collectives.
// Serving keeps per sequence the state H·P·N and the convolution's last
// K-1 inputs (H·P + 2·G·N each) instead of a KV cache; a decode step reads
// and rewrites them and costs 4·H·P·N FLOPs per token (the state update
// h = exp(dt·A)·h + dt·x·B^T and the output C·h, a multiply-add each).
#include "stg/models/blocks/block_pattern.h"
#include "stg/models/flag_binding.h"
#include "stg/models/hf_fields.h"
#include "stg/models/mixers/mixer_row.h"

namespace stg::models {

namespace {

using graph::Graph;
using graph::Shape;

constexpr const char* kState = "--mamba_state";
constexpr const char* kHeads = "--mamba_heads";
constexpr const char* kHeadDim = "--mamba_head_dim";
constexpr const char* kGroups = "--mamba_groups";
constexpr const char* kConv = "--mamba_conv";
constexpr const char* kChunk = "--mamba_chunk";
constexpr const char* kPeriod = "--attention_period";
constexpr const char* kOffset = "--attention_offset";

extern const MixerRow kMamba2;

// A block's options: heads, head dim, state, groups, conv width, chunk.
struct Mamba {
  int64_t heads, head_dim, state, groups, conv, chunk;
  explicit Mamba(const std::vector<int64_t>& o)
      : heads(o.at(0)),
        head_dim(o.at(1)),
        state(o.at(2)),
        groups(o.at(3)),
        conv(o.at(4)),
        chunk(o.at(5)) {}
  int64_t inner() const { return heads * head_dim; }
  int64_t channels() const { return inner() + 2 * groups * state; }  // the conv's
  int64_t projected() const { return 2 * inner() + 2 * groups * state + heads; }
};

int64_t flag_or(const Options& o, const char* name, int64_t fallback) {
  const auto it = o.component_flags.find(name);
  return it == o.component_flags.end() ? fallback : it->second;
}

void place(DecoderSpec& d, const std::map<std::string, int64_t>& v, const Options& o,
           std::vector<std::string>& notes) {
  const auto& f = o.component_flags;
  if (!f.count(kState)) {
    for (const char* flag : {kHeads, kHeadDim, kGroups, kConv, kChunk, kPeriod, kOffset})
      if (f.count(flag))
        notes.push_back(std::string(flag) + " has no effect without --mamba_state");
    return;
  }
  const int64_t head_dim = flag_or(o, kHeadDim, 64);
  // Mamba-2's default expansion: d_inner = 2 x hidden.
  const int64_t heads = flag_or(o, kHeads, std::max<int64_t>(1, 2 * v.at("Dmodel") / head_dim));
  const int64_t seq = v.at("Seq");
  const int64_t chunk = std::min(flag_or(o, kChunk, 256), seq);
  require(seq % chunk == 0, "--seq " + num(seq) + " is not a multiple of --mamba_chunk " +
                                num(chunk) + ": the scan runs over whole chunks of the sequence");
  const std::vector<int64_t> options = {
      heads, head_dim, f.at(kState), flag_or(o, kGroups, 1), flag_or(o, kConv, 4), chunk};
  require(heads % options[3] == 0, "--mamba_groups " + num(options[3]) + " does not divide the " +
                                       num(heads) + " Mamba heads: each group serves whole heads");
  const int64_t period = flag_or(o, kPeriod, 0), offset = flag_or(o, kOffset, 0);
  require(period == 0 || offset < period,
          "--attention_offset " + num(offset) + " is not below --attention_period " + num(period));
  const BlockPattern attention{.period = period, .offset = offset};
  for (size_t i = 0; i < d.blocks.size(); ++i) {
    if (attention.has(i)) continue;
    d.blocks[i].mixer = &kMamba2;
    d.blocks[i].mixer_options = options;
  }
}

void check(const std::vector<int64_t>&, const std::map<std::string, int64_t>& v, const Options& o,
           const mesh::Degrees& degree) {
  const int64_t tp = degree["tp"], cp = degree["sp"];
  require(cp == 1, "--mamba_state with --cp " + num(cp) +
                       ": stg does not model a scan split over the sequence; use --cp 1");
  const int64_t groups = flag_or(o, kGroups, 1);
  require(groups % tp == 0, "--mamba_groups " + num(groups) + " is not divisible by --tp " +
                                num(tp) +
                                ": the B and C groups are split over tensor-parallel "
                                "ranks; give --mamba_groups a multiple of --tp");
  const int64_t heads = flag_or(o, kHeads, 2 * v.at("Dmodel") / flag_or(o, kHeadDim, 64));
  require(heads % tp == 0, "--mamba_heads " + num(heads) + " is not divisible by --tp " + num(tp) +
                               ": every tensor-parallel rank needs whole heads");
}

// The Granite 4.0-H / Bamba / Nemotron-H fields.
void read_hf(const HfConfig& cfg, std::map<std::string, int64_t>& flags) {
  const std::optional<int64_t> state = cfg.optional_size({"mamba_d_state", "ssm_state_size"});
  if (!state) return;
  flags[kState] = *state;
  const std::pair<const char*, std::vector<std::string>> fields[] = {
      {kHeads, {"mamba_n_heads", "mamba_num_heads"}},
      {kHeadDim, {"mamba_d_head", "mamba_head_dim"}},
      {kGroups, {"mamba_n_groups", "n_groups"}},
      {kConv, {"mamba_d_conv", "conv_kernel"}},
      {kChunk, {"mamba_chunk_size", "chunk_size"}}};
  for (const auto& [flag, names] : fields)
    if (const std::optional<int64_t> v = cfg.optional_size(names)) flags[flag] = *v;
  // Granite 4.0-H: "layer_types", "mamba" or "attention" per layer; Bamba:
  // "attn_layer_indices". Both as --attention_period / --attention_offset.
  std::string found;
  std::vector<int64_t> attention;
  int64_t layers = 0;
  if (const nlohmann::json* types = cfg.lookup({"layer_types"}, found);
      types && types->is_array()) {
    layers = static_cast<int64_t>(types->size());
    for (int64_t i = 0; i < layers; ++i)
      if ((*types)[static_cast<size_t>(i)] == "attention") attention.push_back(i);
  } else if (const nlohmann::json* at = cfg.lookup({"attn_layer_indices"}, found);
             at && at->is_array()) {
    for (const nlohmann::json& i : *at) {
      if (!i.is_number_integer() || i.get<int64_t>() < 0)
        cfg.fail("field '" + found + "' holds " + i.dump() + ": expected layer numbers >= 0");
      attention.push_back(i.get<int64_t>());
    }
  }
  if (attention.empty()) return;
  if (layers == 0) layers = cfg.optional_size({"num_hidden_layers"}).value_or(0);
  const int64_t offset = attention[0];
  const int64_t period = attention.size() > 1 ? attention[1] - attention[0] : layers + offset + 1;
  for (size_t k = 0; k < attention.size(); ++k)
    if (attention[k] != offset + static_cast<int64_t>(k) * period || period <= offset)
      cfg.fail("field '" + found +
               "' puts attention in layers that are not every N-th from an offset: stg models "
               "--attention_period and --attention_offset");
  flags[kPeriod] = period;
  flags[kOffset] = offset;
}

// Megatron-LM's Mamba layer keeps, per token and rank (2 bytes each): the
// in_proj output (z, x, B, C, dt), the convolution's output (x, B, C), the
// scan's output and the gated norm's output (the out_proj input).
report::ActivationBytes activations(const std::vector<int64_t>& options, const expr::Values&,
                                    double s, double b) {
  const Mamba m(options);
  const double kept = static_cast<double>(m.projected() + m.channels() + 2 * m.inner());
  return {.split = 2 * s * b * kept};
}

// The scan's forward FLOPs on a rank (see the top of the file).
expr::Expr scan_flops(const Mamba& m) {
  const Dims& d = dims();
  const expr::Expr tokens = d.batch_dp * d.seq;
  const expr::Expr per_token = c(2 * m.chunk * m.state * m.groups) +
                               c(m.heads * (2 * m.chunk * m.head_dim + 4 * m.state * m.head_dim));
  const expr::Expr between = c(2 * m.heads * m.state * m.head_dim) / c(m.chunk);
  return tokens * (per_token + between) / d.tp;
}

struct Shapes {
  Shape in_w, proj, xbc, dt, y, z, conv_w, head_w, norm_w, out_w, state;
};

Shapes shapes_of(const Mamba& m) {
  const Dims& d = dims();
  const expr::Expr per_tp = c(1) / d.tp;
  const expr::Expr proj = c(m.projected()) * per_tp, xbc = c(m.channels()) * per_tp;
  const expr::Expr heads = c(m.heads) * per_tp;
  const expr::Expr state = heads * c(m.head_dim * m.state) + c(m.conv - 1) * xbc;
  return {{d.hidden, proj},
          {d.batch_dp, d.seq_cp, proj},
          {d.batch_dp, d.seq_cp, xbc},
          {d.batch_dp, d.seq_cp, heads},
          {d.batch_dp, d.seq_cp, c(m.inner()) * per_tp},
          {d.batch_dp, d.seq_cp, c(m.inner()) * per_tp},
          {xbc, c(m.conv)},  // the convolution's weights
          {heads, c(3)},     // dt_bias, A, D
          {c(m.inner()) * per_tp},
          {c(m.inner()) * per_tp, d.hidden},
          {d.batch_dp, c(1), state}};
}

// The forward pass up to the scan's input; returns its output's name.
void add_forward(Graph& g, const Layout& l, const Mamba& m, const Shapes& s,
                 const std::string& scan, const KvCache& kv) {
  using namespace typed;
  const Dims& d = dims();
  input(g, "x", l.shape);
  weight(g, "win", s.in_w);
  einsum(g, "zxbcdt", "x", "win", "bsm,mn->bsn", l.full, s.in_w);
  slice(g, "z", "zxbcdt", 2, s.z[2], s.proj);
  slice(g, "xbc", "zxbcdt", 2, s.xbc[2], s.proj);
  slice(g, "dt", "zxbcdt", 2, s.dt[2], s.proj);
  weight(g, "wconv", s.conv_w);
  // The depthwise convolution: K multiply-adds per channel and token.
  einsum(g, "conv", "xbc", "wconv", "bsc,ck->bsc", s.xbc, s.conv_w);
  weight(g, "wheads", s.head_w);
  einsum(g, "dta", "dt", "wheads", "bsh,hk->bsh", s.dt, s.head_w);
  if (kv.phase == ServingPhase::kDecode) {
    // One token per sequence: read the state, update it, write it back.
    const int cache = input(g, "kv_cache", s.state);
    g.mutable_tensor_keep_result(cache).role = graph::Role::kPersistent;
    g.mutable_tensor_keep_result(cache).element_bytes = kv.element_bytes;
    const expr::Expr macs = d.batch_dp * d.seq * c(2 * m.heads * m.head_dim * m.state) / d.tp;
    const int step = custom(g, scan, "kv_cache", macs, s.state, s.y);
    flops(g, macs * c(2));
    g.mutable_tensor(step).extra_deps = {g.at("conv"), g.at("dta")};
    const int write = custom(g, "kv_append", scan, expr::product(s.state), s.y, s.state);
    g.mutable_tensor(write).element_bytes = kv.element_bytes;
    return;
  }
  const expr::Expr f = scan_flops(m);
  const int ssd = custom(g, scan, "conv", f / c(2), s.xbc, s.y);
  flops(g, f);
  g.mutable_tensor(ssd).extra_deps = {g.at("dta")};
  if (kv.phase != ServingPhase::kPrefill) return;
  // The prefill leaves each sequence's final state and conv inputs.
  const int cache = input(g, "kv_cache", s.state);
  g.mutable_tensor_keep_result(cache).role = graph::Role::kPersistent;
  g.mutable_tensor_keep_result(cache).element_bytes = kv.element_bytes;
  const int write = custom(g, kStateWritePort, scan, expr::product(s.state), s.y, s.state);
  g.mutable_tensor(write).element_bytes = kv.element_bytes;
}

// The gate, norm and out_proj, and the backward pass.
void add_output_and_backward(Graph& g, const Layout& l, const Mamba& m, const Shapes& s,
                             const std::string& scan) {
  using namespace typed;
  const Dims& d = dims();
  constexpr int kGateOps = 4;  // silu(z) and the product, per element
  elementwise2(g, "gated", scan, "z", kGateOps, s.y);
  weight(g, "wnorm", s.norm_w);
  einsum(g, "normed", "gated", "wnorm", "bsi,i->bsi", s.y, s.norm_w);
  weight(g, "wout", s.out_w);
  einsum(g, "o1", "normed", "wout", "bsi,in->bsn", s.y, s.out_w);
  identity(g, "o", "o1", l.shape);
  const int b = static_cast<int>(g.size());
  input(g, "do", l.shape, "o");
  identity(g, "do1", "do", l.full, "o1");
  einsum(g, "dnormed", "do1", "wout", "bsn,in->bsi", l.full, s.out_w, "normed");
  einsum(g, "dwout", "do1", "normed", "bsn,bsi->in", l.full, s.y, "wout");
  einsum(g, "dgated", "dnormed", "wnorm", "bsi,i->bsi", s.y, s.norm_w, "gated");
  einsum(g, "dwnorm", "dnormed", "gated", "bsi,bsi->i", s.y, s.y, "wnorm");
  elementwise(g, "dy", "dgated", kGateOps, s.y, scan);
  elementwise(g, "dz", "dgated", kGateOps, s.z, "z");
  const expr::Expr f = scan_flops(m);  // backward: twice the forward
  custom(g, "dconv", "dy", f, s.y, s.xbc);
  flops(g, f * c(2));
  g.grad_of("conv");
  custom(g, "ddta", "dy", expr::product(s.dt), s.y, s.dt);
  g.grad_of("dta");
  einsum(g, "ddt", "ddta", "wheads", "bsh,hk->bsh", s.dt, s.head_w, "dt");
  // The small weights' gradients sum over the tokens (partial over dp).
  const int dw_heads =
      custom(g, "dwheads", "ddta", expr::product(s.dt), s.dt, s.head_w, {d.batch_dp, d.seq_cp});
  g.grad_of("wheads");
  g.mutable_tensor_keep_result(dw_heads).role = graph::Role::kGradient;
  einsum(g, "dxbc", "dconv", "wconv", "bsc,ck->bsc", s.xbc, s.conv_w, "xbc");
  const expr::Expr conv_macs = expr::product(s.xbc) * c(m.conv);
  const int dw_conv =
      custom(g, "dwconv", "dconv", conv_macs, s.xbc, s.conv_w, {d.batch_dp, d.seq_cp});
  flops(g, conv_macs * c(2));
  g.grad_of("wconv");
  g.mutable_tensor_keep_result(dw_conv).role = graph::Role::kGradient;
  const Shape zx = {d.batch_dp, d.seq_cp, s.z[2] + s.xbc[2]};
  slice(g, "dzx", "dz", 2, zx[2], s.z, "dxbc", s.xbc);
  slice(g, "dproj", "dzx", 2, s.proj[2], zx, "ddt", s.dt);
  g.grad_of("zxbcdt");
  einsum(g, "dwin", "dproj", "x", "bsn,bsm->mn", s.proj, l.full, "win");
  einsum(g, "dx1", "dproj", "win", "bsn,mn->bsm", s.proj, s.in_w);
  identity(g, "dx", "dx1", l.shape);
  g.mark_backward_from(b);
}

Graph build(const Layout& l, const BlockSpec& spec, const PartChoices&, const ContextParallel&,
            const KvCache& kv) {
  const Mamba m(spec.mixer_options);
  const Shapes s = shapes_of(m);
  // The decode step's kernel is the port serving links a block's received
  // states to.
  const std::string scan = kv.phase == ServingPhase::kDecode ? kStateReadPort : "ssd";
  Graph g;
  add_forward(g, l, m, s, scan, kv);
  add_output_and_backward(g, l, m, s, scan);
  return g;
}

const MixerRow kMamba2 = {
    "mamba2",
    "mamba",
    {{kState,
      "Mamba-2 blocks: the SSM state size N per head (Granite 4.0-H, Nemotron-H: 128); each "
      "block's attention becomes a Mamba-2 mixer",
      "none: attention", 1},
     {kHeads, "with --mamba_state: Mamba-2 heads", "2 x --dmodel / --mamba_head_dim", 1},
     {kHeadDim, "with --mamba_state: dims per Mamba-2 head", "64", 1},
     {kGroups, "with --mamba_state: groups of B and C (a multiple of --tp)", "1", 1},
     {kConv, "with --mamba_state: the causal convolution's width", "4", 1},
     {kChunk, "with --mamba_state: tokens per chunk of the SSD scan", "256", 1},
     {kPeriod,
      "with --mamba_state: every N-th block keeps attention (Jamba: 8, Granite 4.0-H: 10; 0: "
      "none)",
      "0", 0},
     {kOffset, "with --attention_period: the first block that keeps attention (from 0)", "0", 0}},
    place,
    check,
    read_hf,
    activations,
    build,
    ServingState::kRecurrent,
};

}  // namespace

const MixerRow& mamba2_row() { return kMamba2; }

}  // namespace stg::models
