// The reference generator's training step (--framework reference, the
// default): its models, its collectives, gradients reduced per weight in
// the weight's element type, nodes numbered as it numbers them, and its
// memory report (report/memory.h).
#include <memory>

#include "stg/frameworks/framework.h"
#include "stg/models/workload.h"
#include "stg/passes/grad_update.h"

namespace stg::frameworks {

namespace {

class Reference : public Framework {
 public:
  std::string_view name() const override { return "reference"; }

  // The other frameworks' flags are refused by the registry
  // (refuse_flags_of_others); the reference has none of its own.
  void check(const Options&) const override {}
  std::string own_flag_given(const Options&) const override { return ""; }

  void adjust_decoder_dims(models::Workload&, const Options&, int64_t) const override {}
  void check_decoder(const Options&, const models::DecoderSpec&, int64_t) const override {}
  models::PartChoices decoder_parts(const Options&, const models::DecoderSpec&,
                                    int) const override {
    return {};  // every choice off: the reference's own layers
  }

  passes::CollectiveCreator collective_creator() const override {
    return passes::reference_collective;
  }
  void add_gradient_passes(passes::PassManager& pm, const Options&,
                           const models::Workload& w) const override {
    pm.emplace<passes::AddWeightUpdates>(w.zero_stage, /*distributed_optimizer=*/false);
  }
  // The recomputation waits for the block's entry gradient only.
  bool checkpointed_recompute() const override { return false; }
  // Every collective is issued as soon as its input is ready.
  void add_issue_passes(passes::PassManager&, const Options&,
                        const models::Workload&) const override {}

  Units default_units() const override { return Units::kStg; }
  DType default_dtype() const override { return DType::kBf16; }
  // The reference numbers its links last (docs/facts.md §5.8).
  lower::NodeOrder node_order() const override { return lower::NodeOrder::kReference; }
  bool tensor_size_moved() const override { return false; }
  bool feeder_attributes() const override { return false; }
  bool ep_carved_out_of_dp() const override { return false; }

  MemoryReport memory_report(const Options&, const models::Workload& w,
                             const lower::LowerOptions& lo, const graph::Graph& g,
                             int64_t ranks_per_stage) const override {
    MemoryReport out;
    out.by_stage = report::memory_by_stage(g, w.mesh, w.values, memory_options(w, lo));
    out.text = report::format_memory(out.by_stage, ranks_per_stage);
    return out;
  }
  MemoryModel memory_model(const Options&, const models::Workload& w, const lower::LowerOptions& lo,
                           const graph::Graph& g, const report::PlaceOf& place) const override {
    return {report::memory_terms(g, w.mesh, memory_options(w, lo), place), std::nullopt};
  }

 private:
  static report::MemoryOptions memory_options(const models::Workload& w,
                                              const lower::LowerOptions& lo) {
    report::MemoryOptions m;
    m.mixed_precision = lo.io.mixed_precision;
    m.zero_stage = w.zero_stage;
    m.schedule = lo.schedule;
    m.micro_batches = w.micro_batches;
    m.chunks = lo.chunks;
    return m;
  }
};

}  // namespace

std::unique_ptr<Framework> make_reference() { return std::make_unique<Reference>(); }

}  // namespace stg::frameworks
