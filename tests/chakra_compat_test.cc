// stg's traces as Chakra's own readers take them (issue 30 point 5; docs/
// output-files.md "Trace formats"), each expectation from the reader's
// behaviour, not from stg's output:
//   - Chakra's published v0.0.1 schema (mlcommons/chakra et_def/et_def.proto,
//     June 2023) declares `comm_size` as uint32: its readers keep the low 32
//     bits of a larger size. A v0.0.1 run with a message of 2^32 or more is
//     refused (one line naming the largest message, pointing to v0.0.4, exit
//     status 2, nothing written); below that every size reads back whole
//     through a uint32 field.
//   - Chakra's C++ ETFeeder reads `is_cpu_op` with bool_val() and
//     `comm_priority` with int32_val(), and leaves comm_priority
//     uninitialised on a node without it: under --framework megatron,
//     --units physical and in stg infer every communication node carries
//     both so; reference mode keeps the reference's bytes (is_cpu_op as
//     int32_val, no comm_priority).
#include <google/protobuf/io/coded_stream.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "et_def_v001.pb.h"
#include "et_def_v004.pb.h"
#include "support/files.h"
#include "support/run_stg.h"
#include "support/temp_dir.h"

namespace stg::chakra_compat {
namespace {

namespace v4 = ChakraProtoMsg;
namespace v1 = ChakraProtoMsgV001;

// The length-delimited messages of a trace file.
std::vector<std::string> messages(const std::string& path) {
  const std::string data = stg_test::read_file(path);
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(data.data()),
                                            static_cast<int>(data.size()));
  std::vector<std::string> out;
  uint32_t len = 0;
  while (in.ReadVarint32(&len)) {
    std::string m;
    if (!in.ReadString(&m, static_cast<int>(len))) break;
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<v4::Node> v004_nodes(const std::string& path) {
  std::vector<v4::Node> nodes;
  const std::vector<std::string> ms = messages(path);
  for (size_t i = 1; i < ms.size(); ++i) EXPECT_TRUE(nodes.emplace_back().ParseFromString(ms[i]));
  return nodes;
}

bool is_comm(const v4::Node& n) {
  return n.type() == v4::COMM_COLL_NODE || n.type() == v4::COMM_SEND_NODE ||
         n.type() == v4::COMM_RECV_NODE;
}

int64_t comm_size_v004(const v4::Node& n) {
  for (const v4::AttributeProto& a : n.attr())
    if (a.name() == "comm_size") return a.int64_val();
  return -1;
}

std::vector<std::string> rank_files(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".et") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

// gpt, one block, tp 2 with sequence parallelism: the largest message is
// the reduce-scatter of a block part's tp-partial output, B x s x h elements
// (--units stg: sizes in elements); h = 1024, s = 8192, vocabulary 1024.
std::vector<std::string> gpt_tp2(int64_t batch, const std::string& schema, const std::string& dir) {
  return {"--model_type",
          "gpt",
          "--tp",
          "2",
          "--num_stacks",
          "1",
          "--dmodel",
          "1024",
          "--dff",
          "4096",
          "--head",
          "16",
          "--dvocal",
          "1024",
          "--seq",
          "8192",
          "--batch",
          std::to_string(batch),
          "--chakra_schema_version",
          schema,
          "--output_dir",
          dir,
          "--quiet"};
}

TEST(ChakraCompat, V001RefusesAMessageItsCommSizeCannotHold) {
  stg_test::TempDir tmp({.prefix = "stg_chakra", .keep_on_failure = true});
  const int64_t B = 512, largest = B * 8192 * 1024;  // 2^32: one more than uint32 holds
  ASSERT_EQ(largest, int64_t{1} << 32);
  // v0.0.4 (int64_val) holds it: the formula is the run's largest message.
  const std::string v4_dir = (tmp.path() / "v004").string();
  const stg_test::RunResult ok = stg_test::run_stg(gpt_tp2(B, "v0.0.4", v4_dir), tmp.path());
  ASSERT_EQ(ok.status, 0) << ok.err;
  int64_t max_size = 0;
  for (const std::string& f : rank_files(v4_dir))
    for (const v4::Node& n : v004_nodes(f))
      if (is_comm(n)) max_size = std::max(max_size, comm_size_v004(n));
  EXPECT_EQ(max_size, largest);
  // v0.0.1: refused, one line, nothing written.
  const std::filesystem::path v1_dir = tmp.path() / "v001";
  const stg_test::RunResult r = stg_test::run_stg(gpt_tp2(B, "v0.0.1", v1_dir), tmp.path());
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("error: --chakra_schema_version v0.0.1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("comm_size " + std::to_string(largest)), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("use --chakra_schema_version v0.0.4"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(v1_dir));
}

// Below 2^32 a v0.0.1 run is written, and a reader of the published schema
// (comm_size uint32) reads every size whole: the same multiset of sizes as
// v0.0.4's int64_val.
TEST(ChakraCompat, V001SizesBelow2To32ReadBackWhole) {
  stg_test::TempDir tmp({.prefix = "stg_chakra", .keep_on_failure = true});
  const int64_t B = 256;  // largest message 2^31
  const std::string v4_dir = (tmp.path() / "v004").string();
  const std::string v1_dir = (tmp.path() / "v001").string();
  ASSERT_EQ(stg_test::run_stg(gpt_tp2(B, "v0.0.4", v4_dir), tmp.path()).status, 0);
  const stg_test::RunResult r = stg_test::run_stg(gpt_tp2(B, "v0.0.1", v1_dir), tmp.path());
  ASSERT_EQ(r.status, 0) << r.err;
  const std::vector<std::string> f4 = rank_files(v4_dir), f1 = rank_files(v1_dir);
  ASSERT_EQ(f4.size(), 2u);
  ASSERT_EQ(f1.size(), f4.size());
  for (size_t i = 0; i < f4.size(); ++i) {
    std::vector<int64_t> s4, s1;
    for (const v4::Node& n : v004_nodes(f4[i]))
      if (is_comm(n)) s4.push_back(comm_size_v004(n));
    for (const std::string& m : messages(f1[i])) {
      v1::Node n;
      ASSERT_TRUE(n.ParseFromString(m));
      if (n.has_comm_size()) s1.push_back(static_cast<int64_t>(n.comm_size()));
    }
    std::sort(s4.begin(), s4.end());
    std::sort(s1.begin(), s1.end());
    EXPECT_EQ(s1, s4) << f1[i];
    ASSERT_FALSE(s4.empty());
    EXPECT_EQ(s4.back(), int64_t{1} << 31);
  }
}

// What ETFeeder reads of a communication node: is_cpu_op by bool_val()
// and comm_priority by int32_val(), each exactly once.
struct FeederView {
  int comm_nodes = 0, priority_int32_zero = 0, cpu_op_bool_false = 0, cpu_op_int32 = 0,
      priority_any = 0;
};

FeederView feeder_view(const std::filesystem::path& dir) {
  FeederView v;
  for (const std::string& f : rank_files(dir)) {
    for (const v4::Node& n : v004_nodes(f)) {
      if (!is_comm(n)) continue;
      ++v.comm_nodes;
      for (const v4::AttributeProto& a : n.attr()) {
        if (a.name() == "comm_priority") {
          ++v.priority_any;
          if (a.value_case() == v4::AttributeProto::kInt32Val && a.int32_val() == 0)
            ++v.priority_int32_zero;
        }
        if (a.name() == "is_cpu_op") {
          if (a.value_case() == v4::AttributeProto::kBoolVal && !a.bool_val())
            ++v.cpu_op_bool_false;
          if (a.value_case() == v4::AttributeProto::kInt32Val && a.int32_val() == 0)
            ++v.cpu_op_int32;
        }
      }
    }
  }
  return v;
}

const std::vector<std::string> kSmall = {
    "--model_type", "gpt", "--dp",     "2",   "--tp",          "2",    "--pp",     "2",
    "--num_stacks", "2",   "--dmodel", "256", "--dff",         "1024", "--head",   "8",
    "--seq",        "128", "--batch",  "8",   "--micro_batch", "2",    "--dvocal", "1024"};

FeederView run_and_view(const std::vector<std::string>& extra, const std::string& name) {
  stg_test::TempDir tmp({.prefix = "stg_chakra", .tag = name, .keep_on_failure = true});
  const std::filesystem::path dir = tmp.path() / "out";
  std::vector<std::string> args = extra;
  args.insert(args.end(), {"--output_dir", dir.string(), "--quiet"});
  const stg_test::RunResult r = stg_test::run_stg(args, tmp.path());
  EXPECT_EQ(r.status, 0) << name << ": " << r.err;
  return feeder_view(dir);
}

TEST(ChakraCompat, CommNodesCarryWhatEtFeederReads) {
  auto with = [](std::vector<std::string> a, const std::vector<std::string>& more) {
    a.insert(a.end(), more.begin(), more.end());
    return a;
  };
  const std::vector<std::pair<std::string, std::vector<std::string>>> runs = {
      {"megatron", with(kSmall, {"--framework", "megatron", "--pipeline_schedule", "1f1b"})},
      {"physical", with(kSmall, {"--units", "physical"})},
      {"infer", {"infer", "--model_type", "llama", "--tp",         "2",   "--pp",
                 "2",     "--num_stacks", "2",     "--dmodel",     "256", "--dff",
                 "512",   "--head",       "8",     "--kvhead",     "2",   "--dvocal",
                 "1024",  "--requests",   "8",     "--prompt_len", "32",  "--decode_steps",
                 "2"}},
  };
  for (const auto& [name, args] : runs) {
    SCOPED_TRACE(name);
    const FeederView v = run_and_view(args, name);
    ASSERT_GT(v.comm_nodes, 0);
    EXPECT_EQ(v.priority_any, v.comm_nodes);
    EXPECT_EQ(v.priority_int32_zero, v.comm_nodes);
    EXPECT_EQ(v.cpu_op_bool_false, v.comm_nodes);
    EXPECT_EQ(v.cpu_op_int32, 0);
  }
}

// Reference mode keeps the reference's bytes (parity): is_cpu_op int32_val
// 0 and no comm_priority (docs/differences.md).
TEST(ChakraCompat, ReferenceModeKeepsTheReferenceAttributes) {
  const FeederView v = run_and_view(kSmall, "reference");
  ASSERT_GT(v.comm_nodes, 0);
  EXPECT_EQ(v.priority_any, 0);
  EXPECT_EQ(v.cpu_op_int32, v.comm_nodes);
  EXPECT_EQ(v.cpu_op_bool_false, 0);
}

// docs/output-files.md: ctrl_deps come with a --pipeline_schedule, and from
// stg infer without one (its phases run in order by them); a training run
// without a schedule has none.
int64_t ctrl_deps_of(const std::vector<std::string>& args, const std::string& name) {
  stg_test::TempDir tmp({.prefix = "stg_chakra", .tag = name, .keep_on_failure = true});
  const std::filesystem::path dir = tmp.path() / "out";
  std::vector<std::string> a = args;
  a.insert(a.end(), {"--output_dir", dir.string(), "--quiet"});
  const stg_test::RunResult r = stg_test::run_stg(a, tmp.path());
  EXPECT_EQ(r.status, 0) << name << ": " << r.err;
  int64_t deps = 0;
  for (const std::string& f : rank_files(dir))
    for (const v4::Node& n : v004_nodes(f)) deps += n.ctrl_deps_size();
  return deps;
}

TEST(ChakraCompat, CtrlDepsComeWithASchedule) {
  EXPECT_EQ(ctrl_deps_of(kSmall, "training"), 0);
  std::vector<std::string> scheduled = kSmall;
  scheduled.insert(scheduled.end(), {"--pipeline_schedule", "1f1b"});
  EXPECT_GT(ctrl_deps_of(scheduled, "1f1b"), 0);
  EXPECT_GT(ctrl_deps_of({"infer", "--model_type",   "llama", "--num_stacks", "2", "--dmodel",
                          "256",   "--dff",          "512",   "--head",       "8", "--kvhead",
                          "2",     "--dvocal",       "1024",  "--requests",   "8", "--prompt_len",
                          "32",    "--decode_steps", "2"},
                         "infer"),
            0);
}

}  // namespace
}  // namespace stg::chakra_compat
