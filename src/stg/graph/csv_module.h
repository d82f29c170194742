// Module graphs read from the reference's CSV "sharding spreadsheet": one
// tensor a row under the header
//   id,require_grads,x1,x2,op_type,op_attr,x1_shape,x1_hidden,x2_shape,
//   x2_hidden,grad_of[,extra_attr]
// so that users keep the spreadsheets they wrote for the Python reference.
//
// extra_attr is a JSON object. Its keys: the reference's "data_deps" (ids of
// producers the op waits for without reading them) and stg's own keys for the
// Tensor fields the reference's columns lack, which graphs dumped by
// write_module_csv (csv_writer.h) carry when a field differs from what the
// reader infers:
//   "role"         "activation" | "weight" | "gradient" | "update";
//                  default: weight when require_grads is Y, gradient when
//                  grad_of names a tensor whose require_grads is Y, else
//                  activation
//   "placement"    "first" | "last" | "block:<index>"; default "block:0"
//   "micro_batch"  an integer (-1: shared by all micro-batches); default 0
//   "stage", "chunk"  integers (pipeline stage, virtual stage); default 0
//   "backward"     true | false; default: true when grad_of is set or an
//                  input (x1, x2, data_deps) is backward (as read, keys
//                  included)
//   "transient"    true | false; default false
//   "flops"        an expression such as "4*Seq**2*Dmodel/tp"; default none
//   "comm_axis"    a collective's mesh axis, an integer; default -1
//   "peer"         a send's or receive's peer, "stage:<stage>" or
//                  "axis:<axis>:<offset>"; default "stage:0"
//   "tag"          an integer pairing a send with its receive; default 0
//   "label"        a comm op's trace node name; default ""
// Besides the reference's ops, the comm ops COLL (op_attr: the collective,
// ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER or ALL_TO_ALL; x2_shape and
// x2_hidden: the view it delivers), SEND and RECV are read.
//
// Every error is a GraphError naming the source, the 1-based row (the header
// is row 1) and the column: "model.csv row 7, column x1_shape: ...".
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "stg/graph/graph.h"

namespace stg::graph {

// Reads and validates the spreadsheet at `path` (errors name `path`).
Graph read_module_csv(const std::string& path);

// Parses spreadsheet text; errors name `source_name` as the file.
Graph parse_module_csv(std::string_view text, const std::string& source_name);

// ---- stg's extra_attr keys, shared by the reader and the writer: one entry
// per Tensor field, so a new field is one more entry (csv_module.cc).
struct ExtraAttrKey {
  const char* name;
  // Whether the field of `t` differs from that of `inferred` (a copy of `t`
  // passed through infer_extra_fields): the writer writes the key only then.
  bool (*differs)(const Tensor& t, const Tensor& inferred);
  nlohmann::json (*write)(const Tensor& t);
  // Sets the field; throws std::invalid_argument saying what is expected.
  void (*read)(const nlohmann::json& value, Tensor& t);
};
std::span<const ExtraAttrKey> extra_attr_keys();

// Sets the fields of `t` that the keys above give to what the reader infers
// when a row has none of them (the defaults listed above); `tensors` holds
// t's inputs and the tensor named by its grad_of.
void infer_extra_fields(Tensor& t, const std::vector<Tensor>& tensors);

}  // namespace stg::graph
