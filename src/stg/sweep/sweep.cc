#include "stg/sweep/sweep.h"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "stg/emit/network_shape.h"
#include "stg/frameworks/registry.h"
#include "stg/lower/schedule_row.h"
#include "stg/models/families/registry.h"
#include "stg/passes/pipeline.h"
#include "stg/report/step_figures.h"
#include "stg/sweep/machine.h"
#include "stg/sweep/plan_template.h"
#include "stg/sweep/stage_sums.h"
#include "stg/util/parallel.h"

namespace stg::sweep {

namespace {

using models::BlockSpec;

std::vector<int64_t> divisors(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d * d <= n; ++d)
    if (n % d == 0) {
      out.push_back(d);
      if (d != n / d) out.push_back(n / d);
    }
  std::sort(out.begin(), out.end());
  return out;
}

// The template's blocks and the template block of each real block: a
// block's figures depend on its kind and its neighbours' (the buffers it
// hands on), so each real block maps to a template block with the same
// (previous, own, next) kinds.
struct BlockMap {
  int template_blocks = 0;
  std::vector<int> of_block;  // real block -> template block
};

BlockMap map_blocks(const models::Family& family, const Options& o, int blocks) {
  using Signature = std::array<std::optional<BlockSpec>, 3>;
  auto signatures = [](const std::vector<BlockSpec>& b) {
    std::vector<Signature> out;
    for (size_t i = 0; i < b.size(); ++i)
      out.push_back({i > 0 ? std::optional(b[i - 1]) : std::nullopt, b[i],
                     i + 1 < b.size() ? std::optional(b[i + 1]) : std::nullopt});
    return out;
  };
  const std::vector<Signature> real = signatures(family.decoder(o, blocks).blocks);
  for (int t = std::min(blocks, 3); t <= blocks; ++t) {
    const std::vector<Signature> small = signatures(family.decoder(o, t).blocks);
    BlockMap map{t, {}};
    for (const Signature& s : real) {
      const auto it = std::find(small.begin(), small.end(), s);
      if (it == small.end()) break;
      map.of_block.push_back(static_cast<int>(it - small.begin()));
    }
    if (map.of_block.size() == real.size()) return map;
  }
  BlockMap identity{blocks, {}};
  for (int b = 0; b < blocks; ++b) identity.of_block.push_back(b);
  return identity;
}

// The rows of the data axis and of the stages.
constexpr int row_of_kind(mesh::AxisKind kind) {
  for (int r = 0; r < mesh::kNumAxes; ++r)
    if (mesh::kAxes[r].kind == kind) return r;
  return -1;
}
constexpr int kDataRow = row_of_kind(mesh::AxisKind::kData);
constexpr int kStageRow = mesh::stage_row();
static_assert(kDataRow >= 0, "the sweep gives the data axis the GPUs the others leave");

// The row whose label is `label`, or -1.
int row_of_label(const std::string& label) {
  for (int r = 0; r < mesh::kNumAxes; ++r)
    if (label == mesh::kAxes[r].label) return r;
  return -1;
}

// Plans that share a template, degrees and micro-batch (their figures per
// part are the same): one per number of virtual stages.
struct Candidate {
  TemplateKey key;
  mesh::Degrees degree;
  int64_t dp, pp;  // the data axis's and the stages' degrees
  int64_t micro_batch;
  std::vector<int> virtual_stages;
};

// Where a plan's ranks lie, as --astra_sim's network places them
// (emit/network_shape.h, Megatron-LM's placement): how many ranks of each
// row one scale-up domain holds, and the network's dimensions.
struct RankPlacement {
  mesh::Degrees in_domain;  // by row
  emit::NetworkShape network;
};

RankPlacement place_ranks(const mesh::Degrees& degree, int64_t scale_up_gpus) {
  std::vector<emit::PlacedAxis> axes;
  for (int r : mesh::rank_order()) axes.push_back({degree.row(r), mesh::kAxes[r].node_place});
  const std::vector<int64_t> inside = emit::ranks_in_domain(axes, scale_up_gpus);
  RankPlacement p;
  size_t i = 0;
  for (int r : mesh::rank_order()) p.in_domain.row(r) = inside[i++];
  p.network = emit::default_network_shape(axes, scale_up_gpus);
  return p;
}

// How an axis name's traffic is charged (plan_time.h): the members of one of
// its groups, whether each group lies inside one scale-up domain, whether
// it overlaps the backward. A name's words that are axis labels name its
// rows ("dp x cp", "cp p2p", "pp"). A name of no row (Megatron-LM's
// tied-embedding group of the first and last stage) is two ranks apart.
AxisLoad axis_shape(const std::string& name, const mesh::Degrees& degree, int64_t gpus,
                    const RankPlacement& placed) {
  std::vector<int> rows;
  for (size_t start = 0; start < name.size();) {
    const size_t end = std::min(name.find(' ', start), name.size());
    const int r = row_of_label(name.substr(start, end - start));
    if (r >= 0) rows.push_back(r);
    start = end + 1;
  }
  AxisLoad a;
  if (rows.empty()) {
    a.members = 2;
    return a;
  }
  // A group lies in one domain when the domain holds every axis up to the
  // group's last one in node order whole.
  int last = 0;
  for (int r : rows) {
    a.members *= degree.row(r);
    last = std::max(last, mesh::kAxes[r].node_place);
  }
  a.scale_up = true;
  for (int r = 0; r < mesh::kNumAxes; ++r)
    if (mesh::kAxes[r].node_place <= last && placed.in_domain.row(r) != degree.row(r))
      a.scale_up = false;
  if (a.members == gpus && gpus > 1) {
    // Every rank: the network's dimensions, as --astra_sim writes them.
    a.world_dims = placed.network.dims;
    a.world_scale_up = placed.network.in_node;
  }
  a.overlaps_backward = rows[0] == kDataRow && !report::point_to_point(name);
  return a;
}

class Evaluator {
 public:
  Evaluator(const BlockMap& map, int blocks, int64_t batch, const ComputeFigures& compute,
            const NetworkFigures& network)
      : map_(map), blocks_(blocks), batch_(batch), compute_(compute), network_(network) {}

  // The rows of the candidate's plans that are valid.
  std::vector<PlanRow> evaluate(const Candidate& c, const PlanTemplate& t) const {
    const int64_t m = c.micro_batch;
    const int micro_batches = static_cast<int>(batch_ / m);
    const std::vector<int64_t> v = t.values(c.dp, c.pp, m, batch_);
    int64_t gpus = 1;
    for (int r = 0; r < mesh::kNumAxes; ++r) gpus *= c.degree.row(r);
    if (!t.whole(v)) return {};
    // Axis names, the stage boundaries' first.
    std::vector<std::string> axes = {mesh::kAxes[kStageRow].label};
    std::vector<PartValues> parts;
    for (const PartFigures& f : t.parts()) parts.push_back(part_values(f, v, micro_batches, axes));
    Fields forward, backward;  // a stage boundary's sends, on the "pp" axis (0)
    put_flow(forward, 0, t.forward_link(), v, micro_batches);
    put_flow(backward, 0, t.backward_link(), v, micro_batches);
    const Formula formula = formula_bytes(t, c);
    const RankPlacement placed = place_ranks(c.degree, network_.scale_up_gpus);
    std::vector<AxisLoad> shapes;
    for (const std::string& axis : axes) shapes.push_back(axis_shape(axis, c.degree, gpus, placed));

    std::vector<PlanRow> rows;
    const int pp = static_cast<int>(c.pp);
    StageSums stages(pp, static_cast<int>(axes.size()));
    std::vector<StageLoad> loads(pp, StageLoad{0, shapes});
    for (const int chunks : c.virtual_stages) {
      const lower::Schedule schedule = lower::Schedule::named(chunks > 1 ? "interleaved" : "1f1b");
      if (!lower::schedule_requirement(schedule, pp, micro_batches).empty()) continue;
      if (schedule->needs_whole_groups() && micro_batches % pp != 0) continue;
      stages.add_up(parts, template_part_, chunks, forward, backward);
      activations(formula, chunks, micro_batches, schedule, stages);
      rows.push_back(row(c, chunks, micro_batches, axes, stages));
      rows.back().time = time_of(stages, loads, {c.pp, micro_batches, chunks});
    }
    return rows;
  }

 private:
  // Megatron-LM's activations by formula (per template block, and the
  // ends), when the framework counts them so.
  struct Formula {
    bool used = false;
    std::vector<double> block_bytes;
    report::EndActivations ends;
  };
  Formula formula_bytes(const PlanTemplate& t, const Candidate& c) const {
    Formula f;
    if (!t.activation_formula()) return f;
    f.used = true;
    const report::ActivationMemoryOptions& o = *t.activation_formula();
    const mesh::Mesh mesh = t.mesh_of(c.dp, c.pp);
    const expr::Values values = t.named_values(c.dp, c.pp, c.micro_batch, batch_);
    for (const report::BlockActivations& b : o.blocks)
      f.block_bytes.push_back(report::block_activation_bytes(mesh, values, o, b));
    f.ends = report::end_activation_bytes(mesh, values, o);
    return f;
  }

  // A part's figures at a plan's values; a new axis name gets the next
  // index in `axes`.
  static PartValues part_values(const PartFigures& f, const std::vector<int64_t>& v,
                                int micro_batches, std::vector<std::string>& axes) {
    PartValues p;
    p.fields.put(kFlops,
                 value(f.flops_per_micro_batch, v) * micro_batches + value(f.flops_once, v));
    p.fields.put(kParams, value(f.params, v));
    p.fields.put(kGrads, value(f.grads, v));
    p.fields.put(kOptimizer, value(f.optimizer, v));
    p.fields.put(kKept, value(f.kept_here, v));
    const double kept_next = value(f.kept_next, v);
    p.kept_both = value(f.kept_both, v);
    p.kept_next_and_both = kept_next + p.kept_both;
    for (const auto& [axis, flows] : f.axes) {
      auto it = std::find(axes.begin(), axes.end(), axis);
      if (it == axes.end()) it = axes.insert(axes.end(), axis);
      put_flow(p.fields, static_cast<int>(it - axes.begin()), flows[0], v, micro_batches);
    }
    return p;
  }

  // The stages' activations (in kKept): the buffers of one micro-batch
  // times those in flight, or the framework's formula.
  void activations(const Formula& f, int chunks, int micro_batches, lower::Schedule schedule,
                   StageSums& stages) const {
    const int pp = stages.stages();
    std::vector<double> held(pp, 0);
    if (f.used)
      for (int b = 0; b < blocks_; ++b)
        held[stages.stage_of()[b + 1]] += f.block_bytes[map_.of_block[b]];
    for (int s = 0; s < pp; ++s) {
      double& kept = stages.stage(s)[kKept];
      const double in_flight = lower::activations_in_flight(schedule, s, pp, micro_batches, chunks);
      if (!f.used) {
        kept *= in_flight;
        continue;
      }
      // The multi-token prediction modules (the formula's blocks after the
      // template's) are blocks of the last stage.
      if (s == pp - 1)
        for (size_t b = static_cast<size_t>(map_.template_blocks); b < f.block_bytes.size(); ++b)
          held[s] += f.block_bytes[b];
      const double end = (s == pp - 1 ? f.ends.last_inputs : 0) + (s == 0 ? f.ends.first_mask : 0);
      kept = (held[s] + end) * in_flight + (s == pp - 1 ? f.ends.logits : 0) * in_flight;
    }
  }

  PlanRow row(const Candidate& c, int chunks, int micro_batches,
              const std::vector<std::string>& axes, const StageSums& stages) const {
    PlanRow row;
    row.degree = c.degree;
    row.virtual_stages = chunks;
    row.micro_batch = c.micro_batch;
    row.zero_stage = c.key.zero_stage;
    row.micro_batches = micro_batches;
    row.schedule = chunks > 1 ? "interleaved" : "1f1b";
    row.bubble = bubble_fraction(static_cast<int>(c.pp), micro_batches, chunks);
    std::vector<double> sent(axes.size(), 0);
    for (int s = 0; s < stages.stages(); ++s) {
      const double* st = stages.stage(s);
      const double total = st[kParams] + st[kGrads] + st[kOptimizer] + st[kKept];
      if (s == 0 || total > row.memory) {
        row.memory = total;
        row.params = st[kParams];
        row.grads = st[kGrads];
        row.optimizer = st[kOptimizer];
        row.activations = st[kKept];
      }
      row.flops = std::max(row.flops, st[kFlops]);
      for (size_t i = 0; i < axes.size(); ++i)
        sent[i] = std::max(sent[i], st[axis_field(static_cast<int>(i), kSent)]);
    }
    for (size_t i = 0; i < axes.size(); ++i)
      if (sent[i] > 0) row.bytes[axes[i]] = sent[i];
    return row;
  }

  // The step time (plan_time.h) from each stage's work and traffic; `loads`
  // holds the axes' shapes.
  StepTime time_of(const StageSums& stages, std::vector<StageLoad>& loads,
                   const PlanShape& shape) const {
    for (int s = 0; s < stages.stages(); ++s) {
      const double* st = stages.stage(s);
      loads[s].flops = st[kFlops];
      for (size_t i = 0; i < loads[s].axes.size(); ++i) {
        AxisLoad& a = loads[s].axes[i];
        const double* f = st + axis_field(static_cast<int>(i), 0);
        for (int k = 0; k < kCollectiveKinds; ++k) {
          a.bytes[k] = f[kKindBytes + k];
          a.collectives[k] = f[kKindOps + k];
        }
        a.sent_bytes = f[kSentBytes];
        a.sends = f[kSends];
      }
    }
    return step_time(loads, shape, compute_, network_);
  }

  // The template's part of each real part (0 the first, 1 + b block b, the last).
  std::vector<int> template_parts() const {
    std::vector<int> p = {0};
    for (int b = 0; b < blocks_; ++b) p.push_back(map_.of_block[b] + 1);
    p.push_back(map_.template_blocks + 1);
    return p;
  }

  const BlockMap& map_;
  int blocks_;
  std::vector<int> template_part_ = template_parts();
  int64_t batch_;
  ComputeFigures compute_;
  NetworkFigures network_;
};

}  // namespace

double bubble_fraction(int pp, int micro_batches, int chunks) {
  // The idle fraction of the most idle stage with F = B + W: (pp - 1) of
  // the pp - 1 + chunks x micro-batches slots of the makespan. Equal to
  // what lower::run_schedule measures (tests/plans_test.cc compares them).
  return static_cast<double>(pp - 1) / (static_cast<double>(chunks) * micro_batches + pp - 1);
}

namespace {

// The model's blocks and the global batch, after the refusals of what the
// sweep cannot evaluate; throws UsageError.
struct SweepModel {
  int blocks = 0;
  int64_t batch = 0;
};

SweepModel check_sweep(const Options& base, const SweepOptions& options) {
  if (!base.module_csv.empty())
    throw UsageError("stg plans evaluates decoder models: --module_csv is not one");
  const models::Family& family = models::family_of(base);
  if (!family.decoder)
    throw UsageError("stg plans evaluates decoder models (gpt, llama, moe, ...): --model_type " +
                     family.name + " is not one");
  if (options.gpus < 1 || options.gpus > kMaxRanks)
    throw UsageError("--gpus " + std::to_string(options.gpus) +
                     " is not valid: use an integer from 1 to " + std::to_string(kMaxRanks));
  // The sweep places blocks on stages by count (passes::stage_of_block).
  if (base.pp_balance_cost)
    throw UsageError(
        "--pp_balance cost is not evaluated by stg plans (it splits stages by block count): "
        "drop it, and give the plan you pick to stg with --pp_balance cost");
  const int64_t stacks = base.num_stacks.value_or(80);
  if (stacks < 1 || stacks > kMaxStacks)
    throw UsageError("--num_stacks " + std::to_string(stacks) + " is not valid: use 1 to " +
                     std::to_string(kMaxStacks));
  const int64_t batch = base.batch.value_or(64);
  if (batch < 1) throw UsageError("--batch " + std::to_string(batch) + " is not valid: use >= 1");
  return {static_cast<int>(stacks), batch};
}

// The rows the sweep divides the GPUs over, in rank order (the stages
// last): the axes of the model's mesh and the stages, but the data axis,
// which takes the GPUs the others leave.
std::vector<int> split_rows(const mesh::Mesh& model_mesh) {
  std::vector<int> rows;
  for (int r : mesh::rank_order()) {
    const mesh::AxisSpec& a = mesh::kAxes[r];
    if (r == kDataRow) continue;
    if (r == kStageRow || model_mesh.find(a.name) >= 0) rows.push_back(r);
  }
  return rows;
}

// Calls visit(degrees) for every split of `left` GPUs over rows[i..] and
// the data axis; a stage holds a block or an end at least.
void each_split(const std::vector<int>& rows, size_t i, int64_t left, int blocks,
                mesh::Degrees& degree, const std::function<void(const mesh::Degrees&)>& visit) {
  if (i == rows.size()) {
    degree.row(kDataRow) = left;
    visit(degree);
    return;
  }
  for (int64_t d : divisors(left)) {
    if (rows[i] == kStageRow && d > blocks + 2) continue;
    degree.row(rows[i]) = d;
    each_split(rows, i + 1, left / d, blocks, degree, visit);
  }
}

// Every split of the GPUs over the axes, micro-batch and ZeRO choice the
// framework accepts and the user's fixed degrees allow, with its
// virtual-stage choices; `tried` counts them with each number of virtual
// stages.
std::vector<Candidate> enumerate(const Options& o, const models::DecoderSpec& spec,
                                 const mesh::Mesh& model_mesh, const SweepOptions& options,
                                 const SweepModel& model, int64_t& tried) {
  const frameworks::Framework& framework = frameworks::find(o.framework);
  auto allowed = [&](const char* name, int64_t v) {
    const auto it = options.fixed.find(name);
    return it == options.fixed.end() || it->second == v;
  };
  std::vector<Candidate> candidates;
  mesh::Degrees start;
  each_split(split_rows(model_mesh), 0, options.gpus, model.blocks, start,
             [&](const mesh::Degrees& degree) {
               for (int r = 0; r < mesh::kNumAxes; ++r)
                 if (!allowed(mesh::kAxes[r].label, degree.row(r))) return;
               const int64_t dp = degree.row(kDataRow), pp = degree.row(kStageRow);
               Options check = o;
               check.degree = degree;
               for (int64_t m : divisors(model.batch)) {
                 if (m % dp != 0 || !allowed("micro_batch", m)) continue;
                 try {
                   framework.check_decoder(check, spec, m);
                 } catch (const UsageError&) {
                   continue;
                 }
                 std::vector<int> chunks;
                 // Interleaving needs a block on every virtual stage.
                 for (int v = 1; v == 1 || (pp > 1 && pp * v <= model.blocks); ++v)
                   if (allowed("virtual_stages", v)) chunks.push_back(v);
                 if (chunks.empty()) continue;
                 for (int zero = 0; zero <= (dp > 1 ? 3 : 0); ++zero) {
                   if (!allowed("zero_stage", zero)) continue;
                   candidates.push_back({template_key(degree, zero), degree, dp, pp, m, chunks});
                   tried += static_cast<int64_t>(chunks.size());
                 }
               }
             });
  return candidates;
}

// One template per shape, built in parallel; a shape the model refuses
// (tp not dividing the heads, ...) has none.
std::map<TemplateKey, std::unique_ptr<PlanTemplate>> build_templates(
    const Options& o, const std::vector<Candidate>& candidates, int template_blocks, int threads,
    ProgressListener& progress) {
  std::map<TemplateKey, std::unique_ptr<PlanTemplate>> templates;
  for (const Candidate& c : candidates) templates[c.key];
  std::vector<const TemplateKey*> keys;
  for (const auto& [key, t] : templates) keys.push_back(&key);
  std::vector<std::unique_ptr<PlanTemplate>> built(keys.size());
  progress.phase("plan shapes", static_cast<int64_t>(keys.size()), "shapes");
  util::parallel_for(0, static_cast<int64_t>(keys.size()), threads, [&](int64_t k) {
    try {
      built[k] = std::make_unique<PlanTemplate>(o, *keys[k], template_blocks);
    } catch (const UsageError&) {
    } catch (const expr::SizeError&) {
    }
    progress.advance(1, 0);
  });
  for (size_t k = 0; k < keys.size(); ++k) templates[*keys[k]] = std::move(built[k]);
  return templates;
}

// The model's mesh (which axes it has), from the template of every degree 1.
mesh::Mesh mesh_of_model(const Options& o, int template_blocks) {
  try {
    return PlanTemplate(o, template_key(mesh::Degrees(), 0), template_blocks).model_mesh();
  } catch (const expr::SizeError& e) {
    throw UsageError(std::string("stg plans cannot evaluate this model: ") + e.what());
  }
}

}  // namespace

SweepResult sweep(const Options& base, const SweepOptions& options) {
  const SweepModel model = check_sweep(base, options);
  Options o = base;
  o.units = Units::kPhysical;  // FLOPs and bytes
  const models::Family& family = models::family_of(base);
  const models::DecoderSpec spec = family.decoder(o, model.blocks);
  const BlockMap map = map_blocks(family, o, model.blocks);
  const mesh::Mesh model_mesh = mesh_of_model(o, map.template_blocks);
  const int threads = options.threads > 0
                          ? options.threads
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  ProgressListener silent;
  ProgressListener& progress = options.progress ? *options.progress : silent;

  SweepResult result;
  const std::vector<Candidate> candidates =
      enumerate(o, spec, model_mesh, options, model, result.candidates);
  const auto templates = build_templates(o, candidates, map.template_blocks, threads, progress);
  result.templates = static_cast<int64_t>(templates.size());

  const Evaluator evaluator(map, model.blocks, model.batch, compute_figures(base),
                            network_figures(base));
  std::vector<std::vector<PlanRow>> rows(candidates.size());
  progress.phase("plans", static_cast<int64_t>(candidates.size()), "candidates");
  util::parallel_for(0, static_cast<int64_t>(candidates.size()), threads, [&](int64_t i) {
    const Candidate& c = candidates[i];
    if (const PlanTemplate* t = templates.at(c.key).get()) rows[i] = evaluator.evaluate(c, *t);
    progress.advance(1, 0);
  });
  for (auto& group : rows)
    for (PlanRow& r : group) result.plans.push_back(std::move(r));
  return result;
}

}  // namespace stg::sweep
