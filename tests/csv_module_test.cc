// Tests of module graphs read from CSV sharding spreadsheets
// (graph/csv_module.h) and of the model built from one (models/csv_model.h):
// small sheets written for these tests, in tests/data/csv/ and inline.
#include "stg/graph/csv_module.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <string_view>

#include "gtest/gtest.h"
#include "stg/models/csv_model.h"
#include "support/csv_sheets.h"

namespace stg::graph {
namespace {

const std::string& kData = test::kCsvData;
constexpr const char* kHeader = test::kCsvHeader;
Graph parse(std::string_view text) { return test::parse_sheet(text); }
std::string error_of(std::string_view text) { return test::sheet_error(text); }

// A shape as printed, for comparisons with readable failures.
std::string str(const std::optional<Shape>& shape) { return shape ? shape_str(*shape) : "(none)"; }
std::string str(std::string_view text) { return shape_str(parse_shape(text)); }

// ---------------------------------------------------------------------------
// Reading sheets.

TEST(CsvModule, ReadsMlpWithBackward) {
  const Graph g = read_module_csv(kData + "mlp.csv");  // has a UTF-8 BOM
  ASSERT_EQ(g.size(), 12u);
  const Tensor& x = g[g.at("x")];
  EXPECT_EQ(x.op, Op::kPlaceholder);
  EXPECT_EQ(x.x1, -1);
  EXPECT_FALSE(x.require_grads);
  EXPECT_EQ(x.role, Role::kActivation);
  EXPECT_EQ(str(x.x1_shape), str("Batch/dp, Seq/sp, Dmodel"));
  EXPECT_EQ(str(x.x1_hidden), "1");
  EXPECT_FALSE(x.x2_shape.has_value());

  const Tensor& w1 = g[g.at("w1")];
  EXPECT_TRUE(w1.require_grads);
  EXPECT_EQ(w1.role, Role::kWeight);

  const int h = g.at("h");
  EXPECT_EQ(g[h].op, Op::kEinsum);
  EXPECT_EQ(g[h].einsum, "bsm,mf->bsf");
  EXPECT_EQ(g[h].x1, g.at("x"));
  EXPECT_EQ(g[h].x2, g.at("w1"));
  EXPECT_EQ(str(g.result(h).y_shape), str("Batch/dp, Seq/sp, Dff/tp"));
  EXPECT_EQ(str(g.result(h).y_hidden), "Dmodel");  // contracted whole: not a partial sum

  const int a = g.at("a");
  EXPECT_EQ(g[a].op, Op::kElementwise);
  EXPECT_EQ(g[a].amplifier, expr::Rational(1, 2));  // "0.5"

  // y contracts the tp-sharded Dff: a partial sum over Dff/tp.
  EXPECT_EQ(str(g.result(g.at("y")).y_hidden), str("Dff/tp"));

  // Gradient links and roles.
  EXPECT_EQ(g[g.at("dy")].grad_of, g.at("y"));
  EXPECT_EQ(g[g.at("dw1")].grad_of, g.at("w1"));
  EXPECT_EQ(g[g.at("dw1")].role, Role::kGradient);
  EXPECT_EQ(g[g.at("dw2")].role, Role::kGradient);
  EXPECT_EQ(g[g.at("da")].role, Role::kActivation);
  EXPECT_EQ(str(g.result(g.at("dw1")).y_shape), str("Dmodel, Dff/tp"));
  EXPECT_EQ(str(g.result(g.at("dw1")).y_hidden), str("Batch/dp, Seq/sp"));

  // The backward pass: everything from the gradient placeholder dy on.
  for (const char* fwd : {"x", "w1", "h", "a", "w2", "y"})
    EXPECT_FALSE(g[g.at(fwd)].is_backward()) << fwd;
  for (const char* bwd : {"dy", "dw2", "da", "dh", "dw1", "dx"})
    EXPECT_TRUE(g[g.at(bwd)].is_backward()) << bwd;

  // Every tensor sits in block 0.
  for (const Tensor& t : g.tensors()) {
    EXPECT_EQ(t.placement.kind, Placement::Kind::kBlock);
    EXPECT_EQ(t.placement.block, 0);
  }
}

TEST(CsvModule, ReadsDataDepsFromExtraAttr) {
  const Graph g = read_module_csv(kData + "fused_attention.csv");
  ASSERT_EQ(g.size(), 10u);
  const Tensor& attn = g[g.at("attn")];
  EXPECT_EQ(attn.op, Op::kCustom);
  EXPECT_EQ(attn.x1, g.at("q"));
  EXPECT_EQ(attn.x2, -1);
  EXPECT_EQ(attn.extra_deps, (std::vector<int>{g.at("k_full"), g.at("v_full")}));
  EXPECT_EQ(attn.factor, expr::Expr::parse("3*Batch*Seq*Dmodel/(dp*cp*tp)"));
  EXPECT_EQ(g.result(g.at("attn")).num_ops, attn.factor);

  const int dk = g.at("dk");
  EXPECT_EQ(str(g.result(dk).y_shape), str("Batch/dp, Seq, Dmodel/Head, Head/tp"));
  EXPECT_EQ(str(g.result(dk).y_hidden), str("1/cp"));
  EXPECT_EQ(g[dk].grad_of, g.at("k"));
  EXPECT_EQ(g[g.at("dq")].extra_deps, (std::vector<int>{g.at("k_full"), g.at("v_full")}));

  for (const char* fwd : {"q", "k", "v", "k_full", "v_full", "attn"})
    EXPECT_FALSE(g[g.at(fwd)].is_backward()) << fwd;
  for (const char* bwd : {"dattn", "dq", "dk", "dv"})
    EXPECT_TRUE(g[g.at(bwd)].is_backward()) << bwd;
}

TEST(CsvModule, ReadsSliceBroadcastConcatReshapeCustomAndRevisions) {
  const Graph g = read_module_csv(kData + "ops.csv");
  ASSERT_EQ(g.size(), 11u);

  const int q = g.at("q");
  EXPECT_EQ(g[q].op, Op::kSlice);
  EXPECT_EQ(g[q].axis, 2);
  EXPECT_EQ(g[q].factor, expr::Expr::parse("Dmodel/tp"));
  EXPECT_EQ(str(g.result(q).y_shape), str("Batch/dp, Seq, Dmodel/tp"));
  const int kv = g.at("kv");
  EXPECT_EQ(g[kv].axis, -1);  // negative axes count from the end
  EXPECT_EQ(str(g.result(kv).y_shape), str("Batch/dp, Seq, 2*Dmodel/tp"));

  // qk reads k@1, defined on a later row; "k" alone means k@0.
  const int qk = g.at("qk");
  const int k1 = g.at("k@1");
  EXPECT_EQ(g[qk].op, Op::kElementwise2);
  EXPECT_EQ(g[qk].amplifier, expr::Rational(1, 4));
  EXPECT_EQ(g[qk].x2, k1);
  EXPECT_EQ(g[k1].name, "k");
  EXPECT_EQ(g[k1].revision, 1);
  EXPECT_EQ(g[k1].x1, g.at("k"));
  EXPECT_EQ(g[k1].amplifier, expr::Rational(2));

  const int routed = g.at("routed");
  EXPECT_EQ(g[routed].op, Op::kBroadcast);
  EXPECT_EQ(g[routed].axis, 1);
  EXPECT_EQ(g[routed].factor, expr::Expr::symbol("KExperts"));
  EXPECT_EQ(str(g.result(routed).y_shape), str("Batch/dp, Seq*KExperts, Dmodel/tp"));
  EXPECT_EQ(g[g.at("back")].factor, expr::Expr::parse("1/KExperts"));
  EXPECT_EQ(str(g.result(g.at("back")).y_shape), str("Batch/dp, Seq, Dmodel/tp"));

  const int cat = g.at("cat");
  EXPECT_EQ(g[cat].op, Op::kConcat);
  EXPECT_EQ(g[cat].axis, 2);
  EXPECT_EQ(str(g.result(cat).y_shape), str("Batch/dp, Seq, 2*Dmodel/tp"));

  const int flat = g.at("flat");
  EXPECT_EQ(g[flat].op, Op::kReshape);
  EXPECT_EQ(str(g.result(flat).y_shape), str("Batch*Seq/dp, 2*Dmodel/tp"));

  const int score = g.at("score");
  EXPECT_EQ(g[score].op, Op::kCustom);
  EXPECT_EQ(str(g.result(score).y_shape), str("Batch*Seq/dp, 1"));
  EXPECT_EQ(str(g.result(score).y_hidden), "tp");
  EXPECT_EQ(g.result(score).num_ops, expr::Expr::parse("7*Batch*Seq*Dmodel/(dp*tp)"));

  for (const Tensor& t : g.tensors()) EXPECT_FALSE(t.is_backward()) << t.id();  // no gradient here
}

TEST(CsvModule, ParsesQuotingLineEndsAndBlankRows) {
  // CRLF line ends, an 11-column header, a quoted shape spanning two lines,
  // blank rows (skipped, but counted), blanks around quotes, trailing commas
  // after the last column.
  const std::string text =
      "\xEF\xBB\xBF"
      "id,require_grads,x1,x2,op_type,op_attr,x1_shape,x1_hidden,x2_shape,x2_hidden,grad_of,\r\n"
      "x,N,,,T,,\"Batch,\r\n Seq\",1,,,,\r\n"
      "\r\n"
      ",,,,,,,,,,\r\n"
      "y,N,x,,E,\"1/3\", \"Batch, Seq\" ,\"1\",,,\r\n"
      "z,N,y,,I,,\"Batch ,Seq\",1,,,\r\n"
      "bad,N,z,,E,1,\"Batch, (Seq\",1,,,\r\n";
  EXPECT_EQ(error_of(text).substr(0, 32), "t.csv row 7, column x1_shape: ca");
  const Graph g = parse(text.substr(0, text.find("bad,")));
  ASSERT_EQ(g.size(), 3u);
  EXPECT_EQ(str(g[0].x1_shape), str("Batch, Seq"));
  EXPECT_EQ(g[1].amplifier, expr::Rational(1, 3));
  EXPECT_EQ(g[2].x1, 1);
}

TEST(CsvModule, ParsesDoubledQuotesAndCommasInFields) {
  const std::string text = std::string(kHeader) +
                           "a,N,,,T,,\"B, S\",1,,,,\n"
                           "b,N,,,T,,\"B, S\",1,,,,\n"
                           "c,N,a,b,M,\"bs,bs->b\",\"B, S\",1,\"B, S\",1,,"
                           "\"{\"\"data_deps\"\": []}\"\n"
                           "d,N,c,,E,1,B,\"S\",,,,\"{ \"\"data_deps\"\" : [ \"\"a@0\"\" ] }\"";
  const Graph g = parse(text);
  ASSERT_EQ(g.size(), 4u);
  EXPECT_EQ(str(g.result(2).y_shape), "B");
  EXPECT_EQ(str(g.result(2).y_hidden), "S");
  EXPECT_TRUE(g[2].extra_deps.empty());
  EXPECT_EQ(g[3].extra_deps, std::vector<int>{0});
  EXPECT_EQ(str(g[3].x1_hidden), "S");
}

TEST(CsvModule, ReadsDecimalNumbersAsExactFractions) {
  // sympy reads decimals; Expr reads integers, so the reader turns them into
  // fractions: 0.5 -> 1/2, 1.25 -> 5/4, .5 -> 1/2 (digits in names stay).
  const Graph g = parse(std::string(kHeader) +
                        "x1,N,,,T,,\"B2, S\",1,,,,\n"
                        "y,N,x1,,CUSTOM,\"0.5*B2*S + 1.25\",\"B2, S\",1,\"B2, .5*S\",1,,\n"
                        "z,N,y,y,E2,0,\"B2, S/2\",1,\"B2, S/2\",1,,\n"
                        "w,N,y,z,E2,2.50,\"B2, S/2\",1,\"B2, S/2\",1,,\n");
  EXPECT_EQ(g[1].factor, expr::Expr::parse("B2*S/2 + 5/4"));
  EXPECT_EQ(str(g.result(1).y_shape), str("B2, S/2"));
  EXPECT_EQ(g[3].amplifier, expr::Rational(5, 2));
  EXPECT_TRUE(g[2].amplifier.is_zero());
}

TEST(CsvModule, BackwardFollowsGradientPlaceholdersAndDataDeps) {
  // dz has no grad_of but reads dy (a gradient placeholder); w_use waits on
  // dy through a data dependency; u reads only forward tensors.
  const Graph g = parse(std::string(kHeader) +
                        "x,N,,,T,,B,1,,,,\n"
                        "u,N,x,,E,1,B,1,,,,\n"
                        "dy,N,,,T,,B,1,,,u,\n"
                        "dz,N,dy,,E,1,B,1,,,,\n"
                        "w_use,N,x,,I,,B,1,,,,\"{\"\"data_deps\"\": [\"\"dz\"\"]}\"\n"
                        "later,N,w_use,,I,,B,1,,,,\n");
  EXPECT_FALSE(g[g.at("x")].is_backward());
  EXPECT_FALSE(g[g.at("u")].is_backward());
  EXPECT_TRUE(g[g.at("dy")].is_backward());
  EXPECT_TRUE(g[g.at("dz")].is_backward());
  EXPECT_TRUE(g[g.at("w_use")].is_backward());
  EXPECT_TRUE(g[g.at("later")].is_backward());
}

// ---------------------------------------------------------------------------
// Errors: each names the file, the row (header = row 1) and the column.

std::string sheet(std::string_view rows) { return std::string(kHeader) + std::string(rows); }

TEST(CsvModuleErrors, BadExpression) {
  EXPECT_EQ(error_of(sheet("x,N,,,T,,\"Batch/dp, Seq\",1,,,,\n"
                           "y,N,x,,E,5,\"Batch/(dp, Seq\",1,,,,\n")),
            "t.csv row 3, column x1_shape: cannot parse expression 'Batch/(dp' at position 6: "
            "unbalanced parentheses: '(' is never closed")
      << "(the tail comes from Expr::parse)";
  EXPECT_NE(error_of(sheet("x,N,,,T,,\"B, , S\",1,,,,\n"))
                .find("t.csv row 2, column x1_shape: empty dimension in shape 'B, , S'"),
            std::string::npos);
  EXPECT_NE(error_of(sheet("x,N,,,T,,B,1/(dp,,,,\n")).find("t.csv row 2, column x1_hidden: "),
            std::string::npos);
  EXPECT_NE(error_of(sheet("x,N,,,T,,B,1,,,,\ny,N,x,,B,1*Experts+,B,1,,,,\n"))
                .find("t.csv row 3, column op_attr: cannot parse expression"),
            std::string::npos);
}

TEST(CsvModuleErrors, UnknownOpType) {
  EXPECT_EQ(error_of(sheet("x,N,,,T,,B,1,,,,\ny,N,x,,MM,,B,1,,,,\n")),
            "t.csv row 3, column op_type: unknown op type 'MM'; valid op types: T M A E E2 I R "
            "B SLICE C CUSTOM S");
  EXPECT_EQ(error_of(sheet("x,N,,,,,B,1,,,,\n")),
            "t.csv row 2, column op_type: missing op type; valid op types: T M A E E2 I R B "
            "SLICE C CUSTOM S");
}

TEST(CsvModuleErrors, UnknownIds) {
  EXPECT_EQ(error_of(sheet("x,N,,,T,,B,1,,,,\ny,N,nope,,I,,B,1,,,,\n")),
            "t.csv row 3, column x1: unknown tensor id 'nope' (no row has id nope@0)");
  EXPECT_EQ(error_of(sheet("x,N,,,T,,B,1,,,,\ny,N,x,x@2,A,,B,1,B,1,,\n")),
            "t.csv row 3, column x2: unknown tensor id 'x@2' (no row has id x@2)");
  EXPECT_EQ(error_of(sheet("x,N,,,T,,B,1,,,v2,\n")),
            "t.csv row 2, column grad_of: unknown tensor id 'v2' (no row has id v2@0)");
  EXPECT_EQ(
      error_of(sheet("x,N,,,T,,B,1,,,,\ny,N,x,,I,,B,1,,,,\"{\"\"data_deps\"\": [\"\"k1\"\"]}\"\n")),
      "t.csv row 3, column extra_attr: unknown tensor id 'k1' (no row has id k1@0)");
  EXPECT_NE(error_of(sheet("x@a,N,,,T,,B,1,,,,\n"))
                .find("t.csv row 2, column id: expected an integer revision"),
            std::string::npos);
}

TEST(CsvModuleErrors, WrongHeader) {
  const std::string expected =
      "; the header must be id,require_grads,x1,x2,op_type,op_attr,x1_shape,x1_hidden,x2_shape,"
      "x2_hidden,grad_of[,extra_attr]";
  EXPECT_EQ(error_of("id,require_grads,x1,x3,op_type,op_attr,x1_shape,x1_hidden,x2_shape,"
                     "x2_hidden,grad_of\n"),
            "t.csv row 1, column x2: wrong column header: found 'x3'" + expected);
  EXPECT_EQ(error_of("id,require_grads,x1,x2,op_type,op_attr,x1_shape,x1_hidden,x2_shape,"
                     "x2_hidden\n"),
            "t.csv row 1, column grad_of: wrong column header: missing column" + expected);
  EXPECT_EQ(error_of("id,require_grads,x1,x2,op_type,op_attr,x1_shape,x1_hidden,x2_shape,"
                     "x2_hidden,grad_of,extra_attr,more\n"),
            "t.csv row 1, column 13: wrong column header: unexpected column 'more'" + expected);
  EXPECT_EQ(error_of(""), std::string("t.csv row 1: empty file; expected the header ") +
                              expected.substr(std::string("; the header must be ").size()));
}

TEST(CsvModuleErrors, DuplicateId) {
  EXPECT_EQ(error_of(sheet("x,N,,,T,,B,1,,,,\ny,N,,,T,,B,1,,,,\nx@0,N,,,T,,B,1,,,,\n")),
            "t.csv row 4, column id: duplicate tensor id 'x@0' (first defined in row 2)");
}

TEST(CsvModuleErrors, InconsistentEinsumShapes) {
  const std::string rows =
      "x,N,,,T,,\"B, S, M\",1,,,,\n"
      "w,Y,,,T,,\"M, N\",1,,,,\n";
  EXPECT_EQ(error_of(sheet(rows + "y,N,x,w,M,\"bsm,mn->bsn\",\"B, S, M\",1,\"M/tp, N\",1,,\n")),
            "t.csv row 4, column x2_shape: einsum letter 'm' is M/tp here but M in x1_shape");
  EXPECT_EQ(error_of(sheet(rows + "y,N,x,w,M,\"bsm,mn->bsn\",\"B, M\",1,\"M, N\",1,,\n")),
            "t.csv row 4, column x1_shape: einsum 'bsm,mn->bsn' names 3 dims of x1 but "
            "x1_shape has 2 (B,M)");
  EXPECT_EQ(error_of(sheet(rows + "y,N,x,w,M,\"bsm,mn->bsq\",\"B, S, M\",1,\"M, N\",1,,\n")),
            "t.csv row 4, column op_attr: einsum output letter 'q' is in neither input of "
            "'bsm,mn->bsq'");
  EXPECT_EQ(error_of(sheet(rows + "y,N,x,w,M,\"bsm->bsn\",\"B, S, M\",1,\"M, N\",1,,\n")),
            "t.csv row 4, column op_attr: einsum 'bsm->bsn' is not of the form 'ab,bc->ac'");
  EXPECT_EQ(error_of(sheet(rows + "y,N,x,w,M,\"bsm,mn->bsn\",\"B, S, M\",tp,\"M, N\",1,,\n")),
            "t.csv row 4, column x1_hidden: an einsum input must not be a partial sum; "
            "x1_hidden must be 1, got tp");
}

TEST(CsvModuleErrors, OtherShapeErrors) {
  const std::string x = "x,N,,,T,,\"B, S\",1,,,,\n";
  EXPECT_EQ(error_of(sheet(x + "y,N,x,x,A,,\"B, S\",1,\"B, S/tp\",1,,\n")),
            "t.csv row 3, column x2_shape: x2_shape (B,S/tp) differs from x1_shape (B,S)");
  EXPECT_EQ(error_of(sheet(x + "y,N,x,,R,,\"B, S\",1,\"B, 2*S\",1,,\n")),
            "t.csv row 3, column x2_shape: reshape to B,2*S changes the element count of B,S");
  EXPECT_EQ(error_of(sheet(x + "y,N,x,,SLICE,2:S,\"B, S\",1,,,,\n")),
            "t.csv row 3, column op_attr: axis 2 is out of range for x1_shape of rank 2");
  EXPECT_EQ(error_of(sheet(x + "y,N,x,,B,\"1\",\"B, S\",1,,,,\n")),
            "t.csv row 3, column op_attr: op B needs op_attr of the form 'axis*factor', got '1'");
  EXPECT_EQ(error_of(sheet(x + "y,N,x,x,C,1,\"B, S\",1,\"2*B, S\",1,,\n")),
            "t.csv row 3, column x2_shape: tensor y@0 (C): concatenated inputs differ outside "
            "the axis");
  EXPECT_EQ(error_of(sheet(x + "y,N,x,,E,-1,\"B, S\",1,,,,\n")),
            "t.csv row 3, column op_attr: operations per element must not be negative, got '-1'");
}

TEST(CsvModuleErrors, MissingOrExtraInputsAndAttrs) {
  const std::string x = "x,N,,,T,,B,1,,,,\n";
  EXPECT_EQ(error_of(sheet(x + "y,N,,,I,,B,1,,,,\n")),
            "t.csv row 3, column x1: op I needs an input x1");
  EXPECT_EQ(error_of(sheet(x + "y,N,x,,A,,B,1,B,1,,\n")),
            "t.csv row 3, column x2: op A needs an input x2");
  EXPECT_EQ(error_of(sheet(x + "y,N,x,x,E,1,B,1,,,,\n")),
            "t.csv row 3, column x2: op E takes no input x2, got 'x'");
  EXPECT_EQ(error_of(sheet(x + "y,N,x,,R,,B,1,,,,\n")),
            "t.csv row 3, column x2_shape: op R needs x2_shape");
  EXPECT_EQ(error_of(sheet(x + "y,N,x,,I,,B,1,B,1,,\n")),
            "t.csv row 3, column x2_shape: op I has no second view; x2_shape must be empty");
  EXPECT_EQ(error_of(sheet("x,N,,,T,5,B,1,,,,\n")),
            "t.csv row 2, column op_attr: op T takes no op_attr, got '5'");
  EXPECT_EQ(error_of(sheet(x + "y,N,x,,E,,B,1,,,,\n")),
            "t.csv row 3, column op_attr: missing the number of operations per element (e.g. 5)");
  EXPECT_EQ(error_of(sheet("x,Maybe,,,T,,B,1,,,,\n")),
            "t.csv row 2, column require_grads: expected Y or N, got 'Maybe'");
  EXPECT_EQ(error_of(sheet("x,N,,,T,,,1,,,,\n")),
            "t.csv row 2, column x1_hidden: x1_hidden is given but x1_shape is empty");
}

TEST(CsvModuleErrors, ExtraAttrAndCsvSyntax) {
  const std::string x = "x,N,,,T,,B,1,,,,\n";
  EXPECT_EQ(error_of(sheet(x + "y,N,x,,I,,B,1,,,,\"{\"\"ctrl_deps\"\": [\"\"x\"\"]}\"\n")),
            "t.csv row 3, column extra_attr: ctrl_deps are not supported: stg's graph has no "
            "control dependencies (data_deps are)");
  EXPECT_EQ(error_of(sheet(x + "y,N,x,,I,,B,1,,,,\"{\"\"colour\"\": 1}\"\n")),
            "t.csv row 3, column extra_attr: unsupported key 'colour' (supported: data_deps)");
  EXPECT_NE(error_of(sheet(x + "y,N,x,,I,,B,1,,,,{data_deps}\n"))
                .find("t.csv row 3, column extra_attr: cannot parse JSON '{data_deps}'"),
            std::string::npos);
  EXPECT_EQ(error_of(sheet(x + "y,N,x,,I,,\"B,1,,,,\n")),
            "t.csv row 3, column 7: unterminated quoted field");
  EXPECT_EQ(error_of(sheet(x + "y,N,x,,I,,\"B\"x,1,,,,\n")),
            "t.csv row 3, column 7: unexpected character 'x' after the closing quote of a quoted "
            "field");
  EXPECT_EQ(error_of(sheet(x + "y,N,x,,I,,B,1,,,,,B\n")),
            "t.csv row 3, column 13: unexpected field 'B' after the last column 'extra_attr'");
}

TEST(CsvModuleErrors, DependencyCycle) {
  EXPECT_EQ(error_of(sheet("x,N,,,T,,B,1,,,,\n"
                           "a,N,x,b,A,,B,1,B,1,,\n"
                           "b,N,a,,I,,B,1,,,,\n")),
            "t.csv row 3, column x2: dependency cycle: a@0 <- b@0 <- a@0");
}

TEST(CsvModuleErrors, MissingFile) {
  try {
    read_module_csv(kData + "no_such_sheet.csv");
    FAIL() << "expected an error";
  } catch (const GraphError& e) {
    EXPECT_NE(std::string(e.what()).find("no_such_sheet.csv: cannot open"), std::string::npos);
  }
}

// ---------------------------------------------------------------------------
// The model of one sheet.

TEST(CsvModel, AxesFollowTheSheetsSymbols) {
  auto axes = [](const models::Model& m) {
    std::string out;
    for (const models::ModelAxis& a : m.axes) out += a.name + ":" + a.symbol + " ";
    return out;
  };
  const models::Model mlp = models::build_csv_model(kData + "mlp.csv");
  EXPECT_EQ(mlp.num_blocks, 1);
  EXPECT_EQ(mlp.graph.size(), 12u);
  EXPECT_EQ(axes(mlp), "dp:dp tp:tp sp:sp ");
  EXPECT_EQ(models::csv_model_symbols(mlp),
            (std::set<std::string>{"Batch", "Dff", "Dmodel", "Seq", "dp", "sp", "tp"}));

  const models::Model attn = models::build_csv_model(kData + "fused_attention.csv");
  EXPECT_EQ(axes(attn), "dp:dp tp:tp sp:cp ");
  EXPECT_EQ(models::csv_model_symbols(attn),
            (std::set<std::string>{"Batch", "Dmodel", "Head", "Seq", "cp", "dp", "tp"}));

  // Symbols of op attributes count too (KExperts only appears in op_attr).
  const models::Model ops = models::build_csv_model(kData + "ops.csv");
  EXPECT_TRUE(models::csv_model_symbols(ops).count("KExperts"));
  EXPECT_EQ(axes(ops), "dp:dp tp:tp sp:sp ");

  const std::string path = ::testing::TempDir() + "/csv_model_ep.csv";
  {
    std::ofstream out(path);
    out << kHeader << "x,N,,,T,,\"Batch/dp, Seq/(cp*ep)\",1,,,,\n";
  }
  const models::Model ep = models::build_csv_model(path);
  EXPECT_EQ(axes(ep), "dp:dp tp:tp sp:cp ep:ep ");
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace stg::graph
