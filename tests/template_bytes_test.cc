// The v0.0.4 writer (emit::stage_template: the one encoder, which serialises a stage
// once and splices each rank's pg_name / comm_dst / comm_src into the bytes)
// must write exactly the bytes of the libprotobuf writer (emit::append_trace
// with Schema::kV004). Checked on real graphs, rank by rank:
//   - every golden case (the flags recorded in tests/data/golden/*.json, the
//     cases of tests/e2e_test.cc), read at start-up so a new golden case is
//     covered without editing this file: every rank;
//   - cases beyond those: pipeline schedules (gpipe, 1f1b, interleaved), pp 4,
//     moe with ep, --units physical, recomputation, ZeRO stages, and a deep
//     pipeline (pp 64, 256 ranks) whose group ids and peer ranks exceed 127:
//     every rank; two runs of 16384 and 32768 ranks whose group ids exceed
//     16383: a sample of ranks;
//   - every stage's first rank again with its group ids and ranks shifted
//     past 16383, 2^21, 2^28 (and group ids past 2^40), so every varint the
//     splice writes (node size, attribute size, int32 peer) and long pg_name
//     strings take their multi-byte forms;
//   - a hand-built stage with peers along a mesh axis (only --module_csv
//     sheets make those), both directions, with wrap-around, and a node
//     longer than 16383 bytes.
// The pipeline is the library's (stg/generate.h), run in-process: no files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cli/flag_text.h"
#include "stg/emit/flat_writer.h"
#include "stg/emit/stage_template.h"
#include "stg/emit/trace_writer.h"
#include "stg/generate.h"
#include "stg/graph/graph.h"
#include "stg/mesh/rank_layout.h"
#include "stg/models/families/registry.h"
#include "stg/options.h"
#include "stg/passes/pass.h"
#include "stg/trace_format.h"
#include "stg/workloads/build_workload.h"
#include "support/files.h"
#include "support/stage_schedule.h"

namespace stg::template_bytes {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using emit::Schema;
using emit::StageTemplate;

// ---------------------------------------------------------------------------
// Flags -> Options.

std::vector<std::string> split_args(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

bool parse_bool(const std::string& flag, const std::string& v) {
  if (v == "1" || v == "true") return true;
  if (v == "0" || v == "false") return false;
  throw std::invalid_argument(flag + " " + v + ": not a boolean");
}

int64_t parse_int(const std::string& flag, const std::string& v) {
  size_t used = 0;
  const int64_t n = std::stoll(v, &used);
  if (used != v.size()) throw std::invalid_argument(flag + " " + v + ": not a whole number");
  return n;
}

// The flags the golden and extra cases use; anything else, or a flag given
// twice, throws (a new golden case with a new flag must extend this, not be
// half-read).
Options options_from(const std::vector<std::string>& args) {
  Options o;
  o.threads = 1;
  if (args.size() % 2 != 0) throw std::invalid_argument("flags must come in pairs");
  std::set<std::string> seen;
  for (size_t i = 0; i < args.size(); i += 2) {
    const std::string& f = args[i];
    const std::string& v = args[i + 1];
    if (!seen.insert(f).second) throw std::invalid_argument("flag " + f + " given twice");
    auto n = [&] { return parse_int(f, v); };
    auto yes = [&] { return parse_bool(f, v); };
    if (f == "--model_type") {
      o.model = stg::models::find_family(v).name;
    } else if (f == "--chakra_schema_version") {
      o.schema = cli::parse_schema(v);
    } else if (f == "--dp") {
      o.degree["dp"] = n();
    } else if (f == "--tp") {
      o.degree["tp"] = n();
    } else if (f == "--sp") {
      o.degree["sp"] = n();
    } else if (f == "--pp") {
      o.degree["pp"] = n();
    } else if (f == "--ep") {
      o.degree["ep"] = n();
    } else if (f == "--weight_sharded") {
      o.weight_sharded = yes();
    } else if (f == "--zero_stage") {
      o.zero_stage = static_cast<int>(n());
    } else if (f == "--num_stacks") {
      o.num_stacks = n();
    } else if (f == "--din") {
      o.din = n();
    } else if (f == "--dout") {
      o.dout = n();
    } else if (f == "--dmodel") {
      o.dmodel = n();
    } else if (f == "--dff") {
      o.dff = n();
    } else if (f == "--seq") {
      o.seq = n();
    } else if (f == "--head") {
      o.head = n();
    } else if (f == "--kvhead") {
      o.component_flags["--kvhead"] = n();
    } else if (f == "--batch") {
      o.batch = n();
    } else if (f == "--micro_batch") {
      o.micro_batch = n();
    } else if (f == "--dvocal") {
      o.dvocal = n();
    } else if (f == "--experts") {
      o.component_flags["--experts"] = n();
    } else if (f == "--kexperts") {
      o.component_flags["--kexperts"] = n();
    } else if (f == "--tpsp") {
      o.tpsp = yes();
    } else if (f == "--activation_recompute") {
      o.activation_recompute = yes() ? Recompute::kFull : Recompute::kNone;
    } else if (f == "--mixed_precision") {
      o.mixed_precision = yes();
    } else if (f == "--pipeline_schedule") {
      o.pipeline_schedule = cli::parse_schedule(v);
    } else if (f == "--virtual_stages") {
      o.virtual_stages = static_cast<int>(n());
    } else if (f == "--units") {
      o.units = cli::parse_units(v);
    } else if (f == "--dtype") {
      o.dtype = cli::parse_dtype(v);
    } else {
      throw std::invalid_argument("flag " + f + " is not handled by template_bytes_test.cc");
    }
  }
  return o;
}

// ---------------------------------------------------------------------------
// The cases.

struct Case {
  std::string name;
  std::string args;
  // Compare ranks 0, step, 2*step, ... and the first and last rank of each
  // stage (1: every rank; larger only for runs of thousands of ranks).
  int64_t rank_step = 1;
  // The compared ranks must write a pg_name above group_above and a peer
  // rank above peer_above, so the case covers the values it was added for
  // (-1: no such requirement).
  int64_t group_above = -1, peer_above = -1;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name << ": " << c.args; }

fs::path golden_dir() { return fs::path(STG_TEST_DATA) / "golden"; }

// tests/data/golden/<name>.json: {"args": "<stg flags>", "ranks": ...}.
std::vector<Case> golden_cases() {
  std::vector<Case> cases;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(golden_dir(), ec)) {
    if (e.path().extension() != ".json") continue;
    const json doc = json::parse(stg_test::read_file(e.path()));
    cases.push_back({"golden_" + e.path().stem().string(), doc.at("args").get<std::string>()});
  }
  std::sort(cases.begin(), cases.end(),
            [](const Case& a, const Case& b) { return a.name < b.name; });
  return cases;
}

// Small dimensions: the work depends on the number of nodes, not on sizes.
std::string decoder(const std::string& model, int stacks, int batch, const std::string& rest) {
  std::string flags = "--model_type " + model + " --num_stacks " + std::to_string(stacks) +
                      " --dmodel 64 --dff 128 --head 8 --seq 64 --batch " + std::to_string(batch) +
                      " --dvocal 256";
  if (model != "gpt") flags += " --kvhead 4";
  if (model == "moe") flags += " --experts 4 --kexperts 2";
  return flags + " " + rest;
}

std::vector<Case> extra_cases() {
  return {
      {"gpt_dp2_tp2_pp2_gpipe_mb4",
       decoder("gpt", 2, 8, "--dp 2 --tp 2 --pp 2 --micro_batch 2 --pipeline_schedule gpipe")},
      {"gpt_dp2_tp2_pp2_1f1b_mb4",
       decoder("gpt", 2, 8, "--dp 2 --tp 2 --pp 2 --micro_batch 2 --pipeline_schedule 1f1b")},
      {"gpt_dp2_pp2_interleaved_v2_mb4",
       decoder("gpt", 4, 8,
               "--dp 2 --pp 2 --micro_batch 2 --pipeline_schedule interleaved "
               "--virtual_stages 2")},
      {"gpt_tp2_pp4_1f1b_mb4",
       decoder("gpt", 4, 8, "--tp 2 --pp 4 --micro_batch 2 --pipeline_schedule 1f1b")},
      {"moe_dp2_tp2_pp2_ep2_1f1b_mb2",
       decoder("moe", 2, 8,
               "--dp 2 --tp 2 --pp 2 --ep 2 --micro_batch 4 --pipeline_schedule 1f1b")},
      {"moe_dp2_sp2_ep2_zero2", decoder("moe", 2, 8, "--dp 2 --sp 2 --ep 2 --zero_stage 2")},
      {"llama_physical_fp32_recompute_zero1",
       decoder("llama", 2, 8,
               "--dp 2 --tp 2 --pp 2 --units physical --dtype fp32 --activation_recompute 1 "
               "--zero_stage 1")},
      {"llama_physical_mixed_sp2_fsdp",
       decoder("llama", 2, 8,
               "--dp 2 --sp 2 --pp 2 --units physical --mixed_precision 1 --weight_sharded 1")},
      {"transformer_physical_dp2_tp2_pp2",
       "--num_stacks 2 --dmodel 64 --dff 128 --head 8 --seq 64 --batch 8 --din 256 --dout 256 "
       "--dp 2 --tp 2 --pp 2 --units physical"},
      // 256 ranks, 256 groups: pg_name values and peer ranks past 127.
      {"gpt_dp2_tp2_pp64", decoder("gpt", 64, 8, "--dp 2 --tp 2 --pp 64"), 1, 127, 127},
      // Group ids past 16383 need more than 16383 ranks (an axis has
      // ranks / degree groups, so one per rank when its degree is 1):
      // 32768 ranks, sp groups 32773..49156, peers up to 32767. A sample of
      // the ranks: all ranks of a stage share its structure.
      {"transformer_dp8192_sp2_pp2",
       "--num_stacks 2 --dmodel 64 --dff 128 --head 8 --seq 16 --batch 8192 --din 256 "
       "--dout 256 --dp 8192 --sp 2 --pp 2",
       509, 16383, 16383},
      // 16384 ranks, expert-parallel (all-to-all) groups 32773..40964, peers
      // up to 16383 (the largest two-byte varint).
      {"moe_dp4096_ep2_pp2", decoder("moe", 2, 8192, "--dp 4096 --ep 2 --pp 2"), 257, 16383, 16382},
  };
}

std::vector<Case> all_cases() {
  std::vector<Case> cases = golden_cases();
  for (Case& c : extra_cases()) cases.push_back(std::move(c));
  return cases;
}

// ---------------------------------------------------------------------------
// Comparison.

std::string libprotobuf_bytes(const StageGraph& stage, const RankBinding& b) {
  std::string out;
  emit::append_trace(out, stage, b, Schema::kV004);
  return out;
}

std::string template_bytes(const StageTemplate& t, const RankBinding& b) {
  std::string out;
  t.append_rank(out, b);
  return out;
}

std::string hex_around(const std::string& s, size_t at) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  const size_t from = at < 8 ? 0 : at - 8;
  for (size_t i = from; i < std::min(s.size(), at + 8); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    out += i == at ? '[' : ' ';
    out += kHex[c >> 4];
    out += kHex[c & 15];
    if (i == at) out += ']';
  }
  return out;
}

// Adds a failure naming `what`, the first differing byte and the bytes
// around it unless the two are equal; returns whether they are.
bool expect_same_bytes(const std::string& what, const std::string& want, const std::string& got) {
  if (want == got) return true;
  const auto diff = std::mismatch(want.begin(), want.end(), got.begin(), got.end());
  const auto at = static_cast<size_t>(diff.first - want.begin());
  ADD_FAILURE() << what << ": the template writer's bytes differ from libprotobuf's at offset "
                << at << " (sizes: libprotobuf " << want.size() << ", template " << got.size()
                << ")\n  libprotobuf:" << hex_around(want, at)
                << "\n  template:   " << hex_around(got, at);
  return false;
}

// `b` with every group id moved up by `groups` and every rank (its own and
// its peers') by `ranks`: values no small run reaches, same structure.
RankBinding shifted(RankBinding b, int64_t groups, int64_t ranks) {
  b.rank += ranks;
  for (int64_t& g : b.group_id) g += groups;
  for (int64_t& r : b.rank_on_stage) r += ranks;
  return b;
}

// Group and rank shifts crossing each varint width (peers are int32).
const std::vector<std::pair<int64_t, int64_t>> kShifts = {
    {int64_t{1} << 14, int64_t{1} << 14},
    {int64_t{1} << 21, int64_t{1} << 21},
    {int64_t{1} << 28, int64_t{1} << 28},
    {int64_t{1} << 40, (int64_t{1} << 31) - (int64_t{1} << 20)},
};

class TemplateBytesCase : public ::testing::TestWithParam<Case> {};

TEST_P(TemplateBytesCase, EveryRankEqualsLibprotobuf) {
  const Case& c = GetParam();
  const Options o = options_from(split_args(c.args));  // throws on a flag it does not know
  models::Workload w = workloads::build_workload(o);
  const lower::LowerOptions lo = lower_options(o, w);
  graph::Graph graph = std::move(w.model.graph);
  passes::Analyses analyses(w.mesh, w.values);
  build_pipeline(o, w).run(graph, analyses);
  std::vector<StageGraph> stages = lower_stages(graph, w, lo, 1);
  for (StageGraph& s : stages)
    stg_test::schedule_and_order(s, lo, static_cast<int>(w.mesh.stages()));
  const mesh::RankLayout layout(w.mesh);
  ASSERT_EQ(static_cast<int64_t>(stages.size()), layout.pp());

  // One template per stage, shared by the stage's ranks (as generate does).
  std::vector<StageTemplate> templates;
  for (const StageGraph& s : stages) templates.push_back(emit::stage_template(s));

  const int64_t per_stage = layout.ranks_per_stage();
  int failures = 0;
  int64_t compared = 0, max_group = 0, max_peer = 0;
  for (int64_t rank = 0; rank < layout.num_ranks() && failures < 5; ++rank) {
    const bool first_of_stage = rank % per_stage == 0;
    const bool last_of_stage = (rank + 1) % per_stage == 0;
    if (rank % c.rank_step != 0 && !first_of_stage && !last_of_stage) continue;
    const RankBinding b = layout.binding(rank);
    const auto stage = static_cast<size_t>(layout.coords_of(rank).stage);
    const std::string where = c.name + " rank " + std::to_string(rank);
    ++compared;
    if (!expect_same_bytes(where, libprotobuf_bytes(stages[stage], b),
                           template_bytes(templates[stage], b)))
      ++failures;
    for (const LoweredNode& n : stages[stage].nodes) {
      if (n.kind == NodeKind::kColl) max_group = std::max(max_group, b.group(n.axis));
      if (n.kind == NodeKind::kSend || n.kind == NodeKind::kRecv)
        max_peer = std::max(max_peer, b.peer(n.peer));
    }
    if (!first_of_stage) continue;
    for (const auto& [groups, ranks] : kShifts) {
      const RankBinding s = shifted(b, groups, ranks);
      if (!expect_same_bytes(where + " shifted by " + std::to_string(groups) + " groups, " +
                                 std::to_string(ranks) + " ranks",
                             libprotobuf_bytes(stages[stage], s),
                             template_bytes(templates[stage], s)))
        ++failures;
    }
  }
  if (failures > 0) {
    ADD_FAILURE() << c.name << ": " << failures << " mismatches"
                  << (failures >= 5 ? " (stopped comparing)" : "");
    return;
  }
  EXPECT_GE(compared, std::min<int64_t>(layout.num_ranks(), 2));
  EXPECT_GT(max_group, c.group_above) << c.name << ": no pg_name above " << c.group_above;
  EXPECT_GT(max_peer, c.peer_above) << c.name << ": no peer rank above " << c.peer_above;
  RecordProperty("ranks_compared", std::to_string(compared));
}

// Named TemplateBytes/... so that --gtest_filter='TemplateBytes*' selects them.
INSTANTIATE_TEST_SUITE_P(TemplateBytes, TemplateBytesCase, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.name;
                         });

// The golden cases were found: an empty or moved directory must not pass
// silently.
TEST(TemplateBytesGolden, CasesFound) {
  EXPECT_GE(golden_cases().size(), 14u) << "golden cases missing from " << golden_dir();
}

TEST(TemplateBytesFlags, UnknownFlagThrows) {
  EXPECT_THROW(options_from({"--dp", "2", "--no_such_flag", "1"}), std::invalid_argument);
  EXPECT_THROW(options_from({"--dp"}), std::invalid_argument);
  EXPECT_THROW(options_from({"--dp", "2", "--dp", "4"}), std::invalid_argument);
  EXPECT_THROW(options_from({"--dp", "2x"}), std::invalid_argument);
}

// ---------------------------------------------------------------------------
// A hand-built stage: peers along mesh axes (offsets +1 and -1, wrapping),
// peers on other stages, collectives on two axes, empty tensor lists.

LoweredNode node(uint64_t id, std::string name, NodeKind kind, std::vector<uint64_t> deps) {
  LoweredNode n;
  n.id = id;
  n.name = std::move(name);
  n.kind = kind;
  n.data_deps = std::move(deps);
  return n;
}

StageGraph axis_peer_stage() {
  const TensorInfoRef x = make_tensor_info("x(B/dp, S, D)", "B/dp*S*D");
  const TensorInfoRef y = make_tensor_info("y(B/dp, S, D/tp)", "B/dp*S*D/tp");
  StageGraph s;
  s.stage = 1;
  LoweredNode comp = node(1, "matmul", NodeKind::kComp, {});
  comp.inputs = {x};
  comp.outputs = {y};
  comp.num_ops = 123456789;
  comp.tensor_size = 4096;
  comp.op_type = "M";
  s.nodes.push_back(comp);
  LoweredNode ar = node(2, "allreduce_tp", NodeKind::kColl, {1});
  ar.inputs = {y};
  ar.outputs = {y};
  ar.axis = 1;
  ar.comm_size = 1 << 20;
  s.nodes.push_back(ar);
  // More than 16383 bytes of inputs: a three-byte node length.
  LoweredNode ag = node(300, "allgather_dp", NodeKind::kColl, {2});
  for (int i = 0; i < 1000; ++i)
    ag.inputs.push_back(make_tensor_info("t" + std::to_string(i) + "(B, S, D)", "B*S*D"));
  ag.outputs = {x};
  ag.coll = CollType::kAllGather;
  ag.axis = 0;
  ag.comm_size = 5;
  s.nodes.push_back(ag);
  LoweredNode a2a = node(301, "alltoall_tp", NodeKind::kColl, {300});
  a2a.coll = CollType::kAllToAll;
  a2a.axis = 1;
  a2a.comm_size = int64_t{1} << 40;
  s.nodes.push_back(a2a);
  for (int i = 0; i < 4; ++i) {
    const bool send = i % 2 == 0;
    LoweredNode p = node(static_cast<uint64_t>(20000 + i), send ? "ring_send" : "ring_recv",
                         send ? NodeKind::kSend : NodeKind::kRecv, {301});
    p.inputs = {y};
    p.peer = mesh::Peer::along(i < 2 ? 1 : 0, i < 2 ? 1 : -1);
    p.comm_size = 77;
    p.tag = 1000 + i;
    s.nodes.push_back(p);
  }
  LoweredNode to_next = node(3000000, "send_next", NodeKind::kSend, {20003});
  to_next.peer = mesh::Peer::on_stage(2);
  to_next.comm_size = 9;
  to_next.tag = 7;
  s.nodes.push_back(to_next);
  LoweredNode from_prev = node(3000001, "recv_prev", NodeKind::kRecv, {});
  from_prev.peer = mesh::Peer::on_stage(0);
  from_prev.comm_size = 9;
  from_prev.tag = 7;
  s.nodes.push_back(from_prev);
  return s;
}

TEST(TemplateBytesAxisPeers, EveryCoordinateEqualsLibprotobuf) {
  const StageGraph stage = axis_peer_stage();
  const StageTemplate t = emit::stage_template(stage);
  // A 4 x 3 stage (axis 0 of degree 4, axis 1 of degree 3) of 3 stages.
  const int64_t per_stage = 12;
  int failures = 0;
  for (const auto& [groups, ranks] :
       std::vector<std::pair<int64_t, int64_t>>{{0, 0}, kShifts[0], kShifts[3]}) {
    for (int64_t c1 = 0; c1 < 3; ++c1) {
      for (int64_t c0 = 0; c0 < 4; ++c0) {
        RankBinding b;
        b.rank = ranks + per_stage + c1 * 4 + c0;
        // Ids as RankLayout numbers them on stage 1 (9 groups on axis 0).
        b.group_id = {groups + 1 + 3 + c1, groups + 1 + 9 + 4 + c0};
        b.coord = {c0, c1};
        b.degree = {4, 3};
        b.stride = {1, 4};
        b.rank_on_stage = {b.rank - per_stage, b.rank, b.rank + per_stage};
        if (!expect_same_bytes("axis-peer stage, coords (" + std::to_string(c0) + ", " +
                                   std::to_string(c1) + ") shifted by " + std::to_string(ranks),
                               libprotobuf_bytes(stage, b), template_bytes(t, b)) &&
            ++failures == 5)
          return;
      }
    }
  }
}

}  // namespace
}  // namespace stg::template_bytes
