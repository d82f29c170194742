#include "stg/emit/trace_writer.h"

#include <google/protobuf/message_lite.h>

#include <stdexcept>

namespace stg::emit {

void append_trace(std::string& out, const StageGraph& stage, const RankBinding& rank, Schema schema,
                  TraceDetail detail) {
  switch (schema) {
    case Schema::kV004:
      detail::append_trace_v004(out, stage, rank, detail);
      return;
    case Schema::kV001:
      detail::append_trace_v001(out, stage, rank, detail);
      return;
    case Schema::kJson:
      detail::append_trace_json(out, stage, rank, detail);
      return;
  }
  throw std::invalid_argument("append_trace: unknown schema");
}

std::string_view node_name(const LoweredNode& n, TraceDetail detail) {
  if (detail == TraceDetail::kFull) return n.name;
  switch (n.kind) {
    case NodeKind::kComp:
      return n.op_type;
    case NodeKind::kColl:
      switch (n.coll) {
        case CollType::kAllReduce:
          return "AR";
        case CollType::kAllGather:
          return "AG";
        case CollType::kReduceScatter:
          return "RS";
        case CollType::kAllToAll:
          return "A2A";
      }
      break;
    case NodeKind::kSend:
      return "SEND";
    case NodeKind::kRecv:
      return "RECV";
  }
  return "";
}

namespace detail {

void append_varint(std::string& out, uint64_t value) {
  char buf[10];
  size_t n = 0;
  while (value >= 0x80) {
    buf[n++] = static_cast<char>((value & 0x7f) | 0x80);
    value >>= 7;
  }
  buf[n++] = static_cast<char>(value);
  out.append(buf, n);
}

void append_delimited(std::string& out, const google::protobuf::MessageLite& msg) {
  // ByteSizeLong() caches the sizes SerializeWithCachedSizesToArray() uses;
  // serialising straight into `out` avoids a temporary string per message.
  const size_t n = msg.ByteSizeLong();
  append_varint(out, n);
  const size_t offset = out.size();
  out.resize(offset + n);
  uint8_t* begin = reinterpret_cast<uint8_t*>(out.data() + offset);
  uint8_t* end = msg.SerializeWithCachedSizesToArray(begin);
  if (static_cast<size_t>(end - begin) != n) {
    throw std::logic_error("append_delimited: serialised size mismatch");
  }
}

}  // namespace detail
}  // namespace stg::emit
