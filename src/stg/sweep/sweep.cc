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

double value(const FastExpr& e, const std::vector<int64_t>& v) {
  return e.empty() ? 0 : e.value(v);
}

double flow_bytes(const Flow& f, const std::vector<int64_t>& v, int micro_batches) {
  return value(f.bytes_per_micro_batch, v) * micro_batches + value(f.bytes_once, v);
}

// What a rank moves on one axis in a step, for the step time: collectives
// by kind, and sends.
struct Traffic {
  std::array<double, kCollectiveKinds> bytes{}, ops{};
  double sent_bytes = 0, sends = 0;
  void add(const Traffic& o) {
    for (int k = 0; k < kCollectiveKinds; ++k) bytes[k] += o.bytes[k], ops[k] += o.ops[k];
    sent_bytes += o.sent_bytes;
    sends += o.sends;
  }
};

Traffic flow_traffic(const Flow& f, const std::vector<int64_t>& v, int micro_batches) {
  Traffic t;
  bool collective = false;
  for (int k = 0; k < kCollectiveKinds; ++k) {
    t.ops[k] =
        static_cast<double>(f.kind_ops_per_micro_batch[k] * micro_batches + f.kind_ops_once[k]);
    if (t.ops[k] == 0) continue;
    collective = true;
    t.bytes[k] =
        value(f.kind_bytes_per_micro_batch[k], v) * micro_batches + value(f.kind_bytes_once[k], v);
  }
  if (!collective) {
    t.sent_bytes = flow_bytes(f, v, micro_batches);
    t.sends = static_cast<double>(f.ops_per_micro_batch * micro_batches + f.ops_once);
  }
  return t;
}

// A part's figures at one plan's values; `sent` and `traffic` by axis index.
struct PartValues {
  double flops = 0, params = 0, grads = 0, optimizer = 0;
  double kept_here = 0, kept_next = 0, kept_both = 0;
  std::vector<double> sent;
  std::vector<Traffic> traffic;
};

// Per stage of one plan.
struct StageSums {
  double flops = 0, params = 0, grads = 0, optimizer = 0, kept = 0;
  std::vector<double> sent;      // by axis index
  std::vector<Traffic> traffic;  // by axis index
  std::vector<int> blocks;       // real blocks on the stage
};

// How an axis name's traffic is charged (plan_time.h): the members of one of
// its groups, whether each group lies inside one scale-up domain, whether
// it overlaps the backward. A name's words that are axis labels name its
// rows ("dp x cp", "cp p2p", "pp"). A name of no row (Megatron-LM's
// tied-embedding group of the first and last stage) is two ranks apart.
AxisLoad axis_shape(const std::string& name, const mesh::Degrees& degree, int64_t gpus,
                    int64_t scale_up_gpus) {
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
  // Megatron-LM's placement (emit/network_shape.h): a node is filled with
  // the axes in node order, so a group lies in one node when the axes up
  // to its last one multiply to at most a node's GPUs.
  int last = 0;
  for (int r : rows) {
    a.members *= degree.row(r);
    last = std::max(last, mesh::kAxes[r].node_place);
  }
  int64_t span = 1;
  for (int r = 0; r < mesh::kNumAxes; ++r)
    if (mesh::kAxes[r].node_place <= last) span *= degree.row(r);
  a.scale_up = span <= scale_up_gpus;
  if (a.members == gpus && gpus > 1) {
    // Every rank: the network's dimensions, as --astra_sim writes them.
    std::vector<emit::PlacedAxis> axes;
    for (int r : mesh::rank_order()) axes.push_back({degree.row(r), mesh::kAxes[r].node_place});
    const emit::NetworkShape shape = emit::default_network_shape(axes, scale_up_gpus);
    a.world_dims = shape.dims;
    a.world_scale_up = shape.in_node;
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
    auto axis_index = [&](const std::string& name) {
      const auto it = std::find(axes.begin(), axes.end(), name);
      if (it != axes.end()) return static_cast<int>(it - axes.begin());
      axes.push_back(name);
      return static_cast<int>(axes.size()) - 1;
    };
    std::vector<PartValues> parts;
    for (const PartFigures& f : t.parts()) {
      PartValues p;
      p.flops = value(f.flops_per_micro_batch, v) * micro_batches + value(f.flops_once, v);
      p.params = value(f.params, v);
      p.grads = value(f.grads, v);
      p.optimizer = value(f.optimizer, v);
      p.kept_here = value(f.kept_here, v);
      p.kept_next = value(f.kept_next, v);
      p.kept_both = value(f.kept_both, v);
      for (const auto& [axis, flows] : f.axes) {
        const int i = axis_index(axis);
        if (static_cast<int>(p.sent.size()) <= i) p.sent.resize(i + 1, 0);
        if (static_cast<int>(p.traffic.size()) <= i) p.traffic.resize(i + 1);
        p.sent[i] += flow_bytes(flows[0], v, micro_batches);
        p.traffic[i].add(flow_traffic(flows[0], v, micro_batches));
      }
      parts.push_back(std::move(p));
    }
    const Links links{flow_bytes(t.forward_link(), v, micro_batches),
                      flow_bytes(t.backward_link(), v, micro_batches),
                      flow_traffic(t.forward_link(), v, micro_batches),
                      flow_traffic(t.backward_link(), v, micro_batches)};
    const Formula formula = formula_bytes(t, c);
    std::vector<AxisLoad> shapes;
    for (const std::string& axis : axes)
      shapes.push_back(axis_shape(axis, c.degree, gpus, network_.scale_up_gpus));

    std::vector<PlanRow> rows;
    const int pp = static_cast<int>(c.pp);
    for (const int chunks : c.virtual_stages) {
      const lower::Schedule schedule = lower::Schedule::named(chunks > 1 ? "interleaved" : "1f1b");
      if (!lower::schedule_requirement(schedule, pp, micro_batches).empty()) continue;
      if (schedule->needs_whole_groups() && micro_batches % pp != 0) continue;
      std::vector<StageSums> stages = stage_sums(parts, axes.size(), pp, chunks, links);
      activations(t, formula, pp, chunks, micro_batches, schedule, stages);
      rows.push_back(row(c, chunks, micro_batches, axes, stages));
      rows.back().time = time_of(stages, shapes, {c.pp, micro_batches, chunks});
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

  // Each part on its stage: blocks in contiguous runs of pp x chunks
  // virtual stages (passes/pipeline.h), the ends with the first and last
  // block or, with more stages than blocks, on stages of their own; a stage
  // boundary's sends on both sides.
  struct Links {
    double forward, backward;                   // bytes
    Traffic forward_traffic, backward_traffic;  // for the step time
  };
  std::vector<StageSums> stage_sums(const std::vector<PartValues>& parts, size_t axes, int pp,
                                    int chunks, const Links& links) const {
    const int virtual_stages = pp * chunks;
    const int last = blocks_ + 1;
    // Placed as passes::assign_stages places them by count.
    std::vector<int> stage_of(blocks_ + 2);
    for (int u = 0; u <= last; ++u)
      stage_of[u] = passes::virtual_stage_of_part(u, blocks_, virtual_stages) % pp;
    std::vector<StageSums> stages(pp);
    for (StageSums& s : stages) {
      s.sent.assign(axes, 0);
      s.traffic.assign(axes, Traffic{});
    }
    for (int u = 0; u <= last; ++u) {
      const int p = u == 0 ? 0 : u == last ? map_.template_blocks + 1 : map_.of_block[u - 1] + 1;
      StageSums& s = stages[stage_of[u]];
      const PartValues& pv = parts[p];
      s.flops += pv.flops;
      s.params += pv.params;
      s.grads += pv.grads;
      s.optimizer += pv.optimizer;
      s.kept += pv.kept_here;
      if (u < last) {
        // Read by the next part too: held where each reader is.
        stages[stage_of[u + 1]].kept += pv.kept_next + pv.kept_both;
        if (stage_of[u + 1] != stage_of[u]) s.kept += pv.kept_both;
      }
      if (u > 0 && u < last) s.blocks.push_back(u - 1);
      for (size_t i = 0; i < pv.sent.size(); ++i) s.sent[i] += pv.sent[i];
      for (size_t i = 0; i < pv.traffic.size(); ++i) s.traffic[i].add(pv.traffic[i]);
    }
    for (int b = 0; b + 1 < virtual_stages; ++b) {
      stages[b % pp].sent[0] += links.forward;
      stages[(b + 1) % pp].sent[0] += links.backward;
      stages[b % pp].traffic[0].add(links.forward_traffic);
      stages[(b + 1) % pp].traffic[0].add(links.backward_traffic);
    }
    return stages;
  }

  // The stages' activations (in `kept`): the buffers of one micro-batch
  // times those in flight, or the framework's formula.
  void activations(const PlanTemplate& t, const Formula& f, int pp, int chunks, int micro_batches,
                   lower::Schedule schedule, std::vector<StageSums>& stages) const {
    (void)t;
    for (int s = 0; s < pp; ++s) {
      StageSums& st = stages[s];
      const double in_flight = lower::activations_in_flight(schedule, s, pp, micro_batches, chunks);
      if (!f.used) {
        st.kept *= in_flight;
        continue;
      }
      double held = 0;
      for (int b : st.blocks) held += f.block_bytes[map_.of_block[b]];
      // The multi-token prediction modules (the formula's blocks after the
      // template's) are blocks of the last stage.
      if (s == pp - 1)
        for (size_t b = static_cast<size_t>(map_.template_blocks); b < f.block_bytes.size(); ++b)
          held += f.block_bytes[b];
      const double end = (s == pp - 1 ? f.ends.last_inputs : 0) + (s == 0 ? f.ends.first_mask : 0);
      st.kept = (held + end) * in_flight + (s == pp - 1 ? f.ends.logits : 0) * in_flight;
    }
  }

  PlanRow row(const Candidate& c, int chunks, int micro_batches,
              const std::vector<std::string>& axes, const std::vector<StageSums>& stages) const {
    PlanRow row;
    row.degree = c.degree;
    row.virtual_stages = chunks;
    row.micro_batch = c.micro_batch;
    row.zero_stage = c.key.zero_stage;
    row.micro_batches = micro_batches;
    row.schedule = chunks > 1 ? "interleaved" : "1f1b";
    row.bubble = bubble_fraction(static_cast<int>(c.pp), micro_batches, chunks);
    std::vector<double> sent(axes.size(), 0);
    for (size_t s = 0; s < stages.size(); ++s) {
      const StageSums& st = stages[s];
      const double total = st.params + st.grads + st.optimizer + st.kept;
      if (s == 0 || total > row.memory) {
        row.memory = total;
        row.params = st.params;
        row.grads = st.grads;
        row.optimizer = st.optimizer;
        row.activations = st.kept;
      }
      row.flops = std::max(row.flops, st.flops);
      for (size_t i = 0; i < axes.size(); ++i) sent[i] = std::max(sent[i], st.sent[i]);
    }
    for (size_t i = 0; i < axes.size(); ++i)
      if (sent[i] > 0) row.bytes[axes[i]] = sent[i];
    return row;
  }

  // The step time (plan_time.h) from each stage's work and traffic.
  StepTime time_of(const std::vector<StageSums>& stages, const std::vector<AxisLoad>& shapes,
                   const PlanShape& shape) const {
    std::vector<StageLoad> loads;
    for (const StageSums& s : stages) {
      StageLoad load{s.flops, {}};
      for (size_t i = 0; i < shapes.size(); ++i) {
        AxisLoad a = shapes[i];
        a.bytes = s.traffic[i].bytes;
        a.collectives = s.traffic[i].ops;
        a.sent_bytes = s.traffic[i].sent_bytes;
        a.sends = s.traffic[i].sends;
        load.axes.push_back(a);
      }
      loads.push_back(std::move(load));
    }
    return step_time(loads, shape, compute_, network_);
  }

  const BlockMap& map_;
  int blocks_;
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
