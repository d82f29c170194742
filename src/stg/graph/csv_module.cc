#include "stg/graph/csv_module.h"

#include <array>
#include <cctype>
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
#include "stg/graph/csv_fields.h"
#include "stg/graph/op.h"
#include "stg/util/graph_algo.h"

namespace stg::graph {
namespace {

using namespace csv;  // the spreadsheet's columns, records and field parsers
using expr::Expr;
using Json = nlohmann::json;

const ExtraAttrKey* find_key(std::string_view name) {
  for (const ExtraAttrKey& key : extra_attr_keys())
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
    t.require_grads = parse_require_grads(row);
    t.op = parse_op(row);
    // Views: a hidden column left empty next to a shape means "1".
    parse_view(row, kX1Shape, kX1Hidden, t.x1_shape, t.x1_hidden);
    parse_view(row, kX2Shape, kX2Hidden, t.x2_shape, t.x2_hidden);
    check_inputs(row, t);
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

  bool parse_require_grads(const Row& row) const {
    const std::string& text = row.f[kRequireGrads];
    if (text == "Y" || text == "y") return true;
    if (!text.empty() && text != "N" && text != "n")
      fail(at(row, kRequireGrads), "expected Y or N, got '" + text + "'");
    return false;
  }

  Op parse_op(const Row& row) const {
    const std::string& code = row.f[kOpType];
    const std::optional<Op> op = op_of(code);
    if (!op)
      fail(at(row, kOpType),
           (code.empty() ? std::string("missing op type") : "unknown op type '" + code + "'") +
               "; valid op types: " + kValidOps);
    return *op;
  }

  // A view's shape and hidden columns; a hidden column left empty next to a
  // shape means "1".
  void parse_view(const Row& row, Column shape_col, Column hidden_col, std::optional<Shape>& shape,
                  std::optional<Shape>& hidden) const {
    shape = parse_shape_field(row.f[shape_col], at(row, shape_col));
    hidden = parse_shape_field(row.f[hidden_col], at(row, hidden_col));
    if (hidden && !shape)
      fail(at(row, hidden_col), std::string(kColumnNames[hidden_col]) + " is given but " +
                                    kColumnNames[shape_col] + " is empty");
    if (shape && !hidden) hidden = Shape{Expr::constant(1)};
  }

  // The inputs and views each op takes (ids are resolved in pass 2).
  void check_inputs(const Row& row, const Tensor& t) const {
    const auto& f = row.f;
    const std::string code = op_code(t.op);
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
      for (const ExtraAttrKey& k : extra_attr_keys()) keys += std::string(", ") + k.name;
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
