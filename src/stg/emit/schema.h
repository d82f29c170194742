// The trace formats stg writes (docs/facts.md §5).
#pragma once

namespace stg::emit {

enum class Schema {
  kV004,  // Chakra 0.0.4 protobuf: GlobalMetadata + Nodes with attributes
  kV001,  // legacy Chakra 0.0.1 protobuf: flat proto2 Nodes, no header
  kJson,  // the reference's JSON layout {"nodes": [...]}
};

}  // namespace stg::emit
