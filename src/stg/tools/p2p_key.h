// What pairs a SEND with its RECV: the same (src, dst, tag, size). Used by
// rule R4 of `stg validate` and by the replay's send/recv channels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <tuple>

#include "stg/util/graph_algo.h"

namespace stg::tools {

struct P2PKey {
  int64_t src = 0, dst = 0, tag = 0, size = 0;

  bool operator==(const P2PKey& o) const {
    return src == o.src && dst == o.dst && tag == o.tag && size == o.size;
  }
  // (src, dst, tag, size) order: validate prints unmatched keys in it.
  bool operator<(const P2PKey& o) const {
    return std::tie(src, dst, tag, size) < std::tie(o.src, o.dst, o.tag, o.size);
  }
};

struct P2PHash {
  size_t operator()(const P2PKey& k) const {
    using util::mix64;
    return mix64(mix64(mix64(mix64(static_cast<uint64_t>(k.src)) ^ static_cast<uint64_t>(k.dst)) ^
                       static_cast<uint64_t>(k.tag)) ^
                 static_cast<uint64_t>(k.size));
  }
};

}  // namespace stg::tools
