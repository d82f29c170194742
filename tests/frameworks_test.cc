// The framework registry and the policy objects (frameworks/): names,
// refusal of an unknown name, each framework's choices, and that the
// collective creator insert-collectives uses in a run's pipeline is the
// framework's.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "stg/frameworks/registry.h"
#include "stg/generate.h"
#include "stg/graph/csv_module.h"
#include "stg/graph/csv_writer.h"
#include "stg/models/families/family.h"
#include "stg/models/workload.h"
#include "stg/passes/insert_collectives.h"
#include "stg/workloads/build_workload.h"
#include "stg/workloads/training_step.h"
#include "support/filecheck.h"

namespace stg::frameworks {
namespace {

TEST(FrameworkRegistry, NamesInTableOrder) {
  EXPECT_EQ(names(), (std::vector<std::string>{"reference", "megatron"}));
  EXPECT_EQ(find("reference").name(), "reference");
  EXPECT_EQ(find("megatron").name(), "megatron");
  EXPECT_EQ(&find("megatron"), &find("megatron"));  // one object per framework
}

TEST(FrameworkRegistry, UnknownNameIsRefusedWithTheChoices) {
  EXPECT_EQ(find("Megatron").name(), "megatron");  // choices in any case
  for (const char* name : {"megatrn", ""}) {
    try {
      find(name);
      FAIL() << name;
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()),
                "--framework '" + std::string(name) + "' is unknown: use reference or megatron");
    }
  }
}

TEST(FrameworkRegistry, RunsAreBuiltUnderTheNamedFramework) {
  Options o;
  o.model = "gpt";
  o.num_stacks = 2;
  EXPECT_EQ(workloads::build_workload(o).framework, &find("reference"));
  o.framework = "megatron";
  EXPECT_EQ(workloads::build_workload(o).framework, &find("megatron"));
  o.framework = "deepspeed";
  EXPECT_THROW(workloads::build_workload(o), UsageError);
}

TEST(Frameworks, LoweringChoices) {
  const Framework& ref = find("reference");
  const Framework& meg = find("megatron");
  EXPECT_EQ(ref.default_units(), Units::kStg);
  EXPECT_EQ(meg.default_units(), Units::kPhysical);
  EXPECT_EQ(ref.default_dtype(), DType::kBf16);
  EXPECT_EQ(meg.default_dtype(), DType::kBf16);
  EXPECT_EQ(ref.node_order(), lower::NodeOrder::kReference);
  EXPECT_EQ(meg.node_order(), lower::NodeOrder::kIssue);
  EXPECT_FALSE(ref.tensor_size_moved());
  EXPECT_TRUE(meg.tensor_size_moved());
  // Chakra ETFeeder's attributes: the reference's bytes in reference mode.
  EXPECT_FALSE(ref.feeder_attributes());
  EXPECT_TRUE(meg.feeder_attributes());
  // Megatron-LM carves the expert-parallel ranks out of the data-parallel ones.
  EXPECT_FALSE(ref.ep_carved_out_of_dp());
  EXPECT_TRUE(meg.ep_carved_out_of_dp());
}

TEST(Frameworks, GradientPasses) {
  const Options o;
  const models::Workload w;
  passes::PassManager ref, meg;
  find("reference").add_gradient_passes(ref, o, w);
  find("megatron").add_gradient_passes(meg, o, w);
  EXPECT_EQ(ref.names(), (std::vector<std::string>{"add-weight-updates"}));
  EXPECT_EQ(meg.names(),
            (std::vector<std::string>{"add-weight-updates", "set-gradient-precision"}));
}

// A framework's own flag is refused by the others, naming it and its
// framework (the reference once refused Megatron-LM's flags itself).
TEST(FrameworkRegistry, AnotherFrameworksFlagIsRefusedNamingIt) {
  Options o;
  EXPECT_NO_THROW(refuse_flags_of_others(find("reference"), o));
  o.causal_saving = false;  // given, whatever its value
  EXPECT_EQ(find("megatron").own_flag_given(o), "--causal_saving");
  EXPECT_EQ(find("reference").own_flag_given(o), "");
  EXPECT_NO_THROW(refuse_flags_of_others(find("megatron"), o));
  try {
    refuse_flags_of_others(find("reference"), o);
    FAIL() << "no UsageError";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "--causal_saving applies to --framework megatron only: add --framework megatron");
  }
}

TEST(Frameworks, IssuePasses) {
  const Options o;
  const models::Workload w;
  passes::PassManager ref, meg;
  find("reference").add_issue_passes(ref, o, w);
  find("megatron").add_issue_passes(meg, o, w);
  EXPECT_TRUE(ref.names().empty());
  EXPECT_EQ(meg.names(), (std::vector<std::string>{"defer-weight-gradient-gathers"}));
}

TEST(Frameworks, DecoderParts) {
  Options o;
  o.degree["pp"] = 2;
  const models::DecoderSpec gpt_blocks = models::gpt_family().decoder(o, 2);
  const models::DecoderSpec llama_blocks = models::llama_family().decoder(o, 2);
  const models::PartChoices reference = find("reference").decoder_parts(o, gpt_blocks, 0);
  EXPECT_FALSE(reference.vocab_parallel_layers || reference.selective_recompute_core ||
               reference.experts_carved_from_dp || reference.tie_embeddings);
  const models::PartChoices gpt = find("megatron").decoder_parts(o, gpt_blocks, 0);
  EXPECT_TRUE(gpt.vocab_parallel_layers && gpt.selective_recompute_core &&
              gpt.experts_carved_from_dp);
  EXPECT_TRUE(gpt.tie_embeddings);  // gpt ties by default, llama does not
  EXPECT_TRUE(gpt.tied_stages_apart);
  EXPECT_TRUE(gpt.reduce_per_step);
  EXPECT_FALSE(find("megatron").decoder_parts(o, llama_blocks, 3).tie_embeddings);
  EXPECT_FALSE(find("megatron").decoder_parts(o, llama_blocks, 3).reduce_per_step);
}

// The reference framework with its own collectives: every one a bucket.
class Bucketed : public Framework {
 public:
  std::string_view name() const override { return "bucketed"; }
  void check(const Options& o) const override { ref().check(o); }
  std::string own_flag_given(const Options& o) const override { return ref().own_flag_given(o); }
  void adjust_decoder_dims(models::Workload& w, const Options& o, int64_t tp) const override {
    ref().adjust_decoder_dims(w, o, tp);
  }
  void check_decoder(const Options& o, const models::DecoderSpec& k, int64_t m) const override {
    ref().check_decoder(o, k, m);
  }
  models::PartChoices decoder_parts(const Options& o, const models::DecoderSpec& k,
                                    int z) const override {
    return ref().decoder_parts(o, k, z);
  }
  passes::CollectiveCreator collective_creator() const override {
    return [](const graph::Graph&, const passes::CollectiveRequest& r) {
      graph::Tensor t = passes::collective_tensor(r);
      t.name = "bucket" + std::to_string(r.position);
      t.comm.label = "grad_bucket";
      return t;
    };
  }
  void add_gradient_passes(passes::PassManager& pm, const Options& o,
                           const models::Workload& w) const override {
    ref().add_gradient_passes(pm, o, w);
  }
  bool checkpointed_recompute() const override { return ref().checkpointed_recompute(); }
  void add_issue_passes(passes::PassManager& pm, const Options& o,
                        const models::Workload& w) const override {
    ref().add_issue_passes(pm, o, w);
  }
  Units default_units() const override { return ref().default_units(); }
  DType default_dtype() const override { return ref().default_dtype(); }
  lower::NodeOrder node_order() const override { return ref().node_order(); }
  bool tensor_size_moved() const override { return ref().tensor_size_moved(); }
  bool feeder_attributes() const override { return ref().feeder_attributes(); }
  bool ep_carved_out_of_dp() const override { return ref().ep_carved_out_of_dp(); }
  MemoryReport memory_report(const Options& o, const models::Workload& w,
                             const lower::LowerOptions& lo, const graph::Graph& g,
                             int64_t ranks) const override {
    return ref().memory_report(o, w, lo, g, ranks);
  }
  MemoryModel memory_model(const Options& o, const models::Workload& w,
                           const lower::LowerOptions& lo, const graph::Graph& g,
                           const report::PlaceOf& place) const override {
    return ref().memory_model(o, w, lo, g, place);
  }

 private:
  static const Framework& ref() { return find("reference"); }
};

TEST(Frameworks, InsertCollectivesUsesTheFrameworksCreator) {
  // y is partitioned on dp and a partial sum over tp; a reads it whole.
  models::Workload w;
  w.model.graph = graph::parse_module_csv(
      "id,require_grads,x1,x2,op_type,op_attr,x1_shape,x1_hidden,x2_shape,x2_hidden,grad_of,"
      "extra_attr\n"
      "x,N,,,T,,\"B/dp, D/tp\",1\n"
      "w,N,,,T,,\"D/tp, F\",1\n"
      "y,N,x,w,M,\"bd,df->bf\",\"B/dp, D/tp\",1,\"D/tp, F\",1\n"
      "a,N,y,,E,1,\"B, F\",1\n",
      "test.csv");
  w.model.degree_symbols = {"dp", "tp"};
  w.model.claim = graph::ClaimRule::kEveryAxisInDim;
  w.mesh = mesh::Mesh({{"dp", "dp", 2, mesh::AxisKind::kData, "--dp"},
                       {"tp", "tp", 2, mesh::AxisKind::kTensor, "--tp"}},
                      1);
  const Bucketed bucketed;
  w.framework = &bucketed;
  w.kind = &workloads::training_step();
  graph::Graph g = w.model.graph;
  passes::Analyses analyses(w.mesh, w.values);
  build_pipeline(Options{}, w).run(g, analyses);
  EXPECT_TRUE(stg_test::file_check(graph::write_module_csv(g), R"(
    CHECK-NOT: comm0
    CHECK: a,N,bucket1,,E,
    CHECK-NEXT: bucket0,N,y,,COLL,ALL_GATHER,
    CHECK-SAME: ""label"": ""grad_bucket""
    CHECK-NEXT: bucket1,N,bucket0,,COLL,ALL_REDUCE,
    CHECK-SAME: ""label"": ""grad_bucket""
    CHECK-NOT: comm
  )"));
}

}  // namespace
}  // namespace stg::frameworks
