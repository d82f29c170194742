// The trace formats stg writes (docs/facts.md §5) and how much they carry:
// choices of the options (stg/options.h) that the writers (emit/) take.
#pragma once

namespace stg::emit {

enum class Schema {
  kV004,  // Chakra 0.0.4 protobuf: GlobalMetadata + Nodes with attributes
  kV001,  // legacy Chakra 0.0.1 protobuf: flat proto2 Nodes, no header
  kJson,  // the reference's JSON layout {"nodes": [...]}
};

// --trace_detail: what each node carries besides its figures.
enum class TraceDetail {
  // Everything (the default): long node names, the `inputs`/`outputs`
  // string lists and `op_type` (v0.0.4).
  kFull,
  // Only what a simulator reads (ids, types, deps, num_ops, tensor_size,
  // comm_* attributes, pg_name, is_cpu_op) and short names (node_name()).
  kSim,
};

}  // namespace stg::emit
