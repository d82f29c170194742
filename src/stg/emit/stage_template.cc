#include "stg/emit/stage_template.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "et_def_v004.pb.h"
#include "stg/emit/et_v004.h"
#include "stg/emit/trace_writer.h"

namespace stg::emit {

namespace pb = ChakraProtoMsg;

namespace {

char* put_bytes(char* p, const char* src, size_t n) {
  std::memcpy(p, src, n);
  return p + n;
}

}  // namespace

void StageTemplate::add_var_node(std::string_view head, const VarAttr& key, std::string_view tail) {
  VarNode v;
  v.key = static_cast<uint32_t>(std::find(keys_.begin(), keys_.end(), key) - keys_.begin());
  if (v.key == keys_.size()) keys_.push_back(key);
  v.head = blob_.size();
  v.head_size = static_cast<uint32_t>(head.size());
  v.tail_size = static_cast<uint32_t>(tail.size());
  blob_ += head;
  blob_ += tail;
  vars_.push_back(v);
}

void StageTemplate::clear() {
  blob_.clear();
  vars_.clear();
  keys_.clear();
}

void StageTemplate::append_rank(std::string& out, const RankBinding& rank) const {
  const size_t start = out.size();
  out.resize(start + size_hint());
  char* p = out.data() + start;
  const char* blob = blob_.data();
  size_t pos = 0;  // blob_ bytes copied so far
  try {
    p = append_vars(p, rank, pos);
  } catch (...) {
    out.resize(start);  // a group or peer the binding lacks: leave `out` as it was
    throw;
  }
  p = put_bytes(p, blob + pos, blob_.size() - pos);
  out.resize(static_cast<size_t>(p - out.data()));
}

char* StageTemplate::append_vars(char* p, const RankBinding& rank, size_t& pos) const {
  // This rank's variable attributes, each encoded once: Node.attr tag,
  // length, then the AttributeProto (name, value).
  struct Encoded {
    char bytes[kMaxVarAttrBytes];
    uint32_t size;
  };
  std::vector<Encoded> encoded(keys_.size());
  for (size_t k = 0; k < keys_.size(); ++k)
    encoded[k].size = static_cast<uint32_t>(encode_var_attr(encoded[k].bytes, keys_[k], rank));

  const char* blob = blob_.data();
  for (const VarNode& v : vars_) {
    const Encoded& var = encoded[v.key];
    p = put_bytes(p, blob + pos, v.head - pos);
    p = put_varint(p, uint64_t{v.head_size} + var.size + v.tail_size);
    p = put_bytes(p, blob + v.head, v.head_size);
    p = put_bytes(p, var.bytes, var.size);
    pos = v.head + v.head_size;
  }
  return p;
}

}  // namespace stg::emit
