#include "stg/graph/csv_module.h"

#include <array>
#include <cctype>
#include <charconv>
#include <climits>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "stg/graph/comm.h"
#include "stg/graph/op.h"
#include "stg/util/graph_algo.h"

namespace stg::graph {
namespace {

using expr::Expr;
using expr::Rational;

// ---------------------------------------------------------------------------
// Columns.

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

constexpr std::array<const char*, kNumColumns> kColumnNames = {
    "id",       "require_grads", "x1",       "x2",        "op_type", "op_attr",
    "x1_shape", "x1_hidden",     "x2_shape", "x2_hidden", "grad_of", "extra_attr"};

constexpr const char* kExpectedHeader =
    "id,require_grads,x1,x2,op_type,op_attr,x1_shape,x1_hidden,x2_shape,x2_hidden,grad_of"
    "[,extra_attr]";

// The comm ops COLL, SEND and RECV are read too (a graph dumped after the
// passes that insert them has them) but not listed: sheets written by hand,
// like models, never have them.
constexpr const char* kValidOps = "T M A E E2 I R B SLICE C CUSTOM S";

// Where an error is: every message names the source, the 1-based row (the
// header is row 1) and the column.
struct Where {
  const std::string* source;
  int row;
  std::string column;  // empty: the whole row
};

[[noreturn]] void fail(const Where& at, const std::string& why) {
  std::string msg = *at.source + " row " + std::to_string(at.row);
  if (!at.column.empty()) msg += ", column " + at.column;
  throw GraphError(msg + ": " + why);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// ---------------------------------------------------------------------------
// CSV records.
//
// A small RFC 4180 reader written here: Debian's libcsv-dev (a C library,
// not installed on our machines) would add a build and CI dependency for
// these few lines, and libfccp-dev cannot read quoted fields spanning lines.
// Handles quoted fields (commas, doubled quotes and newlines inside; blanks
// around the quotes, as hand-edited sheets have, are dropped), CRLF, CR or LF
// line ends and a leading UTF-8 byte-order mark.

struct Record {
  int row;  // 1-based record number (a spreadsheet's row)
  std::vector<std::string> fields;
};

std::vector<Record> read_records(std::string_view text, const std::string& source) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  std::vector<Record> records;
  const size_t n = text.size();
  size_t i = 0;
  int row = 0;
  auto is_end = [](char c) { return c == ',' || c == '\n' || c == '\r'; };
  while (i < n) {
    Record rec{++row, {}};
    for (;;) {
      std::string field;
      size_t quote = i;  // blanks before an opening quote are dropped
      while (quote < n && (text[quote] == ' ' || text[quote] == '\t')) ++quote;
      if (quote < n && text[quote] == '"') {
        i = quote + 1;
        for (;;) {
          if (i >= n)
            fail({&source, rec.row, std::to_string(rec.fields.size() + 1)},
                 "unterminated quoted field");
          const char c = text[i++];
          if (c != '"') {
            field += c;
          } else if (i < n && text[i] == '"') {
            field += '"';
            ++i;
          } else {
            break;
          }
        }
        while (i < n && (text[i] == ' ' || text[i] == '\t')) ++i;
        if (i < n && !is_end(text[i]))
          fail({&source, rec.row, std::to_string(rec.fields.size() + 1)},
               "unexpected character '" + std::string(1, text[i]) +
                   "' after the closing quote of a quoted field");
      } else {
        while (i < n && !is_end(text[i])) field += text[i++];
      }
      rec.fields.push_back(std::move(field));
      if (i >= n) break;
      if (text[i] == ',') {
        ++i;
        continue;
      }
      i += (text[i] == '\r' && i + 1 < n && text[i + 1] == '\n') ? 2 : 1;  // line end
      break;
    }
    records.push_back(std::move(rec));
  }
  return records;
}

// ---------------------------------------------------------------------------
// Field parsers.

// The reference parses with sympy, which reads decimals ("0.5"); Expr reads
// integers only, so a decimal literal becomes an exact fraction "(5/10)".
std::string rewrite_decimals(std::string_view text) {
  auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    const bool starts_number =
        (digit(text[i]) || (text[i] == '.' && i + 1 < text.size() && digit(text[i + 1]))) &&
        (i == 0 || !ident(text[i - 1]));
    if (!starts_number) {
      out += text[i++];
      continue;
    }
    std::string whole, frac;
    while (i < text.size() && digit(text[i])) whole += text[i++];
    if (i < text.size() && text[i] == '.') {
      ++i;
      while (i < text.size() && digit(text[i])) frac += text[i++];
      std::string num = whole + frac;
      num.erase(0, std::min(num.find_first_not_of('0'), num.size() - 1));
      out += "(" + num + "/1" + std::string(frac.size(), '0') + ")";
    } else {
      out += whole;
    }
  }
  return out;
}

Expr parse_expr(std::string_view text, const Where& at) {
  text = trim(text);
  if (text.empty()) fail(at, "empty expression");
  const std::string rewritten = rewrite_decimals(text);
  try {
    return Expr::parse(rewritten);
  } catch (const expr::ExprError& e) {
    // Expr's message quotes the text it parsed; quote the sheet's own.
    const std::string why = e.what();
    if (rewritten == text && why.starts_with("cannot parse expression '")) fail(at, why);
    fail(at, "cannot parse expression '" + std::string(text) + "': " + why);
  }
}

// "Batch/dp, Seq/cp, Dmodel" (empty: no such view).
std::optional<Shape> parse_shape_field(std::string_view text, const Where& at) {
  text = trim(text);
  if (text.empty()) return std::nullopt;
  Shape shape;
  size_t start = 0;
  for (;;) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view dim = trim(text.substr(start, comma - start));
    if (dim.empty()) fail(at, "empty dimension in shape '" + std::string(text) + "'");
    shape.push_back(parse_expr(dim, at));
    if (comma == text.size()) break;
    start = comma + 1;
  }
  return shape;
}

int parse_int(std::string_view text, const Where& at, const char* what) {
  text = trim(text);
  int value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data() + (!text.empty() && text[0] == '+'), end, value);
  if (text.empty() || ec != std::errc() || ptr != end)
    fail(at, std::string("expected an integer ") + what + ", got '" + std::string(text) + "'");
  return value;
}

// An element-wise op's operations per element: "5", "0.5", "1/2".
Rational parse_amplifier(std::string_view text, const Where& at) {
  if (trim(text).empty()) fail(at, "missing the number of operations per element (e.g. 5)");
  const Expr e = parse_expr(text, at);
  if (!e.is_constant())
    fail(at, "operations per element must be a number, got '" + std::string(trim(text)) + "'");
  const Rational value = e.evaluate({});
  if (value < Rational(0))
    fail(at, "operations per element must not be negative, got '" + std::string(trim(text)) + "'");
  return value;
}

// "name" or "name@rev" -> (name, rev).
std::pair<std::string, int> parse_id(std::string_view text, const Where& at) {
  text = trim(text);
  const size_t at_sign = text.find('@');
  std::string name(text.substr(0, at_sign));
  if (name.empty())
    fail(at, "empty tensor id" + (text.empty() ? "" : " in '" + std::string(text) + "'"));
  int rev = 0;
  if (at_sign != std::string_view::npos) {
    const std::string_view rev_text = text.substr(at_sign + 1);
    if (rev_text.find('@') != std::string_view::npos)
      fail(at, "tensor id '" + std::string(text) + "' has more than one '@'");
    rev = parse_int(rev_text, at, "revision after '@'");
    if (rev < 0) fail(at, "negative revision in tensor id '" + std::string(text) + "'");
  }
  return {std::move(name), rev};
}

// "name" means "name@0".
std::string canonical_id(std::string_view text, const Where& at) {
  auto [name, rev] = parse_id(text, at);
  return name + "@" + std::to_string(rev);
}

std::optional<Op> op_of(std::string_view code) {
  static const std::map<std::string, Op, std::less<>> ops = {
      {"T", Op::kPlaceholder},   {"M", Op::kEinsum},        {"A", Op::kAdd},
      {"E", Op::kElementwise},   {"E2", Op::kElementwise2}, {"I", Op::kIdentity},
      {"R", Op::kReshape},       {"B", Op::kBroadcast},     {"SLICE", Op::kSlice},
      {"C", Op::kConcat},        {"CUSTOM", Op::kCustom},   {"S", Op::kShadow},
      {"COLL", Op::kCollective}, {"SEND", Op::kSend},       {"RECV", Op::kRecv}};
  auto it = ops.find(code);
  if (it == ops.end()) return std::nullopt;
  return it->second;
}

// ---------------------------------------------------------------------------
// stg's extra_attr keys: a JSON form per field type, then the table.

using Json = nlohmann::json;

[[noreturn]] void expected(const std::string& what, const Json& got) {
  throw std::invalid_argument("expected " + what + ", got " + got.dump());
}

bool same(const auto& a, const auto& b) { return a == b; }
bool same(const Placement& a, const Placement& b) { return a.kind == b.kind && a.block == b.block; }

Json encode(bool value) { return value; }
void decode(const Json& v, bool& out) {
  if (!v.is_boolean()) expected("true or false", v);
  out = v.get<bool>();
}

Json encode(int value) { return value; }
void decode(const Json& v, int& out) {
  const bool fits = v.is_number_unsigned() ? v.get<uint64_t>() <= INT_MAX
                    : v.is_number_integer()
                        ? v.get<int64_t>() >= INT_MIN && v.get<int64_t>() <= INT_MAX
                        : false;
  if (!fits) expected("an integer", v);
  out = static_cast<int>(v.get<int64_t>());
}

constexpr std::array<const char*, 4> kRoleNames = {"activation", "weight", "gradient",
                                                   "update"};  // in Role's order
Json encode(Role role) { return kRoleNames.at(static_cast<size_t>(role)); }
void decode(const Json& v, Role& out) {
  for (size_t r = 0; r < kRoleNames.size(); ++r)
    if (v.is_string() && v.get<std::string>() == kRoleNames[r]) {
      out = static_cast<Role>(r);
      return;
    }
  expected(R"("activation", "weight", "gradient" or "update")", v);
}

// "first", "last", "block:3"; the index of first and last only when not 0.
constexpr std::array<const char*, 3> kPlacementNames = {"first", "block", "last"};  // Kind order
Json encode(const Placement& p) {
  std::string text = kPlacementNames.at(static_cast<size_t>(p.kind));
  if (p.kind == Placement::Kind::kBlock || p.block != 0) {
    text += ':';
    text += std::to_string(p.block);
  }
  return text;
}
void decode(const Json& v, Placement& out) {
  const std::string text = v.is_string() ? v.get<std::string>() : "";
  const std::string_view kind = std::string_view(text).substr(0, text.find(':'));
  for (size_t k = 0; k < kPlacementNames.size(); ++k) {
    if (kind != kPlacementNames[k]) continue;
    int block = 0;
    if (kind.size() < text.size()) {
      const char* end = text.data() + text.size();
      const auto [ptr, ec] = std::from_chars(text.data() + kind.size() + 1, end, block);
      if (ec != std::errc() || ptr != end || block < 0) break;
    }
    out = {static_cast<Placement::Kind>(k), block};
    return;
  }
  expected(R"("first", "last" or "block:<index>")", v);
}

Json encode(const std::string& text) { return text; }
void decode(const Json& v, std::string& out) {
  if (!v.is_string()) expected("a string", v);
  out = v.get<std::string>();
}

// "stage:3", "axis:1:+1" (mesh::Peer::str).
Json encode(const mesh::Peer& peer) { return peer.str(); }
void decode(const Json& v, mesh::Peer& out) {
  const std::string text = v.is_string() ? v.get<std::string>() : "";
  auto number = [&](size_t from, size_t to, int& value) {
    const char* first = text.data() + from + (from < to && text[from] == '+');
    const auto [ptr, ec] = std::from_chars(first, text.data() + to, value);
    return from < to && ec == std::errc() && ptr == text.data() + to;
  };
  int a = 0, b = 0;
  if (text.starts_with("stage:") && number(6, text.size(), a) && a >= 0) {
    out = mesh::Peer::on_stage(a);
    return;
  }
  const size_t colon = text.find(':', 5);
  if (text.starts_with("axis:") && colon != std::string::npos && number(5, colon, a) && a >= 0 &&
      number(colon + 1, text.size(), b)) {
    out = mesh::Peer::along(a, b);
    return;
  }
  expected(R"("stage:<stage>" or "axis:<axis>:<offset>")", v);
}

Json encode(const Expr& e) { return e.str(); }
void decode(const Json& v, Expr& out) {
  if (v.is_number_integer()) {
    out = Expr::constant(v.get<int64_t>());
    return;
  }
  if (!v.is_string() || trim(v.get<std::string>()).empty())
    expected("an expression such as \"4*Seq**2*Dmodel/tp\"", v);
  const std::string text(trim(v.get<std::string>()));
  try {
    out = Expr::parse(rewrite_decimals(text));
  } catch (const expr::ExprError& e) {
    throw std::invalid_argument("cannot parse expression '" + text + "': " + e.what());
  }
}

// The field at `Path` of `t` (t.*p1.*p2...).
// clang-format off
template <auto... Path>
auto& field(auto& t) { return (t .* ... .* Path); }
// clang-format on

// The key of the Tensor field at `Path` (member pointers: &Tensor::flops,
// or &Tensor::comm, &Comm::tag), written and read in the JSON form of its
// type (the overloads above).
template <auto... Path>
constexpr ExtraAttrKey field_key(const char* name) {
  return {name,
          [](const Tensor& t, const Tensor& inferred) {
            return !same(field<Path...>(t), field<Path...>(inferred));
          },
          [](const Tensor& t) { return encode(field<Path...>(t)); },
          [](const Json& v, Tensor& t) { decode(v, field<Path...>(t)); }};
}

// In the order the writer writes them. A new Tensor field the reference's
// columns lack: one entry here, and its default in infer_extra_fields. (A
// collective's type is its op_attr.)
const ExtraAttrKey kExtraAttrKeys[] = {
    field_key<&Tensor::role>("role"),
    field_key<&Tensor::placement>("placement"),
    field_key<&Tensor::micro_batch>("micro_batch"),
    field_key<&Tensor::stage>("stage"),
    field_key<&Tensor::chunk>("chunk"),
    field_key<&Tensor::backward>("backward"),
    field_key<&Tensor::transient>("transient"),
    field_key<&Tensor::view>("view"),
    field_key<&Tensor::flops>("flops"),
    field_key<&Tensor::element_bytes>("element_bytes"),
    field_key<&Tensor::tied>("tied"),
    field_key<&Tensor::selective_recompute>("selective_recompute"),
    field_key<&Tensor::comm, &Comm::axis>("comm_axis"),
    field_key<&Tensor::comm, &Comm::peer>("peer"),
    field_key<&Tensor::comm, &Comm::tag>("tag"),
    field_key<&Tensor::comm, &Comm::label>("label"),
};

const ExtraAttrKey* find_key(std::string_view name) {
  for (const ExtraAttrKey& key : kExtraAttrKeys)
    if (name == key.name) return &key;
  return nullptr;
}

// ---------------------------------------------------------------------------
// Rows.

struct Row {
  int row = 0;
  std::array<std::string, kNumColumns> f;  // trimmed fields
  Json extra;                              // extra_attr: an object, or null when empty
};

class Reader {
 public:
  explicit Reader(const std::string& source) : source_(source) {}

  Graph read(std::string_view text) {
    const std::vector<Record> records = read_records(text, source_);
    if (records.empty())
      fail({&source_, 1, ""}, std::string("empty file; expected the header ") + kExpectedHeader);
    const int columns = check_header(records[0]);
    for (size_t r = 1; r < records.size(); ++r) {
      const Record& rec = records[r];
      bool blank = true;
      for (const std::string& f : rec.fields) blank = blank && trim(f).empty();
      if (blank) continue;  // an empty spreadsheet row, as pandas skips it
      Row row;
      row.row = rec.row;
      for (size_t c = 0; c < rec.fields.size(); ++c) {
        const std::string_view f = trim(rec.fields[c]);
        if (static_cast<int>(c) < columns) {
          row.f[c] = std::string(f);
        } else if (!f.empty()) {
          fail({&source_, rec.row, std::to_string(c + 1)}, "unexpected field '" + std::string(f) +
                                                               "' after the last column '" +
                                                               kColumnNames[columns - 1] + "'");
        }
      }
      rows_.push_back(std::move(row));
    }
    // Pass 1: every tensor on its own, so references may point forward.
    for (Row& row : rows_) tensors_.push_back(make_tensor(row));
    // Pass 2: references by id; checks the extra_attr keys.
    for (size_t i = 0; i < rows_.size(); ++i) resolve(i);
    // Pass 3, in dependency order: the fields extra_attr may give.
    infer_fields();
    Graph g;
    for (Tensor& t : tensors_) g.add(std::move(t));
    return g;
  }

 private:
  Where at(const Row& row, Column c) const { return {&source_, row.row, kColumnNames[c]}; }

  // Returns the number of columns (11 or 12).
  int check_header(const Record& header) {
    std::vector<std::string> names;
    for (const std::string& f : header.fields) names.emplace_back(trim(f));
    while (!names.empty() && names.back().empty()) names.pop_back();  // trailing commas
    const std::string expected = std::string("; the header must be ") + kExpectedHeader;
    for (size_t c = 0; c < names.size() || c + 1 < kNumColumns; ++c) {
      if (c >= kNumColumns)
        fail({&source_, 1, std::to_string(c + 1)},
             "wrong column header: unexpected column '" + names[c] + "'" + expected);
      if (c >= names.size())
        fail({&source_, 1, kColumnNames[c]}, "wrong column header: missing column" + expected);
      if (names[c] != kColumnNames[c])
        fail({&source_, 1, kColumnNames[c]},
             "wrong column header: found '" + names[c] + "'" + expected);
    }
    return static_cast<int>(names.size());
  }

  Tensor make_tensor(Row& row) {
    const auto& f = row.f;
    Tensor t;
    std::tie(t.name, t.revision) = parse_id(f[kId], at(row, kId));
    const auto [prior, fresh] = index_.emplace(t.id(), static_cast<int>(tensors_.size()));
    if (!fresh)
      fail(at(row, kId), "duplicate tensor id '" + f[kId] + "' (first defined in row " +
                             std::to_string(rows_[prior->second].row) + ")");

    if (f[kRequireGrads] == "Y" || f[kRequireGrads] == "y") {
      t.require_grads = true;
    } else if (!f[kRequireGrads].empty() && f[kRequireGrads] != "N" && f[kRequireGrads] != "n") {
      fail(at(row, kRequireGrads), "expected Y or N, got '" + f[kRequireGrads] + "'");
    }

    const std::optional<Op> op = op_of(f[kOpType]);
    if (!op)
      fail(at(row, kOpType), (f[kOpType].empty() ? std::string("missing op type")
                                                 : "unknown op type '" + f[kOpType] + "'") +
                                 "; valid op types: " + kValidOps);
    t.op = *op;
    const std::string code = op_code(t.op);

    // Views: a hidden column left empty next to a shape means "1".
    auto view = [&](Column shape_col, Column hidden_col, std::optional<Shape>& shape,
                    std::optional<Shape>& hidden) {
      shape = parse_shape_field(f[shape_col], at(row, shape_col));
      hidden = parse_shape_field(f[hidden_col], at(row, hidden_col));
      if (hidden && !shape)
        fail(at(row, hidden_col), std::string(kColumnNames[hidden_col]) + " is given but " +
                                      kColumnNames[shape_col] + " is empty");
      if (shape && !hidden) hidden = Shape{Expr::constant(1)};
    };
    view(kX1Shape, kX1Hidden, t.x1_shape, t.x1_hidden);
    view(kX2Shape, kX2Hidden, t.x2_shape, t.x2_hidden);

    // Inputs each op takes (ids are resolved in pass 2).
    enum Need { kNo, kOptional, kYes };
    Need x1 = kYes, x2 = kNo, x2_shape = kNo;
    switch (t.op) {
      case Op::kPlaceholder:
        x1 = kNo;
        break;
      case Op::kShadow:
        x1 = kOptional;
        break;
      case Op::kEinsum:
      case Op::kAdd:
      case Op::kElementwise2:
      case Op::kConcat:
        x2 = x2_shape = kYes;
        break;
      case Op::kReshape:
      case Op::kCustom:
      case Op::kCollective:
        x2_shape = kYes;
        break;  // the output view
      case Op::kSlice:
        x2 = x2_shape = kOptional;
        break;
      default:
        break;
    }
    if (x1 == kYes && f[kX1].empty()) fail(at(row, kX1), "op " + code + " needs an input x1");
    if (x1 == kNo && !f[kX1].empty())
      fail(at(row, kX1), "op " + code + " takes no input, got '" + f[kX1] + "'");
    if (x2 == kYes && f[kX2].empty()) fail(at(row, kX2), "op " + code + " needs an input x2");
    if (x2 == kNo && !f[kX2].empty())
      fail(at(row, kX2), "op " + code + " takes no input x2, got '" + f[kX2] + "'");
    if (!t.x1_shape) fail(at(row, kX1Shape), "op " + code + " needs x1_shape");
    if ((x2_shape == kYes || (x2_shape == kOptional && !f[kX2].empty())) && !t.x2_shape)
      fail(at(row, kX2Shape), "op " + code + " needs x2_shape");
    if (t.x2_shape && (x2_shape == kNo || (x2_shape == kOptional && f[kX2].empty())))
      fail(at(row, kX2Shape), "op " + code + " has no second view; x2_shape must be empty");

    parse_attr(row, t);
    check_views(row, t);
    try {
      (void)evaluate_op(t);
    } catch (const std::runtime_error& e) {  // GraphError or ExprError
      fail(at(row, evaluation_column(t.op)), e.what());
    }
    if (!f[kExtraAttr].empty()) row.extra = parse_extra_attr(row);
    return t;
  }

  void parse_attr(const Row& row, Tensor& t) {
    const std::string& attr = row.f[kOpAttr];
    const Where where = at(row, kOpAttr);
    const std::string code = op_code(t.op);
    auto split = [&](char sep, const char* form) {
      const size_t pos = attr.find(sep);
      if (pos == std::string::npos)
        fail(where, "op " + code + " needs op_attr of the form '" + form + "', got '" + attr + "'");
      return std::pair{parse_int(std::string_view(attr).substr(0, pos), where, "axis"),
                       parse_expr(std::string_view(attr).substr(pos + 1), where)};
    };
    switch (t.op) {
      case Op::kPlaceholder:
      case Op::kAdd:
      case Op::kIdentity:
      case Op::kReshape:
      case Op::kSend:
      case Op::kRecv:
        if (!attr.empty()) fail(where, "op " + code + " takes no op_attr, got '" + attr + "'");
        break;
      case Op::kShadow:
        break;
      case Op::kEinsum:
        if (attr.empty()) fail(where, "op M needs an einsum op_attr such as 'bsm,mn->bsn'");
        for (char c : attr)
          if (!std::isspace(static_cast<unsigned char>(c))) t.einsum += c;
        break;
      case Op::kElementwise:
      case Op::kElementwise2:
        t.amplifier = parse_amplifier(attr, where);
        break;
      case Op::kSlice:
        std::tie(t.axis, t.factor) = split(':', "axis:size");
        break;
      case Op::kBroadcast:
        std::tie(t.axis, t.factor) = split('*', "axis*factor");
        break;
      case Op::kConcat:
        t.axis = parse_int(attr, where, "axis");
        break;
      case Op::kCustom:
        if (attr.empty()) fail(where, "op CUSTOM needs its operation count as op_attr");
        t.factor = parse_expr(attr, where);
        break;
      case Op::kCollective:
        t.comm.type = parse_coll_type(attr, where);
        break;
    }
  }

  static CollType parse_coll_type(const std::string& attr, const Where& where) {
    std::string names;
    for (CollType type : {CollType::kAllReduce, CollType::kAllGather, CollType::kReduceScatter,
                          CollType::kAllToAll}) {
      if (attr == coll_name(type)) return type;
      names += std::string(names.empty() ? "" : ", ") + coll_name(type);
    }
    fail(where, "op COLL needs its collective as op_attr (" + names + "), got '" + attr + "'");
  }

  // Checks with a precise column, before evaluate_op catches the rest.
  void check_views(const Row& row, const Tensor& t) {
    const Shape& a = *t.x1_shape;
    const int rank = static_cast<int>(a.size());
    switch (t.op) {
      case Op::kBroadcast:
      case Op::kSlice:
      case Op::kConcat:
        if (t.axis < -rank || t.axis >= rank)
          fail(at(row, kOpAttr), "axis " + std::to_string(t.axis) +
                                     " is out of range for x1_shape of rank " +
                                     std::to_string(rank));
        break;
      case Op::kEinsum:
        check_einsum(row, t);
        break;
      case Op::kAdd:
      case Op::kElementwise2:
        if (!(*t.x1_shape == *t.x2_shape))
          fail(at(row, kX2Shape), "x2_shape (" + shape_str(*t.x2_shape) +
                                      ") differs from x1_shape (" + shape_str(*t.x1_shape) + ")");
        [[fallthrough]];
      case Op::kReshape:
        if (!(expr::product(*t.x1_hidden) == expr::product(*t.x2_hidden)))
          fail(at(row, kX2Hidden), "x2_hidden (" + shape_str(*t.x2_hidden) + ") and x1_hidden (" +
                                       shape_str(*t.x1_hidden) + ") differ in size");
        if (t.op == Op::kReshape && !(expr::product(a) == expr::product(*t.x2_shape)))
          fail(at(row, kX2Shape), "reshape to " + shape_str(*t.x2_shape) +
                                      " changes the element count of " + shape_str(a));
        break;
      default:
        break;
    }
  }

  void check_einsum(const Row& row, const Tensor& t) {
    const std::string& spec = t.einsum;
    const size_t arrow = spec.find("->");
    const size_t comma = spec.find(',');
    if (arrow == std::string::npos || comma == std::string::npos || comma > arrow ||
        spec.find(',', comma + 1) < arrow)
      fail(at(row, kOpAttr), "einsum '" + spec + "' is not of the form 'ab,bc->ac'");
    const std::string letters[2] = {spec.substr(0, comma),
                                    spec.substr(comma + 1, arrow - comma - 1)};
    const Shape* shapes[2] = {&*t.x1_shape, &*t.x2_shape};
    const Column shape_cols[2] = {kX1Shape, kX2Shape};
    const Column hidden_cols[2] = {kX1Hidden, kX2Hidden};
    const std::optional<Shape>* hiddens[2] = {&t.x1_hidden, &t.x2_hidden};
    std::map<char, std::pair<Expr, int>> dim_of;  // letter -> (dim, input)
    for (int k = 0; k < 2; ++k) {
      const Shape& s = *shapes[k];
      if (letters[k].size() != s.size())
        fail(at(row, shape_cols[k]),
             "einsum '" + spec + "' names " + std::to_string(letters[k].size()) + " dims of x" +
                 std::to_string(k + 1) + " but " + kColumnNames[shape_cols[k]] + " has " +
                 std::to_string(s.size()) + " (" + shape_str(s) + ")");
      for (size_t i = 0; i < s.size(); ++i) {
        auto [it, fresh] = dim_of.emplace(letters[k][i], std::pair{s[i], k});
        if (!fresh && !(it->second.first == s[i]))
          fail(at(row, shape_cols[k]), std::string("einsum letter '") + letters[k][i] + "' is " +
                                           s[i].str() + " here but " + it->second.first.str() +
                                           " in x" + std::to_string(it->second.second + 1) +
                                           "_shape");
      }
      const Shape& h = **hiddens[k];
      if (!(expr::product(h) == Expr::constant(1)))
        fail(at(row, hidden_cols[k]), "an einsum input must not be a partial sum; " +
                                          std::string(kColumnNames[hidden_cols[k]]) +
                                          " must be 1, got " + shape_str(h));
    }
    for (char c : spec.substr(arrow + 2))
      if (!dim_of.count(c))
        fail(at(row, kOpAttr),
             std::string("einsum output letter '") + c + "' is in neither input of '" + spec + "'");
  }

  // The column an op's remaining shape errors are reported on.
  static Column evaluation_column(Op op) {
    switch (op) {
      case Op::kPlaceholder:
      case Op::kIdentity:
      case Op::kElementwise:
      case Op::kShadow:
        return kX1Shape;
      case Op::kBroadcast:
      case Op::kSlice:
        return kOpAttr;
      default:
        return kX2Shape;
    }
  }

  int lookup(const Row& row, Column c, std::string_view id) const {
    const Where where = at(row, c);
    const std::string key = canonical_id(id, where);
    auto it = index_.find(key);
    if (it == index_.end())
      fail(where, "unknown tensor id '" + std::string(trim(id)) + "' (no row has id " + key + ")");
    return it->second;
  }

  void resolve(size_t i) {
    const Row& row = rows_[i];
    Tensor& t = tensors_[i];
    if (!row.f[kX1].empty()) t.x1 = lookup(row, kX1, row.f[kX1]);
    if (!row.f[kX2].empty()) t.x2 = lookup(row, kX2, row.f[kX2]);
    if (!row.f[kGradOf].empty()) {
      t.grad_of = lookup(row, kGradOf, row.f[kGradOf]);
      if (t.grad_of == static_cast<int>(i))
        fail(at(row, kGradOf), "a tensor cannot be its own gradient");
    }
    if (row.extra.is_object()) resolve_extra_attr(row, t);
  }

  // The JSON object of extra_attr (pass 1: before pass 2 reports unknown
  // keys, it must know whether the sheet uses stg's keys).
  Json parse_extra_attr(const Row& row) {
    const Where where = at(row, kExtraAttr);
    Json attr;
    try {
      attr = Json::parse(row.f[kExtraAttr]);
    } catch (const Json::exception& e) {
      fail(where, "cannot parse JSON '" + row.f[kExtraAttr] + "': " + e.what());
    }
    if (!attr.is_object()) fail(where, "expected a JSON object such as {\"data_deps\": [\"k1\"]}");
    for (const auto& item : attr.items()) uses_stg_keys_ = uses_stg_keys_ || find_key(item.key());
    return attr;
  }

  // {"data_deps": ["k1", "v1"]}: producers this op waits for without
  // reading; stg's keys are checked here, in row order, and set in pass 3.
  void resolve_extra_attr(const Row& row, Tensor& t) {
    const Where where = at(row, kExtraAttr);
    for (const auto& [key, value] : row.extra.items()) {
      if (key == "ctrl_deps")
        fail(where,
             "ctrl_deps are not supported: stg's graph has no control dependencies (data_deps "
             "are)");
      if (const ExtraAttrKey* k = find_key(key)) {
        read_key(row, *k, value, t);
        continue;
      }
      if (key != "data_deps")
        fail(where, "unsupported key '" + key + "' (supported: " + supported_keys() + ")");
      if (!value.is_array()) fail(where, "data_deps must be a list of tensor ids");
      for (const auto& dep : value) {
        if (!dep.is_string())
          fail(where, "data_deps must be a list of tensor ids, got " + dep.dump());
        t.extra_deps.push_back(lookup(row, kExtraAttr, dep.get<std::string>()));
      }
    }
  }

  // A sheet in the reference's style is told of the reference's one key; a
  // sheet that uses stg's keys (a dump, see csv_writer.h) of all of them.
  std::string supported_keys() const {
    std::string keys = "data_deps";
    if (uses_stg_keys_)
      for (const ExtraAttrKey& k : kExtraAttrKeys) keys += std::string(", ") + k.name;
    return keys;
  }

  void read_key(const Row& row, const ExtraAttrKey& key, const Json& value, Tensor& t) const {
    try {
      key.read(value, t);
    } catch (const std::invalid_argument& e) {
      fail(at(row, kExtraAttr), "key '" + std::string(key.name) + "': " + e.what());
    }
  }

  // The fields extra_attr may give, in dependency order: first what
  // infer_extra_fields infers (the backward pass by a semantic rule rather
  // than by names: a tensor is backward when its row is a gradient, grad_of
  // set, or when it depends, through x1, x2 or data_deps and transitively,
  // on such a tensor; gradient placeholders, a module's incoming dy, are
  // where the backward pass of a module starts, and forward tensors never
  // read a gradient), then what the row's keys say. Also rejects dependency
  // cycles.
  void infer_fields() {
    const int n = static_cast<int>(tensors_.size());
    std::vector<std::vector<int>> consumers(n);
    for (int i = 0; i < n; ++i)
      for (int in : inputs(i)) consumers[in].push_back(i);
    const std::vector<int> order = util::topological_order(consumers);
    if (static_cast<int>(order.size()) < n) {
      std::vector<bool> blocked(n, true);  // on or behind a cycle
      for (int i : order) blocked[i] = false;
      report_cycle(blocked);
    }
    for (int i : order) {
      Tensor& t = tensors_[i];
      infer_extra_fields(t, tensors_);
      if (rows_[i].extra.is_object())
        for (const auto& [key, value] : rows_[i].extra.items())
          if (const ExtraAttrKey* k = find_key(key)) read_key(rows_[i], *k, value, t);
    }
  }

  std::vector<int> inputs(int i) const {
    const Tensor& t = tensors_[i];
    std::vector<int> in;
    if (t.x1 >= 0) in.push_back(t.x1);
    if (t.x2 >= 0) in.push_back(t.x2);
    in.insert(in.end(), t.extra_deps.begin(), t.extra_deps.end());
    return in;
  }

  // Every tensor on or behind a cycle has such an input, so walking them
  // from any of them closes a cycle.
  [[noreturn]] void report_cycle(const std::vector<bool>& blocked) {
    int v = 0;
    while (!blocked[v]) ++v;
    std::vector<int> walk;
    std::vector<int> seen_at(tensors_.size(), -1);
    while (seen_at[v] < 0) {
      seen_at[v] = static_cast<int>(walk.size());
      walk.push_back(v);
      for (int in : inputs(v))
        if (blocked[in]) {
          v = in;
          break;
        }
    }
    const std::vector<int> cycle(walk.begin() + seen_at[v], walk.end());
    std::string path;
    for (int c : cycle) path += tensors_[c].id() + " <- ";
    path += tensors_[cycle[0]].id();
    const Tensor& t = tensors_[cycle[0]];
    const int next = cycle.size() > 1 ? cycle[1] : cycle[0];
    const Column col = t.x1 == next ? kX1 : t.x2 == next ? kX2 : kExtraAttr;
    fail(at(rows_[cycle[0]], col), "dependency cycle: " + path);
  }

  const std::string& source_;
  std::vector<Row> rows_;
  std::vector<Tensor> tensors_;
  std::map<std::string, int> index_;  // canonical id -> tensor index
  bool uses_stg_keys_ = false;        // some row's extra_attr has one of stg's keys
};

}  // namespace

std::span<const ExtraAttrKey> extra_attr_keys() { return kExtraAttrKeys; }

void infer_extra_fields(Tensor& t, const std::vector<Tensor>& tensors) {
  const bool grad_of_weight = t.grad_of >= 0 && tensors.at(t.grad_of).require_grads;
  t.role = t.require_grads ? Role::kWeight : grad_of_weight ? Role::kGradient : Role::kActivation;
  t.placement = Placement{};
  t.micro_batch = 0;
  t.stage = 0;
  t.chunk = 0;
  t.backward = t.grad_of >= 0;
  for (int in : {t.x1, t.x2})
    if (in >= 0) t.backward = t.backward || tensors.at(in).backward;
  for (int in : t.extra_deps) t.backward = t.backward || tensors.at(in).backward;
  t.transient = false;
  t.view = false;
  t.flops = Expr();
  const CollType type = t.comm.type;  // op_attr
  t.comm = Comm{};
  t.comm.type = type;
}

Graph parse_module_csv(std::string_view text, const std::string& source_name) {
  return Reader(source_name).read(text);
}

Graph read_module_csv(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw GraphError(path + ": cannot open the module spreadsheet");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw GraphError(path + ": cannot read the module spreadsheet");
  return parse_module_csv(text.str(), path);
}

}  // namespace stg::graph
