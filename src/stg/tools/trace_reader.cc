#include "stg/tools/trace_reader.h"

#include <fcntl.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/wire_format_lite.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "et_def_v001.pb.h"
#include "et_def_v004.pb.h"

namespace stg::tools {

namespace fs = std::filesystem;
namespace pb4 = ChakraProtoMsg;
namespace pb1 = ChakraProtoMsgV001;
using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedInputStream;
using google::protobuf::io::FileInputStream;

const char* format_name(TraceFormat f) {
  switch (f) {
    case TraceFormat::kV004:
      return "v0.0.4";
    case TraceFormat::kV001:
      return "v0.0.1";
    case TraceFormat::kJson:
      return "json";
  }
  return "?";
}

const char* kind_name(NodeKind k) {
  switch (k) {
    case NodeKind::kInvalid:
      return "INVALID_NODE";
    case NodeKind::kMetadata:
      return "METADATA_NODE";
    case NodeKind::kMemLoad:
      return "MEM_LOAD_NODE";
    case NodeKind::kMemStore:
      return "MEM_STORE_NODE";
    case NodeKind::kComp:
      return "COMP_NODE";
    case NodeKind::kSend:
      return "COMM_SEND_NODE";
    case NodeKind::kRecv:
      return "COMM_RECV_NODE";
    case NodeKind::kColl:
      return "COMM_COLL_NODE";
    case NodeKind::kUnknown:
      return "UNKNOWN_NODE";
  }
  return "UNKNOWN_NODE";
}

namespace {

constexpr const char* kCollNames[] = {
    "ALL_REDUCE", "REDUCE",         "ALL_GATHER",           "GATHER", "SCATTER", "BROADCAST",
    "ALL_TO_ALL", "REDUCE_SCATTER", "REDUCE_SCATTER_BLOCK", "BARRIER"};
constexpr int kNumCollNames = static_cast<int>(std::size(kCollNames));

int coll_from_v004_number(int64_t v) {
  return v >= 0 && v < kNumCollNames ? static_cast<int>(v) : kCollUnknown;
}

int coll_from_name(const std::string& s) {
  for (int i = 0; i < kNumCollNames; ++i)
    if (s == kCollNames[i]) return i;
  return kCollUnknown;
}

NodeKind kind_from_v004(int64_t t) {
  switch (t) {
    case 0:
      return NodeKind::kInvalid;
    case 1:
      return NodeKind::kMetadata;
    case 2:
      return NodeKind::kMemLoad;
    case 3:
      return NodeKind::kMemStore;
    case 4:
      return NodeKind::kComp;
    case 5:
      return NodeKind::kSend;
    case 6:
      return NodeKind::kRecv;
    case 7:
      return NodeKind::kColl;
    default:
      return NodeKind::kUnknown;
  }
}

NodeKind kind_from_v001(int64_t t) {
  switch (t) {
    case 0:
      return NodeKind::kInvalid;
    case 1:
      return NodeKind::kMemLoad;
    case 2:
      return NodeKind::kMemStore;
    case 3:
      return NodeKind::kComp;
    case 4:
      return NodeKind::kSend;
    case 5:
      return NodeKind::kRecv;
    case 6:
      return NodeKind::kColl;
    default:
      return NodeKind::kUnknown;
  }
}

// v0.0.1 CollectiveCommType -> v0.0.4 numbering (renumber, do not rename).
int coll_from_v001(int64_t v) {
  switch (v) {
    case 1:
      return kCollAllReduce;
    case 2:
      return kCollAllToAll;
    case 3:
      return kCollAllGather;
    case 4:
      return kCollReduceScatter;
    default:
      return kCollUnknown;
  }
}

NodeKind kind_from_json(const std::string& s) {
  if (s == "comp_node" || s == "COMP_NODE") return NodeKind::kComp;
  if (s == "coll_comm_node" || s == "COMM_COLL_NODE") return NodeKind::kColl;
  if (s == "comm_send_node" || s == "COMM_SEND_NODE") return NodeKind::kSend;
  if (s == "comm_recv_node" || s == "COMM_RECV_NODE") return NodeKind::kRecv;
  if (s == "mem_load_node" || s == "MEM_LOAD_NODE") return NodeKind::kMemLoad;
  if (s == "mem_store_node" || s == "MEM_STORE_NODE") return NodeKind::kMemStore;
  if (s == "metadata_node" || s == "METADATA_NODE") return NodeKind::kMetadata;
  if (s == "invalid_node" || s == "INVALID_NODE") return NodeKind::kInvalid;
  return NodeKind::kUnknown;
}

// Integer value of an attribute, whichever integer member of the oneof holds
// it; nullopt for strings, lists, floating point and an unset value.
std::optional<int64_t> attr_int(const pb4::AttributeProto& a) {
  switch (a.value_case()) {
    case pb4::AttributeProto::kInt32Val:
      return a.int32_val();
    case pb4::AttributeProto::kInt64Val:
      return a.int64_val();
    case pb4::AttributeProto::kUint32Val:
      return a.uint32_val();
    case pb4::AttributeProto::kUint64Val:
      return static_cast<int64_t>(a.uint64_val());
    case pb4::AttributeProto::kSint32Val:
      return a.sint32_val();
    case pb4::AttributeProto::kSint64Val:
      return a.sint64_val();
    case pb4::AttributeProto::kFixed32Val:
      return a.fixed32_val();
    case pb4::AttributeProto::kFixed64Val:
      return static_cast<int64_t>(a.fixed64_val());
    case pb4::AttributeProto::kSfixed32Val:
      return a.sfixed32_val();
    case pb4::AttributeProto::kSfixed64Val:
      return a.sfixed64_val();
    case pb4::AttributeProto::kBoolVal:
      return a.bool_val() ? 1 : 0;
    default:
      return std::nullopt;
  }
}

std::optional<int64_t> json_int(const nlohmann::json& v) {
  if (v.is_number_integer()) {
    if (v.is_number_unsigned()) return static_cast<int64_t>(v.get<uint64_t>());
    return v.get<int64_t>();
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.2e18)
      return static_cast<int64_t>(d);
  }
  if (v.is_boolean()) return v.get<bool>() ? 1 : 0;
  return std::nullopt;
}

// Sets the group of `n` from attribute `attr` if no higher-priority
// attribute set it already (pg_name > comm_group > communicator_id).
void offer_group(TraceNode& n, GroupAttr attr, std::string value, bool is_string) {
  if (n.group_attr != GroupAttr::kNone && n.group_attr <= attr) return;
  n.group = std::move(value);
  n.group_attr = attr;
  n.group_is_string = is_string;
}

void compute_missing(TraceNode& n) {
  uint32_t m = 0;
  switch (n.kind) {
    case NodeKind::kComp:
      if (!n.num_ops) m |= kMissNumOps;
      if (!n.tensor_size) m |= kMissTensorSize;
      break;
    case NodeKind::kColl:
      if (!n.comm_type) m |= kMissCommType;
      if (!n.comm_size) m |= kMissCommSize;
      if (!n.group) m |= kMissGroup;
      break;
    case NodeKind::kSend:
      if (!n.comm_size) m |= kMissCommSize;
      if (!n.comm_dst) m |= kMissCommDst;
      if (!n.comm_tag) m |= kMissCommTag;
      break;
    case NodeKind::kRecv:
      if (!n.comm_size) m |= kMissCommSize;
      if (!n.comm_src) m |= kMissCommSrc;
      if (!n.comm_tag) m |= kMissCommTag;
      break;
    default:
      break;
  }
  n.missing = m;
}

// Whether the first message of a file is a GlobalMetadata rather than a
// Node: on the wire both start with length-delimited fields 1 and 2 (a
// Node's id 0 is not written in proto3), so it is a GlobalMetadata only if
// every field is 1 or 2 and length-delimited (a Node's id, type, deps and
// attrs are fields 1/3/4/5/10 with varint or packed encodings) and it parses
// as one.
bool looks_like_global_metadata(const std::string& msg, pb4::GlobalMetadata& md) {
  CodedInputStream in(reinterpret_cast<const uint8_t*>(msg.data()), static_cast<int>(msg.size()));
  for (;;) {
    const uint32_t tag = in.ReadTag();
    if (tag == 0) break;
    const int field = static_cast<int>(WireFormatLite::GetTagFieldNumber(tag));
    if ((field != 1 && field != 2) ||
        WireFormatLite::GetTagWireType(tag) != WireFormatLite::WIRETYPE_LENGTH_DELIMITED)
      return false;
    uint32_t len = 0;
    if (!in.ReadVarint32(&len) || !in.Skip(static_cast<int>(len))) return false;
  }
  if (!in.ConsumedEntireMessage() || in.CurrentPosition() != static_cast<int>(msg.size()))
    return false;
  return md.ParseFromString(msg);
}

// For a file without metadata: v0.0.4 nodes carry attributes (field 10,
// length-delimited) or packed deps; v0.0.1 nodes have flat varint fields.
// Headerless files are v0.0.1 unless the first node says otherwise.
TraceFormat guess_headerless_format(const std::string& msg) {
  CodedInputStream in(reinterpret_cast<const uint8_t*>(msg.data()), static_cast<int>(msg.size()));
  for (;;) {
    const uint32_t tag = in.ReadTag();
    if (tag == 0) break;
    const int field = static_cast<int>(WireFormatLite::GetTagFieldNumber(tag));
    const auto wt = WireFormatLite::GetTagWireType(tag);
    if ((field == 10 || field == 5 || field == 4) &&
        wt == WireFormatLite::WIRETYPE_LENGTH_DELIMITED)
      return TraceFormat::kV004;
    if (!WireFormatLite::SkipField(&in, tag)) break;
  }
  return TraceFormat::kV001;
}

}  // namespace

const char* coll_name(int coll) {
  return coll >= 0 && coll < kNumCollNames ? kCollNames[coll] : "UNKNOWN";
}

const char* group_attr_name(GroupAttr a) {
  switch (a) {
    case GroupAttr::kNone:
      return "none";
    case GroupAttr::kPgName:
      return "pg_name";
    case GroupAttr::kCommGroup:
      return "comm_group";
    case GroupAttr::kCommunicatorId:
      return "communicator_id";
  }
  return "none";
}

std::string missing_names(uint32_t missing) {
  static constexpr std::pair<uint32_t, const char*> kNames[] = {
      {kMissNumOps, "num_ops"},     {kMissTensorSize, "tensor_size"}, {kMissCommType, "comm_type"},
      {kMissCommSize, "comm_size"}, {kMissGroup, "pg_name"},          {kMissCommSrc, "comm_src"},
      {kMissCommDst, "comm_dst"},   {kMissCommTag, "comm_tag"},
  };
  std::string out;
  for (const auto& [bit, name] : kNames) {
    if (!(missing & bit)) continue;
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

void TraceNode::clear() { *this = TraceNode(); }

// ---------------------------------------------------------------------------
// TraceReader

TraceReader::TraceReader() = default;

TraceReader::~TraceReader() { close(); }

void TraceReader::close() {
  stream_.reset();  // reads from fd_: goes first
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool TraceReader::fail(std::string message) {
  if (error_.empty()) error_ = path_ + ": " + std::move(message);
  done_ = true;
  return false;
}

bool TraceReader::open(const std::string& path) {
  // A second open starts over: the previous file is closed, not leaked.
  close();
  path_ = path;
  error_.clear();
  format_ = TraceFormat::kV004;
  file_size_ = 0;
  offset_ = 0;
  pending_.reset();
  done_ = false;
  index_ = 0;
  has_metadata_ = false;
  metadata_version_.clear();
  metadata_attrs_.clear();
  json_ = nlohmann::json();
  json_pos_ = 0;
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) return fail(std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd_, &st) != 0) return fail(std::string("cannot stat: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return fail("not a regular file");
  file_size_ = static_cast<uint64_t>(st.st_size);
  if (file_size_ == 0) return fail("empty file (not even a metadata message)");

  // JSON layout: the text starts with '{' and then '"' or '}'. A protobuf
  // stream cannot start like that in practice (a 123-byte first message
  // whose first field is field 4 length-delimited).
  char head[64];
  const ssize_t got = ::pread(fd_, head, sizeof head, 0);
  if (got < 0) return fail(std::string("cannot read: ") + std::strerror(errno));
  ssize_t i = 0;
  auto skip_ws = [&] {
    while (i < got && std::isspace(static_cast<unsigned char>(head[i]))) ++i;
  };
  skip_ws();
  bool is_json = false;
  if (i < got && head[i] == '{') {
    ++i;
    skip_ws();
    is_json = i < got && (head[i] == '"' || head[i] == '}');
  }
  if (is_json) {
    format_ = TraceFormat::kJson;
    std::ifstream in(path, std::ios::binary);
    json_ = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (json_.is_discarded()) return fail("malformed JSON (truncated file?)");
    if (!json_.is_object() || !json_.contains("nodes") || !json_["nodes"].is_array())
      return fail("JSON file without a \"nodes\" list");
    return true;
  }

  stream_ = std::make_unique<FileInputStream>(fd_);
  std::string first;
  if (!read_message(first)) return error_.empty() ? fail("no message") : false;
  pb4::GlobalMetadata md;
  if (looks_like_global_metadata(first, md)) {
    format_ = TraceFormat::kV004;
    has_metadata_ = true;
    metadata_version_ = md.version();
    for (const pb4::AttributeProto& a : md.attr()) {
      std::string value;
      if (a.value_case() == pb4::AttributeProto::kStringVal) {
        value = a.string_val();
      } else if (auto v = attr_int(a)) {
        value = std::to_string(*v);
      }
      metadata_attrs_.emplace_back(a.name(), std::move(value));
    }
  } else {
    format_ = guess_headerless_format(first);
    pending_ = std::move(first);
  }
  return true;
}

bool TraceReader::read_message(std::string& out) {
  if (done_) return false;
  if (offset_ >= file_size_) {
    done_ = true;
    return false;
  }
  // A fresh CodedInputStream per message: its byte counters never approach
  // the 2 GiB limit however large the file is.
  CodedInputStream in(stream_.get());
  uint64_t len = 0;
  if (!in.ReadVarint64(&len))
    return fail("truncated or malformed message length at byte " + std::to_string(offset_));
  const uint64_t header = static_cast<uint64_t>(in.CurrentPosition());
  const uint64_t remaining = file_size_ - offset_ - std::min(header, file_size_ - offset_);
  if (len > remaining)
    return fail("truncated file: message at byte " + std::to_string(offset_) + " has " +
                std::to_string(len) + " bytes but only " + std::to_string(remaining) + " remain");
  if (len > static_cast<uint64_t>(INT_MAX))
    return fail("message at byte " + std::to_string(offset_) + " is too large");
  if (!in.ReadString(&out, static_cast<int>(len)))
    return fail("truncated file: message at byte " + std::to_string(offset_) + " ends early");
  offset_ += header + len;
  return true;
}

bool TraceReader::next(TraceNode& node) {
  if (done_) return false;
  node.clear();
  if (format_ == TraceFormat::kJson) {
    const nlohmann::json& nodes = json_["nodes"];
    if (json_pos_ >= nodes.size()) {
      done_ = true;
      return false;
    }
    const bool ok = decode_json(nodes[json_pos_], node);
    ++json_pos_;
    ++index_;
    return ok;
  }
  std::string msg;
  if (pending_) {
    msg = std::move(*pending_);
    pending_.reset();
  } else if (!read_message(msg)) {
    return false;
  }
  const bool ok = format_ == TraceFormat::kV004 ? decode_v004(msg, node) : decode_v001(msg, node);
  ++index_;
  return ok;
}

bool TraceReader::decode_v004(const std::string& msg, TraceNode& n) {
  pb4::Node p;
  if (!p.ParseFromString(msg))
    return fail("node #" + std::to_string(index_) + " is not a valid v0.0.4 Node message");
  n.id = p.id();
  n.name = p.name();
  n.raw_type = p.type();
  n.kind = kind_from_v004(p.type());
  n.data_deps.assign(p.data_deps().begin(), p.data_deps().end());
  n.ctrl_deps.assign(p.ctrl_deps().begin(), p.ctrl_deps().end());
  n.duration_micros = p.duration_micros();
  for (const pb4::AttributeProto& a : p.attr()) {
    const std::string& name = a.name();
    const bool is_string = a.value_case() == pb4::AttributeProto::kStringVal;
    const std::optional<int64_t> v = attr_int(a);
    if (name == "num_ops") {
      if (v) n.num_ops = *v;
    } else if (name == "tensor_size") {
      if (v) n.tensor_size = static_cast<uint64_t>(*v);
    } else if (name == "comm_type") {
      if (v) {
        n.comm_type = coll_from_v004_number(*v);
      } else if (is_string) {
        n.comm_type = coll_from_name(a.string_val());
      }
    } else if (name == "comm_size") {
      if (v) n.comm_size = *v;
    } else if (name == "pg_name" || name == "comm_group" || name == "communicator_id") {
      const GroupAttr ga = name == "pg_name"      ? GroupAttr::kPgName
                           : name == "comm_group" ? GroupAttr::kCommGroup
                                                  : GroupAttr::kCommunicatorId;
      if (is_string) {
        offer_group(n, ga, a.string_val(), true);
      } else if (v) {
        offer_group(n, ga, std::to_string(*v), false);
      }
    } else if (name == "comm_src") {
      if (v) n.comm_src = *v;
    } else if (name == "comm_dst") {
      if (v) n.comm_dst = *v;
    } else if (name == "comm_tag") {
      if (v) n.comm_tag = *v;
    }
  }
  compute_missing(n);
  return true;
}

bool TraceReader::decode_v001(const std::string& msg, TraceNode& n) {
  pb1::Node p;
  if (!p.ParsePartialFromString(msg))
    return fail("node #" + std::to_string(index_) + " is not a valid v0.0.1 Node message");
  if (!p.has_id() || !p.has_name())
    return fail("node #" + std::to_string(index_) + " lacks the required v0.0.1 field id or name");
  n.id = p.id();
  n.name = p.name();
  n.raw_type = p.node_type();
  n.kind = kind_from_v001(p.node_type());
  n.data_deps.assign(p.parent().begin(), p.parent().end());
  if (p.has_num_ops()) n.num_ops = static_cast<int64_t>(p.num_ops());
  if (p.has_tensor_size()) n.tensor_size = p.tensor_size();
  if (p.has_comm_type()) n.comm_type = coll_from_v001(p.comm_type());
  if (p.has_comm_size()) n.comm_size = static_cast<int64_t>(p.comm_size());
  if (p.has_communicator_id())
    offer_group(n, GroupAttr::kCommunicatorId, std::to_string(p.communicator_id()), false);
  if (p.has_comm_src()) n.comm_src = p.comm_src();
  if (p.has_comm_dst()) n.comm_dst = p.comm_dst();
  if (p.has_comm_tag()) n.comm_tag = p.comm_tag();
  compute_missing(n);
  return true;
}

bool TraceReader::decode_json(const nlohmann::json& j, TraceNode& n) {
  const std::string where = "node #" + std::to_string(index_);
  if (!j.is_object()) return fail(where + " is not a JSON object");
  auto int_field = [&](const char* key) -> std::optional<int64_t> {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return std::nullopt;
    return json_int(*it);
  };
  auto deps = [&](const char* key, std::vector<uint64_t>& out) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return true;
    if (!it->is_array()) return false;
    for (const auto& d : *it) {
      auto v = json_int(d);
      if (!v) return false;
      out.push_back(static_cast<uint64_t>(*v));
    }
    return true;
  };
  const auto id = int_field("id");
  if (!id) return fail(where + " has no integer \"id\"");
  n.id = static_cast<uint64_t>(*id);
  if (auto it = j.find("name"); it != j.end() && it->is_string()) n.name = it->get<std::string>();
  if (auto it = j.find("node_type"); it != j.end()) {
    if (it->is_string()) {
      n.kind = kind_from_json(it->get<std::string>());
    } else if (auto t = json_int(*it)) {
      n.raw_type = *t;
      n.kind = kind_from_v004(*t);
    } else {
      n.kind = NodeKind::kUnknown;
    }
  }
  if (!deps("data_deps", n.data_deps) || !deps("ctrl_deps", n.ctrl_deps))
    return fail(where + " has a malformed dependency list");
  n.num_ops = int_field("num_ops");
  if (auto v = int_field("tensor_size")) n.tensor_size = static_cast<uint64_t>(*v);
  if (auto it = j.find("comm_type"); it != j.end() && !it->is_null()) {
    if (it->is_string()) {
      n.comm_type = coll_from_name(it->get<std::string>());
    } else if (auto v = json_int(*it)) {
      n.comm_type = coll_from_v004_number(*v);
    } else {
      n.comm_type = kCollUnknown;
    }
  }
  n.comm_size = int_field("comm_size");
  static constexpr std::pair<const char*, GroupAttr> kGroupKeys[] = {
      {"pg_name", GroupAttr::kPgName},
      {"comm_group", GroupAttr::kCommGroup},
      {"communicator_id", GroupAttr::kCommunicatorId}};
  for (const auto& [key, ga] : kGroupKeys) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) continue;
    if (it->is_string()) {
      offer_group(n, ga, it->get<std::string>(), true);
    } else if (auto v = json_int(*it)) {
      offer_group(n, ga, std::to_string(*v), false);
    }
  }
  n.comm_src = int_field("comm_src");
  n.comm_dst = int_field("comm_dst");
  n.comm_tag = int_field("comm_tag");
  n.duration_micros =
      static_cast<uint64_t>(std::max<int64_t>(int_field("duration_micros").value_or(0), 0));
  compute_missing(n);
  return true;
}

// ---------------------------------------------------------------------------
// File names, comm-group files, directories.

namespace {

std::vector<std::string> split_dots(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    const size_t dot = s.find('.', start);
    out.push_back(s.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) return out;
    start = dot + 1;
  }
}

bool all_digits(const std::string& s) {
  return !s.empty() && s.size() <= 18 &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

}  // namespace

int64_t rank_from_file_name(const std::string& file_name) {
  const std::vector<std::string> tokens = split_dots(file_name);
  for (auto it = tokens.rbegin(); it != tokens.rend(); ++it)
    if (all_digits(*it)) return std::stoll(*it);
  return -1;
}

bool is_trace_file_name(const std::string& file_name) {
  if (rank_from_file_name(file_name) < 0) return false;
  const std::vector<std::string> tokens = split_dots(file_name);
  const std::string& last = tokens.back();
  return tokens.size() > 1 && (last == "et" || last == "json" || last == "eg" || all_digits(last));
}

bool read_comm_groups(const std::string& path, CommGroups& out, std::string& error) {
  out.groups.clear();
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = path + ": cannot open";
    return false;
  }
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    error = path + ": malformed JSON";
    return false;
  }
  if (!j.is_object()) {
    error = path + ": not a JSON object of group id -> list of ranks";
    return false;
  }
  for (const auto& [key, value] : j.items()) {
    const bool numeric =
        !key.empty() && (all_digits(key) || (key[0] == '-' && all_digits(key.substr(1))));
    if (!numeric) {
      error = path + ": key \"" + key + "\" is not a decimal group id";
      return false;
    }
    if (!value.is_array()) {
      error = path + ": group " + key + " is not a list of ranks";
      return false;
    }
    std::vector<int64_t> members;
    members.reserve(value.size());
    for (const auto& m : value) {
      if (!m.is_number_integer()) {
        error = path + ": group " + key + " has a member that is not an integer";
        return false;
      }
      members.push_back(m.get<int64_t>());
    }
    out.groups.emplace_back(key, std::move(members));
  }
  // nlohmann orders keys as strings; use numeric order.
  std::stable_sort(out.groups.begin(), out.groups.end(), [](const auto& a, const auto& b) {
    return std::stoll(a.first) < std::stoll(b.first);
  });
  return true;
}

bool may_be_comm_group_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  char buf[256];
  in.read(buf, sizeof buf);
  const std::streamsize got = in.gcount();
  std::streamsize i = 0;
  auto skip_ws = [&] {
    while (i < got && std::isspace(static_cast<unsigned char>(buf[i]))) ++i;
  };
  skip_ws();
  if (i >= got || buf[i] != '{') return false;
  ++i;
  skip_ws();
  if (i < got && buf[i] == '}') return true;
  if (i >= got || buf[i] != '"') return false;
  ++i;
  if (i < got && buf[i] == '-') ++i;
  const std::streamsize digits = i;
  while (i < got && std::isdigit(static_cast<unsigned char>(buf[i]))) ++i;
  return i > digits && i < got && buf[i] == '"';
}

bool scan_trace_dir(const std::string& dir, const std::string& comm_group_override, TraceDir& out,
                    std::string& error) {
  out = TraceDir();
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    error = dir + ": not a directory";
    return false;
  }
  std::vector<std::string> candidates;
  std::vector<std::string> names;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code fec;
    if (!it->is_regular_file(fec)) continue;
    names.push_back(it->path().filename().string());
  }
  if (ec) {
    error = dir + ": cannot list: " + ec.message();
    return false;
  }
  std::sort(names.begin(), names.end());
  std::error_code eq;
  for (const std::string& name : names) {
    const std::string path = (fs::path(dir) / name).string();
    const bool json = name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0;
    if (json && may_be_comm_group_file(path)) {
      if (!comm_group_override.empty() && fs::equivalent(path, comm_group_override, eq)) continue;
      CommGroups probe;
      std::string err;
      if (read_comm_groups(path, probe, err)) {
        candidates.push_back(path);
        continue;
      }
      // It starts as a comm-group file does but cannot be read as one: not
      // silently absent (every collective would then look groupless).
      if (comm_group_override.empty()) {
        error = err +
                " (it starts as a comm-group file: mend it, or name the comm-group file "
                "with --comm_group)";
        return false;
      }
    }
    if (is_trace_file_name(name)) out.files.emplace_back(rank_from_file_name(name), path);
  }
  std::stable_sort(out.files.begin(), out.files.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  if (!comm_group_override.empty()) {
    out.comm_group_file = comm_group_override;
  } else if (candidates.size() == 1) {
    out.comm_group_file = candidates[0];
  } else if (candidates.size() > 1) {
    error = dir + ": several comm-group files (";
    for (size_t i = 0; i < candidates.size(); ++i)
      error += (i ? ", " : "") + fs::path(candidates[i]).filename().string();
    error += "); name one with --comm_group";
    return false;
  }
  return true;
}

bool read_trace(const std::string& path, std::vector<TraceNode>& nodes, TraceFormat& format,
                std::string& error) {
  nodes.clear();
  TraceReader reader;
  if (!reader.open(path)) {
    error = reader.error();
    return false;
  }
  format = reader.format();
  TraceNode n;
  while (reader.next(n)) nodes.push_back(std::move(n));
  if (!reader.error().empty()) {
    error = reader.error();
    return false;
  }
  return true;
}

}  // namespace stg::tools
