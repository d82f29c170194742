// Routed experts as an MLP row (models/parts/moe.h builds them): a router,
// Experts experts of which KExperts are chosen per token, split over ep;
// options (ExpertOptions): gated experts, of a width of their own
// (DffExpert), with SharedExperts shared experts on every token. Its flags:
// --experts and --kexperts (dimensions of every decoder, row_flag.h), and
// --dff_expert and --shared_experts, which set the options of the MoE
// families' blocks (flagged_options; families/expert_layout.h).
#include "stg/models/mlps/mlp_row.h"
#include "stg/models/parts/moe.h"

namespace stg::models {

namespace {

constexpr const char* kExpertsFlag = "--experts";
constexpr const char* kKExpertsFlag = "--kexperts";
constexpr const char* kDffExpert = "--dff_expert";
constexpr const char* kSharedExperts = "--shared_experts";

graph::Graph build(const Layout&, const std::vector<int64_t>& options, const PartChoices& choices,
                   int experts_per_rank, FfnPorts& ports) {
  const ExpertOptions e = ExpertOptions::of(options);
  const MoePorts p = moe_ports(e);
  ports = {"", "moe.x", p.y, "moe.dy", p.dx};
  return moe_ffn(e, experts_per_rank, choices.experts_carved_from_dp);
}

void dims(const std::vector<int64_t>& options, const std::map<std::string, int64_t>& v,
          const Options& o, std::vector<Dim>& out) {
  const ExpertOptions e = ExpertOptions::of(options);
  if (e.own_width) out.push_back({"DffExpert", kDffExpert, row_flag(o, kDffExpert), v.at("Dff")});
  if (e.shared) out.push_back({"SharedExperts", kSharedExperts, row_flag(o, kSharedExperts), 1});
}

// An expert width of their own when --dff_expert is given, shared experts
// when --shared_experts is > 0.
std::vector<int64_t> flagged_options(const std::vector<int64_t>& options, const Options& o) {
  ExpertOptions e = ExpertOptions::of(options);
  e.own_width = e.own_width || row_flag(o, kDffExpert).has_value();
  e.shared = row_flag(o, kSharedExperts).value_or(0) > 0;
  return e.list();
}

void check(const std::vector<int64_t>& options, const std::map<std::string, int64_t>& v,
           const Options&, const mesh::Degrees& degree) {
  const ExpertOptions e = ExpertOptions::of(options);
  const int64_t tp = degree["tp"], ep = degree["ep"];
  if (e.own_width)
    require(v.at("DffExpert") % tp == 0,
            "--dff_expert " + num(v.at("DffExpert")) + " is not divisible by --tp " + num(tp) +
                ": every tensor-parallel rank needs a whole share of each expert");
  if (e.shared) {
    const int64_t width = v.at("SharedExperts") * (e.own_width ? v.at("DffExpert") : v.at("Dff"));
    require(width % tp == 0, "--shared_experts " + num(v.at("SharedExperts")) +
                                 " x the expert width (" + num(width) +
                                 ") is not divisible by --tp " + num(tp) +
                                 ": every tensor-parallel rank needs a whole share");
  }
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

// Korthikanti et al.'s count for k experts per token: the dispatched tokens
// gathered over tp (whole); GeLU in and out, or SwiGLU's [gate|up] and
// output (f split over tp), and the expert outputs; the shared experts'
// SwiGLU over every token.
report::ActivationBytes activations(const std::vector<int64_t>& options, const expr::Values& values,
                                    double s, double b) {
  const ExpertOptions e = ExpertOptions::of(options);
  auto value = [&](const char* symbol) { return report::bound_value(values, symbol, 1); };
  const double sbh = s * b * value("Dmodel"), sbf = s * b * value("Dff");
  const double k = value("KExperts");
  const double sbf_e = e.own_width ? s * b * value("DffExpert") : sbf;
  double mlp = k * ((e.gated ? 6 : 4) * sbf_e + 2 * sbh);
  if (e.shared) mlp += 6 * sbf_e * value("SharedExperts");
  return {.split = mlp, .whole = 2 * k * sbh};
}

const MlpRow kExperts = {
    .name = "experts",
    .flags = {{.flag = kExpertsFlag,
               .help = "experts per MoE layer",
               .fallback = "refused / 8",
               .least = 1,
               .command_line_least = false,
               .listed_after = "--num_stacks",
               .decoders_only = false,
               .symbol = "Experts",
               .decoder_default = 8},
              {.flag = kKExpertsFlag,
               .help = "experts chosen per token",
               .fallback = "refused / 2",
               .least = 1,
               .command_line_least = false,
               .listed_after = kExpertsFlag,
               .decoders_only = false,
               .symbol = "KExperts",
               .decoder_default = 2},
              {.flag = kDffExpert,
               .help = "each expert's FFN width (MoE families; default --dff)",
               .fallback = "refused / --dff",
               .least = 1,
               .command_line_least = false,
               .listed_after = "--head_dim",
               .decoders_only = false},
              {.flag = kSharedExperts,
               .help = "experts every token passes through besides its --kexperts (MoE families)",
               .fallback = "refused / 0",
               .least = 0,
               .command_line_least = false,
               .listed_after = kDffExpert,
               .decoders_only = false}},
    .experts = true,
    .build = build,
    .flagged_options = flagged_options,
    .dims = dims,
    .check = check,
    .activations = activations,
};

}  // namespace

const MlpRow& experts_row() { return kExperts; }

}  // namespace stg::models
