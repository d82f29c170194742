// workloads::build_workload (workloads/build_workload.h): the run's
// framework, the model under it, and the kind of workload the model's
// builder describes (a training step, or stg infer's forward-only run from
// models::Workload::forward_run); its checks run in a fixed order, so each
// bad command line is refused with the same first error.
#include "stg/workloads/build_workload.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "stg/frameworks/registry.h"
#include "stg/workloads/forward_only.h"
#include "stg/workloads/training_step.h"

namespace stg::workloads {
namespace {

Options small_llama() {
  Options o;
  o.model = "llama";
  o.num_stacks = 2;
  o.dmodel = 64;
  o.dff = 128;
  o.head = 4;
  o.dvocal = 256;
  o.component_flags["--kvhead"] = 2;
  return o;
}

TEST(BuildWorkload, TrainingRunIsATrainingStep) {
  const models::Workload w = build_workload(small_llama());
  EXPECT_EQ(w.framework, &frameworks::find("reference"));
  EXPECT_FALSE(w.forward_run.has_value());
  EXPECT_EQ(w.kind, &training_step());
  EXPECT_EQ(w.own_kind, nullptr);
}

// A serving run with D decode steps builds the prefill and decode step 0,
// the one that stands for all D, each a token longer in context "Ctx".
TEST(BuildWorkload, ServingRunIsForwardOnlyAsItsBuilderDescribesIt) {
  const int D = 3;
  Options o = small_llama();
  o.serving = Serving{.requests = 4, .prompt_len = 16, .decode_steps = D};
  const models::Workload w = build_workload(o);
  ASSERT_TRUE(w.forward_run.has_value());
  const std::vector<lower::Step> phases = w.forward_run->phases;
  ASSERT_EQ(phases.size(), 2u);
  EXPECT_EQ(phases[0].phase, graph::Phase::kPrefill);
  EXPECT_EQ(phases[1].phase, graph::Phase::kDecode);
  EXPECT_EQ(w.forward_run->decode_steps, D);
  ASSERT_NE(w.kind, nullptr);
  EXPECT_EQ(w.kind, w.own_kind.get());
  EXPECT_EQ(w.kind->name(), "forward-only");
  EXPECT_EQ(w.kind->context_symbol(), "Ctx");
  const auto* forward = dynamic_cast<const ForwardOnly*>(w.kind);
  ASSERT_NE(forward, nullptr);
  EXPECT_EQ(forward->decode_steps(), D);
}

TEST(BuildWorkload, ChooseKindMakesTheDescribedKind) {
  models::Workload w;
  choose_kind(w);
  EXPECT_EQ(w.kind, &training_step());
  w.forward_run = models::ForwardRun{{{graph::Phase::kPrefill, 0, 0, 0}}, 1, ""};
  choose_kind(w);
  EXPECT_EQ(w.kind->name(), "forward-only");
  EXPECT_EQ(w.kind->context_symbol(), "");
}

std::string first_error(const Options& o) {
  try {
    build_workload(o);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "no error";
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

// Each command line breaks the check named and every later one: the
// limits, the framework's name, the flags of other frameworks, the
// framework's own checks, the decoder-only --cp_algo, the decoder-only
// mixer flags.
TEST(BuildWorkload, ChecksRunInOrder) {
  Options o;
  o.model = "transformer";
  o.num_stacks = 2;
  o.component_flags["--window"] = 8;  // a decoder's mixer flag
  EXPECT_TRUE(starts_with(first_error(o), "--window belongs to a mixer of the decoder models"))
      << first_error(o);
  o.cp_algo = "ring";  // a decoder's attention kernel
  EXPECT_TRUE(starts_with(first_error(o), "--cp_algo ")) << first_error(o);
  o.framework = "megatron";  // models decoders only
  EXPECT_TRUE(starts_with(first_error(o), "--framework megatron models gpt")) << first_error(o);
  o.framework = "reference";
  o.grad_dtype = DType::kBf16;  // Megatron-LM's flag
  EXPECT_NE(first_error(o).find("--grad_dtype"), std::string::npos) << first_error(o);
  o.framework = "deepspeed";
  EXPECT_TRUE(starts_with(first_error(o), "--framework 'deepspeed' is unknown")) << first_error(o);
  o.threads = 1 << 20;
  EXPECT_TRUE(starts_with(first_error(o), "--threads ")) << first_error(o);
}

}  // namespace
}  // namespace stg::workloads
