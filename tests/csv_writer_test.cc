// Tests of the module spreadsheet writer (graph/csv_writer.h) and of stg's
// extra_attr keys in the reader (graph/csv_module.h): what the writer writes
// reads back into the same graph, for the test sheets, the built-in models
// and the models after the passes.
#include "stg/graph/csv_writer.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "stg/graph/csv_module.h"
#include "stg/mesh/mesh.h"
#include "stg/models/decoder.h"
#include "stg/models/mlps/mlp_row.h"
#include "stg/models/parts/attention.h"
#include "stg/models/transformer.h"
#include "stg/passes/grad_update.h"
#include "stg/passes/insert_collectives.h"
#include "stg/passes/insert_send_recv.h"
#include "stg/passes/micro_batch.h"
#include "stg/passes/pass.h"
#include "stg/passes/pipeline.h"
#include "stg/passes/recompute.h"
#include "support/csv_sheets.h"

namespace stg::graph {
namespace {

const std::string& kData = test::kCsvData;
constexpr const char* kHeader = test::kCsvHeader;
Graph parse(std::string_view text) { return test::parse_sheet(text); }
std::string error_of(std::string_view text) { return test::sheet_error(text); }

std::string str(const std::optional<Shape>& shape) {
  // shape_str prints an empty shape as "1": tell them apart.
  return !shape ? "(none)" : shape->empty() ? "(rank 0)" : shape_str(*shape);
}

// Every field of a tensor, on one line.
std::string describe(const Tensor& t) {
  std::ostringstream s;
  auto ref = [](int i) { return std::to_string(i); };
  s << t.name << " rev=" << t.revision << " require_grads=" << t.require_grads
    << " role=" << static_cast<int>(t.role) << " placement=" << static_cast<int>(t.placement.kind)
    << ":" << t.placement.block << " micro_batch=" << t.micro_batch << " stage=" << t.stage
    << " chunk=" << t.chunk << " x1=" << ref(t.x1) << " x2=" << ref(t.x2) << " op=" << op_code(t.op)
    << " einsum=" << t.einsum << " amplifier=" << t.amplifier.str() << " axis=" << t.axis
    << " factor=" << t.factor.str() << " flops=" << t.flops.str()
    << " comm=" << coll_name(t.comm.type) << "/" << t.comm.axis << "/" << t.comm.peer.str() << "/"
    << t.comm.tag << "/" << t.comm.label << " x1_shape=" << str(t.x1_shape)
    << " x1_hidden=" << str(t.x1_hidden) << " x2_shape=" << str(t.x2_shape)
    << " x2_hidden=" << str(t.x2_hidden) << " grad_of=" << ref(t.grad_of)
    << " phase=" << static_cast<int>(t.phase) << ":" << t.phase_step << " transient=" << t.transient
    << " view=" << t.view << " extra_deps=";
  for (int d : t.extra_deps) s << d << ";";
  return s.str();
}

// write -> parse -> write gives the same text, and the parsed graph has the
// same tensors as `g`, field by field (the first few that differ are
// reported). Returns the text.
std::string expect_round_trip(const Graph& g, const std::string& what) {
  SCOPED_TRACE(what);
  const std::string text = write_module_csv(g);
  Graph back;
  try {
    back = parse_module_csv(text, what + ".csv");
  } catch (const GraphError& e) {
    ADD_FAILURE() << e.what();
    return text;
  }
  EXPECT_EQ(write_module_csv(back), text);
  EXPECT_EQ(back.size(), g.size());
  int reported = 0;
  for (size_t i = 0; i < std::min(g.size(), back.size()) && reported < 5; ++i) {
    // The views compared as expressions too, not only as printed.
    const bool same_views =
        g[i].x1_shape == back[i].x1_shape && g[i].x1_hidden == back[i].x1_hidden &&
        g[i].x2_shape == back[i].x2_shape && g[i].x2_hidden == back[i].x2_hidden;
    if (describe(g[i]) == describe(back[i]) && same_views) continue;
    ++reported;
    EXPECT_EQ(describe(g[i]), describe(back[i]));
    EXPECT_TRUE(same_views) << g[i].id();
  }
  return text;
}

// The extra_attr field of the row of tensor `id` in `text` (as written:
// quoted), "" when empty.
std::string extra_attr_of(const std::string& text, const std::string& id) {
  const size_t start = text.find("\n" + id + ",");
  if (start == std::string::npos) return "(no row " + id + ")";
  const size_t end = text.find('\n', start + 1);
  const std::string line = text.substr(start + 1, end - start - 1);
  if (line.back() == ',') return "";
  const size_t quote = line.find(",\"{");
  return quote == std::string::npos ? "(unquoted)" : line.substr(quote + 1);
}

// ---------------------------------------------------------------------------
// Round trips.

TEST(CsvWriter, RoundTripsEveryTestSheet) {
  int sheets = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kData)) {
    if (entry.path().extension() != ".csv") continue;
    ++sheets;
    const Graph g = read_module_csv(entry.path().string());
    expect_round_trip(g, entry.path().filename().string());
  }
  EXPECT_GE(sheets, 4);
}

TEST(CsvWriter, WritesReferenceSheetsAsReferenceSheets) {
  // No stg key where the reader's defaults hold: mlp.csv has no extra_attr.
  const std::string mlp = write_module_csv(read_module_csv(kData + "mlp.csv"));
  EXPECT_EQ(mlp.substr(0, mlp.find('\n', std::string_view(kHeader).size() + 1) + 1),
            std::string(kHeader) + "x,N,,,T,,\"Batch/dp,Seq/sp,Dmodel\",1,,,,\n");
  EXPECT_NE(mlp.find("\nh,N,x,w1,M,\"bsm,mf->bsf\",\"Batch/dp,Seq/sp,Dmodel\",1,\"Dmodel,Dff/tp\","
                     "1,,\n"),
            std::string::npos);
  EXPECT_NE(mlp.find("\na,N,h,,E,1/2,"), std::string::npos);
  EXPECT_NE(mlp.find("\ndw1,N,dh,x,M,\"bsf,bsm->mf\",\"Batch/dp,Seq/sp,Dff/tp\",1,"
                     "\"Batch/dp,Seq/sp,Dmodel\",1,w1,\n"),
            std::string::npos);
  EXPECT_EQ(mlp.find("{"), std::string::npos);

  // data_deps as the reference writes them; op attributes of every form.
  const std::string attn = write_module_csv(read_module_csv(kData + "fused_attention.csv"));
  EXPECT_EQ(extra_attr_of(attn, "attn"),
            "\"{\"\"data_deps\"\": [\"\"k_full\"\", \"\"v_full\"\"]}\"");
  EXPECT_EQ(extra_attr_of(attn, "dk"), "");
  const std::string ops = write_module_csv(read_module_csv(kData + "ops.csv"));
  for (const char* row :
       {"\nkv,N,x,,SLICE,-1:2*Dmodel/tp,", "\nrouted,N,qk,,B,1*KExperts,",
        "\nback,N,routed,,B,1*1/KExperts,", "\ncat,N,back,q,C,2,", "\nqk,N,q,k@1,E2,1/4,",
        "\nk@1,N,k,,E,2,", "\nscore,N,flat,,CUSTOM,7*Batch*Dmodel*Seq/(dp*tp),"})
    EXPECT_NE(ops.find(row), std::string::npos) << row;
}

TEST(CsvWriter, RoundTripsBuiltInModels) {
  using namespace models;
  const BlockSpec gpt;
  BlockSpec llama, moe_block;
  llama.mlp_options = {1};  // gated
  moe_block.mlp = &experts_row();
  llama.mixer_options = moe_block.mixer_options = AttentionOptions{.grouped = true}.list();
  expect_round_trip(build_decoder({.spec = uniform_decoder(2, gpt), .tpsp = true}).graph,
                    "gpt_tpsp");
  expect_round_trip(build_decoder({.spec = uniform_decoder(2, gpt), .tpsp = false}).graph,
                    "gpt_tp");
  expect_round_trip(build_decoder({.spec = uniform_decoder(2, llama)}).graph, "llama");
  expect_round_trip(models::build_transformer({.num_stacks = 2}).graph, "transformer");
  expect_round_trip(models::build_transformer({.num_stacks = 2, .weight_sharded = true}).graph,
                    "transformer_fsdp");
  const std::string moe = expect_round_trip(
      build_decoder({.spec = uniform_decoder(2, moe_block), .experts_per_rank = 2}).graph, "moe");
  // The model's placement and FSDP flags are what extra_attr carries.
  EXPECT_NE(moe.find("\"\"placement\"\": \"\"first\"\""), std::string::npos);
  EXPECT_NE(moe.find("\"\"placement\"\": \"\"last\"\""), std::string::npos);
  EXPECT_NE(moe.find("\"\"placement\"\": \"\"block:1\"\""), std::string::npos);
  EXPECT_NE(moe.find("\"\"transient\"\": true"), std::string::npos);
  EXPECT_NE(moe.find("\"\"flops\"\": \"\""), std::string::npos);
}

// What --dump_after writes: the graph after each pass of a pipeline.
TEST(CsvWriter, RoundTripsModelsAfterEachPass) {
  using mesh::AxisKind;
  const mesh::Mesh mesh({{"dp", "dp", 2, AxisKind::kData, "--dp"},
                         {"tp", "tp", 2, AxisKind::kTensor, "--tp"},
                         {"sp", "cp", 1, AxisKind::kSequence, "--sp"}},
                        2);
  const expr::Values values;
  for (const int zero : {0, 2}) {
    models::Model m =
        models::build_decoder({.spec = models::uniform_decoder(2, models::BlockSpec{})});
    passes::PassManager pm;
    pm.emplace<passes::ReplicateMicroBatches>(
          2, std::map<std::string, expr::Expr>{{"Batch", expr::Expr::symbol("MicroBatch")}})
        .emplace<passes::AddRecomputation>()
        .emplace<passes::AddWeightUpdates>(zero)
        .emplace<passes::AssignStages>(m.num_blocks, 1)
        .emplace<passes::InsertSendRecv>()
        .emplace<passes::InsertCollectives>(
            graph::ShardingRule{{{0, "dp"}, {1, "tp"}}, m.degree_symbols, m.claim});
    passes::Analyses analyses(mesh, values);
    std::string last;
    int passes = 0;
    pm.run(m.graph, analyses, [&](std::string_view pass, const Graph& g) {
      ++passes;
      last = expect_round_trip(g, "gpt_zero" + std::to_string(zero) + "_" + std::string(pass));
    });
    EXPECT_EQ(passes, 6);
    EXPECT_NE(last.find("\"\"role\"\": \"\"update\"\""), std::string::npos);
    EXPECT_NE(last.find("\"\"micro_batch\"\": -1"), std::string::npos);
    EXPECT_NE(last.find("\"\"micro_batch\"\": 1"), std::string::npos);
    EXPECT_NE(last.find("\"\"stage\"\": 1"), std::string::npos);
    EXPECT_NE(last.find(",SEND,"), std::string::npos);
    EXPECT_NE(last.find(",RECV,"), std::string::npos);
    EXPECT_NE(last.find(",COLL,ALL_REDUCE,"), std::string::npos);
  }
}

TEST(CsvWriter, WritesKeysOnlyWhereTheReadersDefaultsDiffer) {
  Graph g;
  g.weight("w", "D");
  g.input("x", "B, D");
  g.einsum("y", "x", "w", "bd,d->b", "B, D", "D");
  g.input("dy", "B", "y");
  g.einsum("dw", "dy", "x", "b,bd->d", "B", "B, D", "w");  // role gradient, inferred
  g.add_op("dw_sum", "dw", "dw", "D", "w");                // an activation though grad_of w
  g.custom("k", "x", "B*D", "B, D", "B");
  g.flops("2*B*D");
  g.identity("late", "k", "B");
  g.mutable_tensor(g.at("late")).phase =
      graph::Phase::kBackwardInput;       // not what the reader infers
  g.identity("after_late", "late", "B");  // backward inferred from `late`
  g.mark_backward({"dy", "dw", "dw_sum", "after_late"});
  g.identity("fwd_again", "after_late", "B");
  g.mutable_tensor(g.at("fwd_again")).phase = graph::Phase::kForward;
  // Serving phases, which the "backward" key cannot say.
  g.identity("prefill", "x", "B, D");
  g.mutable_tensor(g.at("prefill")).phase = graph::Phase::kPrefill;
  g.identity("decode", "prefill", "B, D");
  g.mutable_tensor(g.at("decode")).phase = graph::Phase::kDecode;
  g.mutable_tensor(g.at("decode")).phase_step = 3;
  Tensor& x = g.mutable_tensor(g.at("x"));
  x.placement = {Placement::Kind::kFirst, 0};
  x.micro_batch = 3;
  x.transient = true;
  g.mutable_tensor(g.at("y")).placement = {Placement::Kind::kLast, 2};
  g.mutable_tensor(g.at("dy")).extra_deps = {g.at("x")};
  const std::string text = expect_round_trip(g, "keys");
  EXPECT_EQ(extra_attr_of(text, "w"), "");
  EXPECT_EQ(extra_attr_of(text, "x"),
            R"("{""placement"": ""first"", ""micro_batch"": 3, ""transient"": true}")");
  EXPECT_EQ(extra_attr_of(text, "y"), R"("{""placement"": ""last:2""}")");
  EXPECT_EQ(extra_attr_of(text, "dy"), R"("{""data_deps"": [""x""]}")");
  EXPECT_EQ(extra_attr_of(text, "dw"), "");
  EXPECT_EQ(extra_attr_of(text, "dw_sum"), R"("{""role"": ""activation""}")");
  EXPECT_EQ(extra_attr_of(text, "k"), R"("{""flops"": ""2*B*D""}")");
  EXPECT_EQ(extra_attr_of(text, "late"), R"("{""backward"": true}")");
  EXPECT_EQ(extra_attr_of(text, "after_late"), "");
  EXPECT_EQ(extra_attr_of(text, "fwd_again"), R"("{""backward"": false}")");
  EXPECT_EQ(extra_attr_of(text, "prefill"), R"("{""phase"": ""prefill""}")");
  EXPECT_EQ(extra_attr_of(text, "decode"), R"("{""phase"": ""decode:3""}")");
}

TEST(CsvWriter, RoundTripsCommOpsAndStages) {
  Graph g;
  g.input("x", "B/dp, D");
  g.weight("w", "D, F/tp");
  g.einsum("y", "x", "w", "bd,df->bf", "B/dp, D", "D, F/tp");
  g.mutable_tensor(g.at("y")).stage = 1;
  g.mutable_tensor(g.at("y")).chunk = 2;
  auto comm = [&](const std::string& name, Op op, const std::string& x1, const char* view) {
    Tensor t;
    t.name = name;
    t.op = op;
    t.x1 = g.at(x1);
    t.x1_shape = parse_shape(view);
    t.x1_hidden = parse_shape("1");
    return g.add(std::move(t));
  };
  const int gather = comm("y.x1comm0", Op::kCollective, "y", "B/dp, F/tp");
  Tensor& c = g.mutable_tensor(gather);
  c.comm.type = CollType::kAllGather;
  c.comm.axis = 1;
  c.comm.label = "y@0_X1COMM";
  c.x2_shape = parse_shape("B/dp, F");
  c.x2_hidden = parse_shape("1");
  const int send = comm("y.send2", Op::kSend, "y.x1comm0", "B/dp, F");
  g.mutable_tensor(send).comm.peer = mesh::Peer::on_stage(2);
  g.mutable_tensor(send).comm.tag = 7;
  const int recv = comm("shadow_y", Op::kRecv, "y.x1comm0", "B/dp, F");
  g.mutable_tensor(recv).comm.peer = mesh::Peer::along(1, -1);
  g.mutable_tensor(recv).stage = 2;
  const int reduce = comm("r", Op::kCollective, "shadow_y", "B/dp, F");
  g.mutable_tensor(reduce).x2_shape = parse_shape("B/dp, F");
  g.mutable_tensor(reduce).x2_hidden = parse_shape("1");
  const std::string text = expect_round_trip(g, "comm");
  EXPECT_NE(text.find("\ny.x1comm0,N,y,,COLL,ALL_GATHER,\"B/dp,F/tp\",1,\"B/dp,F\",1,,"
                      "\"{\"\"comm_axis\"\": 1, \"\"label\"\": \"\"y@0_X1COMM\"\"}\"\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(extra_attr_of(text, "y"), R"("{""stage"": 1, ""chunk"": 2}")");
  EXPECT_EQ(extra_attr_of(text, "y.send2"), R"("{""peer"": ""stage:2"", ""tag"": 7}")");
  EXPECT_EQ(extra_attr_of(text, "shadow_y"), R"("{""stage"": 2, ""peer"": ""axis:1:-1""}")");
  EXPECT_NE(text.find("\nr,N,shadow_y,,COLL,ALL_REDUCE,"), std::string::npos);
}

TEST(CsvWriter, QuotesFieldsWithCommasQuotesAndLineEnds) {
  Graph g;
  g.input("a,b", "B");
  g.identity("say \"hi\"\r\nthere", "a,b", "B");
  g.identity("c", "say \"hi\"\r\nthere", "B");
  g.mutable_tensor(2).extra_deps = {0};
  const std::string text = expect_round_trip(g, "quoting");
  EXPECT_NE(text.find("\n\"a,b\",N,,,T,,B,1,,,,\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\n\"say \"\"hi\"\"\r\nthere\",N,\"a,b\",,I,"), std::string::npos) << text;
  EXPECT_NE(text.find(R"(,"{""data_deps"": [""a,b""]}")"), std::string::npos) << text;
  EXPECT_EQ(parse(text)[1].name, "say \"hi\"\r\nthere");
}

// ---------------------------------------------------------------------------
// The reader's side of stg's keys.

TEST(CsvModuleExtraAttr, ReadsEachKey) {
  const Graph g = read_module_csv(kData + "stg_keys.csv");
  auto t = [&](const char* id) -> const Tensor& { return g[g.at(id)]; };
  using Kind = Placement::Kind;
  // placement
  EXPECT_EQ(t("x").placement.kind, Kind::kFirst);
  EXPECT_EQ(t("w").placement.kind, Kind::kBlock);
  EXPECT_EQ(t("w").placement.block, 1);
  EXPECT_EQ(t("w@1").placement.kind, Kind::kLast);
  // micro_batch
  EXPECT_EQ(t("w").micro_batch, -1);
  EXPECT_EQ(t("dw").micro_batch, 1);
  EXPECT_EQ(t("h").micro_batch, 0);
  // transient
  EXPECT_TRUE(t("w_full").transient);
  EXPECT_TRUE(t("w_again").transient);
  EXPECT_FALSE(t("h").transient);
  // flops
  EXPECT_EQ(t("attn").flops, expr::Expr::parse("4*Batch*Seq**2*Dff/dp"));
  EXPECT_TRUE(t("h").flops.is_zero());
  // role: given, or inferred from require_grads and grad_of
  EXPECT_EQ(t("w").role, Role::kWeight);
  EXPECT_EQ(t("w@1").role, Role::kUpdate);
  EXPECT_EQ(t("dw").role, Role::kActivation);  // would be a gradient of w
  EXPECT_EQ(t("x").role, Role::kActivation);
  // backward: given, or inferred from grad_of and the inputs as read
  EXPECT_TRUE(t("dh").is_backward());
  EXPECT_TRUE(t("w_again").is_backward());  // waits for dh
  EXPECT_TRUE(t("dw").is_backward());
  EXPECT_FALSE(t("w@1").is_backward());  // reads dw but says otherwise
  EXPECT_FALSE(t("attn").is_backward());

  // Keys override the inference; tensors without keys follow the given ones.
  const Graph h =
      parse(std::string(kHeader) +
            "x,N,,,T,,B,1,,,,\"{\"\"backward\"\": true}\"\n"
            "y,N,x,,E,1,B,1,,,,\n"
            "dy,N,,,T,,B,1,,,y,\"{\"\"backward\"\": false, \"\"role\"\": "
            "\"\"weight\"\"}\"\n"
            "z,N,dy,,I,,B,1,,,,\"{\"\"flops\"\": 12, \"\"placement\"\": \"\"block\"\"}\"\n"
            "u,N,z,,I,,B,1,,,,\"{\"\"flops\"\": \"\"0.5*B\"\", \"\"micro_batch\"\": 0}\"\n");
  EXPECT_TRUE(h[1].is_backward());  // reads x
  EXPECT_FALSE(h[2].is_backward());
  EXPECT_EQ(h[2].role, Role::kWeight);
  EXPECT_FALSE(h[2].require_grads);
  EXPECT_FALSE(h[3].is_backward());  // reads only dy
  EXPECT_EQ(h[3].flops, expr::Expr::constant(12));
  EXPECT_EQ(h[3].placement.kind, Placement::Kind::kBlock);
  EXPECT_EQ(h[4].flops, expr::Expr::parse("B/2"));

  const Graph c =
      parse(std::string(kHeader) +
            "x,N,,,T,,B,1,,,,\"{\"\"stage\"\": 3, \"\"chunk\"\": 1}\"\n"
            "g,N,x,,COLL,REDUCE_SCATTER,B,1,B/tp,1,,"
            "\"{\"\"comm_axis\"\": 2, \"\"label\"\": \"\"x_rs\"\"}\"\n"
            "s,N,g,,SEND,,B/tp,1,,,,\"{\"\"peer\"\": \"\"axis:0:+1\"\", \"\"tag\"\": 4}\"\n"
            "r,N,g,,RECV,,B/tp,1,,,,\"{\"\"peer\"\": \"\"stage:1\"\"}\"\n");
  EXPECT_EQ(c[0].stage, 3);
  EXPECT_EQ(c[0].chunk, 1);
  EXPECT_EQ(c[1].op, Op::kCollective);
  EXPECT_EQ(c[1].comm.type, CollType::kReduceScatter);
  EXPECT_EQ(c[1].comm.axis, 2);
  EXPECT_EQ(c[1].comm.label, "x_rs");
  EXPECT_EQ(shape_str(c.result(1).y_shape), "B/tp");
  EXPECT_EQ(c[2].op, Op::kSend);
  EXPECT_EQ(c[2].comm.peer, mesh::Peer::along(0, 1));
  EXPECT_EQ(c[2].comm.tag, 4);
  EXPECT_EQ(c[3].op, Op::kRecv);
  EXPECT_EQ(c[3].comm.peer, mesh::Peer::on_stage(1));
  EXPECT_EQ(c[3].comm.axis, -1);  // the default
}

TEST(CsvModuleExtraAttr, RejectsUnknownKeysAndBadValuesNamingRowAndColumn) {
  const std::string x =
      std::string(kHeader) + "x,N,,,T,,B,1,,,,\"{\"\"role\"\": \"\"weight\"\"}\"\n";
  // A sheet with stg's keys is told all of them; a reference-style sheet the
  // reference's data_deps (csv_module_test.cc).
  EXPECT_EQ(error_of(x + "y,N,x,,I,,B,1,,,,\"{\"\"colour\"\": 1}\"\n"),
            "t.csv row 3, column extra_attr: unsupported key 'colour' (supported: data_deps, "
            "role, placement, micro_batch, stage, chunk, backward, phase, transient, view, flops, "
            "element_bytes, tied, selective_recompute, comm_axis, "
            "peer, tag, label)");
  EXPECT_EQ(error_of(std::string(kHeader) + "y,N,,,T,,B,1,,,,\"{\"\"Role\"\": 1}\"\n"),
            "t.csv row 2, column extra_attr: unsupported key 'Role' (supported: data_deps)");
  auto bad = [&](const std::string& attr) {
    std::string quoted;
    for (char c : attr) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    return error_of(x + "y,N,x,,I,,B,1,,,,\"" + quoted + "\"\n");
  };
  EXPECT_EQ(bad(R"({"role": "boss"})"),
            "t.csv row 3, column extra_attr: key 'role': expected \"activation\", \"weight\", "
            "\"gradient\", \"update\", \"optimizer\" or \"persistent\", got \"boss\"");
  EXPECT_EQ(bad(R"({"placement": "middle"})"),
            "t.csv row 3, column extra_attr: key 'placement': expected \"first\", \"last\" or "
            "\"block:<index>\", got \"middle\"");
  EXPECT_EQ(bad(R"({"placement": "block:-1"})").substr(0, 54),
            "t.csv row 3, column extra_attr: key 'placement': expec");
  EXPECT_EQ(bad(R"({"placement": "block:2x"})").substr(0, 54),
            "t.csv row 3, column extra_attr: key 'placement': expec");
  EXPECT_EQ(bad(R"({"micro_batch": "two"})"),
            "t.csv row 3, column extra_attr: key 'micro_batch': expected an integer, got \"two\"");
  EXPECT_EQ(bad(R"({"micro_batch": 1.5})"),
            "t.csv row 3, column extra_attr: key 'micro_batch': expected an integer, got 1.5");
  EXPECT_EQ(bad(R"({"micro_batch": 4294967296})"),
            "t.csv row 3, column extra_attr: key 'micro_batch': expected an integer, got "
            "4294967296");
  EXPECT_EQ(bad(R"({"backward": "yes"})"),
            "t.csv row 3, column extra_attr: key 'backward': expected true or false, got \"yes\"");
  EXPECT_EQ(bad(R"({"transient": 1})"),
            "t.csv row 3, column extra_attr: key 'transient': expected true or false, got 1");
  EXPECT_EQ(bad(R"({"flops": ""})"),
            "t.csv row 3, column extra_attr: key 'flops': expected an expression such as "
            "\"4*Seq**2*Dmodel/tp\", got \"\"");
  EXPECT_EQ(bad(R"({"peer": "axis:1"})"),
            "t.csv row 3, column extra_attr: key 'peer': expected \"stage:<stage>\" or "
            "\"axis:<axis>:<offset>\", got \"axis:1\"");
  EXPECT_EQ(bad(R"({"label": 5})"),
            "t.csv row 3, column extra_attr: key 'label': expected a string, got 5");
  EXPECT_EQ(error_of(x + "y,N,x,,COLL,ALL_SUM,B,1,B,1,,\n"),
            "t.csv row 3, column op_attr: op COLL needs its collective as op_attr (ALL_REDUCE, "
            "ALL_GATHER, REDUCE_SCATTER, ALL_TO_ALL), got 'ALL_SUM'");
  EXPECT_EQ(error_of(x + "y,N,x,,SEND,,B,1,B,1,,\n"),
            "t.csv row 3, column x2_shape: op SEND has no second view; x2_shape must be empty");
  EXPECT_NE(bad(R"({"flops": "Seq/("})")
                .find("t.csv row 3, column extra_attr: key 'flops': cannot parse expression "
                      "'Seq/('"),
            std::string::npos);
}

}  // namespace
}  // namespace stg::graph
