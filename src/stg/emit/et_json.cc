// JSON writer in the reference's layout (docs/facts.md §5.6): the text Python's
// json.dump({"nodes": [...]}, f) produces with default arguments, i.e.
// separators ", " and ": ", no indentation, no trailing newline, non-ASCII
// escaped (ensure_ascii=True). The layout has no inputs/outputs lists:
// TraceDetail::kSim only shortens the names.
//
// Hand-formatted rather than built with nlohmann::json: nlohmann's compact
// dump() writes "," and ":" without the spaces Python uses and cannot be
// configured to add them, and building a json DOM per node would also cost
// an allocation per key. Hence the small escape helper below.
#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "stg/emit/trace_writer.h"
#include "stg/graph/op.h"

namespace stg::emit::detail {
namespace {

constexpr char kHex[] = "0123456789abcdef";

void append_u_escape(std::string& out, uint32_t unit) {
  char buf[6] = {'\\',
                 'u',
                 kHex[(unit >> 12) & 0xf],
                 kHex[(unit >> 8) & 0xf],
                 kHex[(unit >> 4) & 0xf],
                 kHex[unit & 0xf]};
  out.append(buf, sizeof buf);
}

// Decodes one UTF-8 sequence starting at s[i]; returns the code point and
// advances i. Malformed input yields U+FFFD for one byte (names come from
// our own model text, so this is only a guard).
uint32_t next_code_point(std::string_view s, size_t& i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  int len = 0;
  uint32_t cp = 0;
  if (b0 >= 0xc2 && b0 <= 0xdf) {
    len = 2;
    cp = b0 & 0x1f;
  } else if (b0 >= 0xe0 && b0 <= 0xef) {
    len = 3;
    cp = b0 & 0x0f;
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    len = 4;
    cp = b0 & 0x07;
  } else {
    ++i;
    return 0xfffd;
  }
  if (i + len > s.size()) {
    ++i;
    return 0xfffd;
  }
  for (int k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xc0) != 0x80) {
      ++i;
      return 0xfffd;
    }
    cp = (cp << 6) | (b & 0x3f);
  }
  const uint32_t min_cp = len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;
  if (cp < min_cp || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
    ++i;
    return 0xfffd;
  }
  i += len;
  return cp;
}

// JSON string literal exactly as Python's json.dumps(ensure_ascii=True)
// writes it: \" \\ \n \r \t \b \f, every other byte outside ' '..'~' as
// \uXXXX (UTF-16 surrogate pairs above U+FFFF).
void append_json_string(std::string& out, std::string_view s) {
  out.push_back('"');
  size_t i = 0;
  while (i < s.size()) {
    // Copy the longest run that needs no escaping in one go.
    size_t j = i;
    while (j < s.size() && s[j] >= ' ' && s[j] <= '~' && s[j] != '"' && s[j] != '\\') {
      ++j;
    }
    out.append(s.data() + i, j - i);
    i = j;
    if (i == s.size()) break;
    const char c = s[i];
    switch (c) {
      case '"':
        out.append("\\\"");
        ++i;
        continue;
      case '\\':
        out.append("\\\\");
        ++i;
        continue;
      case '\n':
        out.append("\\n");
        ++i;
        continue;
      case '\r':
        out.append("\\r");
        ++i;
        continue;
      case '\t':
        out.append("\\t");
        ++i;
        continue;
      case '\b':
        out.append("\\b");
        ++i;
        continue;
      case '\f':
        out.append("\\f");
        ++i;
        continue;
      default:
        break;
    }
    if (static_cast<unsigned char>(c) < 0x80) {  // other control, or DEL
      append_u_escape(out, static_cast<unsigned char>(c));
      ++i;
      continue;
    }
    const uint32_t cp = next_code_point(s, i);
    if (cp >= 0x10000) {
      const uint32_t v = cp - 0x10000;
      append_u_escape(out, 0xd800 | (v >> 10));
      append_u_escape(out, 0xdc00 | (v & 0x3ff));
    } else {
      append_u_escape(out, cp);
    }
  }
  out.push_back('"');
}

template <typename Int>
void append_int(std::string& out, Int v) {
  char buf[24];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, res.ptr);
}

// Appends `, "key": ` (the first key of an object has no leading comma and
// is written directly by the caller).
void append_key(std::string& out, std::string_view key) {
  out.append(", \"");
  out.append(key);
  out.append("\": ");
}

void append_id_list(std::string& out, const std::vector<uint64_t>& ids) {
  out.push_back('[');
  for (size_t k = 0; k < ids.size(); ++k) {
    if (k != 0) out.append(", ");
    append_int(out, ids[k]);
  }
  out.push_back(']');
}

std::string_view node_type(NodeKind kind) {
  switch (kind) {
    case NodeKind::kComp:
      return "comp_node";
    case NodeKind::kColl:
      return "coll_comm_node";
    case NodeKind::kSend:
      return "comm_send_node";
    case NodeKind::kRecv:
      return "comm_recv_node";
  }
  return "invalid_node";
}

std::string_view comm_type(CollType type) { return graph::coll_name(type); }

void append_node(std::string& out, const LoweredNode& n, const RankBinding& rank,
                 TraceDetail detail) {
  out.append("{\"id\": ");
  append_int(out, n.id);
  append_key(out, "name");
  append_json_string(out, node_name(n, detail));
  append_key(out, "node_type");
  out.push_back('"');
  out.append(node_type(n.kind));
  out.push_back('"');
  append_key(out, "y_tensor_size");
  append_int(out, n.y_tensor_size);
  append_key(out, "data_deps");
  append_id_list(out, n.data_deps);
  append_key(out, "ctrl_deps");
  append_id_list(out, n.ctrl_deps);

  switch (n.kind) {
    case NodeKind::kComp:
      append_key(out, "num_ops");
      append_int(out, n.num_ops_at(0));
      append_key(out, "tensor_size");
      append_int(out, n.tensor_size_at(0));
      if (const uint64_t micros = n.duration_micros_at(0)) {
        append_key(out, "duration_micros");
        append_int(out, micros);
      }
      break;
    case NodeKind::kColl:
      append_key(out, "comm_size");
      append_int(out, n.comm_size);
      append_key(out, "comm_type");
      out.push_back('"');
      out.append(comm_type(n.coll));
      out.push_back('"');
      append_key(out, "comm_group");
      append_int(out, rank.group(n.axis));
      break;
    case NodeKind::kSend:
    case NodeKind::kRecv:
      append_key(out, "comm_size");
      append_int(out, n.comm_size);
      append_key(out, "comm_tag");
      append_int(out, n.tag);
      append_key(out, n.kind == NodeKind::kSend ? "comm_dst" : "comm_src");
      append_int(out, rank.peer(n.peer));
      break;
  }
  out.push_back('}');
}

}  // namespace

void append_trace_json(std::string& out, const StageGraph& stage, const RankBinding& rank,
                       TraceDetail detail) {
  out.append("{\"nodes\": [");
  for (size_t k = 0; k < stage.nodes.size(); ++k) {
    if (k != 0) out.append(", ");
    append_node(out, stage.nodes[k], rank, detail);
  }
  out.append("]}");
}

}  // namespace stg::emit::detail
