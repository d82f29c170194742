// The columns of a module spreadsheet (csv_module.h) and the parsers of
// its fields; every error names the row and column (csv_records.h: Where).
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "stg/expr/expr.h"
#include "stg/graph/csv_records.h"
#include "stg/graph/graph.h"

namespace stg::graph::csv {

enum Column {
  kId,
  kRequireGrads,
  kX1,
  kX2,
  kOpType,
  kOpAttr,
  kX1Shape,
  kX1Hidden,
  kX2Shape,
  kX2Hidden,
  kGradOf,
  kExtraAttr,
  kNumColumns,
};

inline constexpr std::array<const char*, kNumColumns> kColumnNames = {
    "id",       "require_grads", "x1",       "x2",        "op_type", "op_attr",
    "x1_shape", "x1_hidden",     "x2_shape", "x2_hidden", "grad_of", "extra_attr"};

inline constexpr const char* kExpectedHeader =
    "id,require_grads,x1,x2,op_type,op_attr,x1_shape,x1_hidden,x2_shape,x2_hidden,grad_of"
    "[,extra_attr]";

// The comm ops COLL, SEND and RECV are read too (a graph dumped after the
// passes that insert them has them) but not listed: sheets written by hand,
// like models, never have them.
inline constexpr const char* kValidOps = "T M A E E2 I R B SLICE C CUSTOM S";

// The reference parses with sympy, which reads decimals ("0.5"); Expr reads
// integers only, so a decimal literal becomes an exact fraction "(5/10)".
std::string rewrite_decimals(std::string_view text);

expr::Expr parse_expr(std::string_view text, const Where& at);

// "Batch/dp, Seq/cp, Dmodel" (empty: no such view).
std::optional<Shape> parse_shape_field(std::string_view text, const Where& at);

// `what` names the integer in the message ("axis").
int parse_int(std::string_view text, const Where& at, const char* what);

// An element-wise op's operations per element: "5", "0.5", "1/2".
expr::Rational parse_amplifier(std::string_view text, const Where& at);

// "name" or "name@rev" -> (name, rev).
std::pair<std::string, int> parse_id(std::string_view text, const Where& at);

// "name" means "name@0".
std::string canonical_id(std::string_view text, const Where& at);

// The op of an op_type code ("M", "SLICE", "COLL"); none when unknown.
std::optional<Op> op_of(std::string_view code);

}  // namespace stg::graph::csv
