// Streaming reader of one Chakra execution-trace file, independent of the
// writers in stg/emit: it is what `stg validate` and `stg inspect` use to
// look at any generator's output (ours or the reference's).
//
// Three layouts are recognised by content, not by file name
// (docs/facts.md §5):
//   * v0.0.4: varint-delimited messages, a GlobalMetadata first, then Nodes
//     whose node-specific values are AttributeProtos;
//   * v0.0.1: varint-delimited flat proto2 Nodes, no metadata message;
//   * json:   {"nodes": [{...}, ...]} (the reference's JSON backend).
// Protobuf files are read one message at a time; only a JSON file is parsed
// as a whole. Every node is turned into a schema-neutral TraceNode.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace google::protobuf::io {
class FileInputStream;
}  // namespace google::protobuf::io

namespace stg::tools {

enum class TraceFormat { kV004, kV001, kJson };
const char* format_name(TraceFormat f);

// Node kinds with the v0.0.4 meaning (v0.0.1 numbers are translated).
enum class NodeKind : uint8_t {
  kInvalid,
  kMetadata,
  kMemLoad,
  kMemStore,
  kComp,
  kSend,
  kRecv,
  kColl,
  kUnknown,  // a number or string no schema defines
};
const char* kind_name(NodeKind k);  // "COMP_NODE", "COMM_COLL_NODE", ...

// Collective types, v0.0.4 numbering (ALL_REDUCE 0 ... BARRIER 9).
inline constexpr int kCollAllReduce = 0;
inline constexpr int kCollAllGather = 2;
inline constexpr int kCollAllToAll = 6;
inline constexpr int kCollReduceScatter = 7;
inline constexpr int kCollUnknown = -2;  // a value outside the schema's enum
// "ALL_REDUCE", ...; "UNKNOWN" for kCollUnknown or any other value.
const char* coll_name(int coll);

// Which attribute named a collective's communicator group.
enum class GroupAttr : uint8_t { kNone, kPgName, kCommGroup, kCommunicatorId };
const char* group_attr_name(GroupAttr a);

// Bits of TraceNode::missing: attributes a consumer needs for the node's
// kind that the node does not carry (or carries without a usable value).
enum MissingAttr : uint32_t {
  kMissNumOps = 1u << 0,
  kMissTensorSize = 1u << 1,
  kMissCommType = 1u << 2,
  kMissCommSize = 1u << 3,
  kMissGroup = 1u << 4,
  kMissCommSrc = 1u << 5,
  kMissCommDst = 1u << 6,
  kMissCommTag = 1u << 7,
};
// Comma-separated attribute names of a `missing` mask.
std::string missing_names(uint32_t missing);

// One node, whatever the schema.
struct TraceNode {
  uint64_t id = 0;
  std::string name;
  NodeKind kind = NodeKind::kInvalid;
  int64_t raw_type = 0;             // node type number as stored (v0.0.1 numbering in v0.0.1 files)
  std::vector<uint64_t> data_deps;  // v0.0.1 `parent` counts as data deps
  std::vector<uint64_t> ctrl_deps;

  std::optional<int64_t> num_ops;
  std::optional<uint64_t> tensor_size;
  std::optional<int> comm_type;  // v0.0.4 numbering, or kCollUnknown
  std::optional<int64_t> comm_size;
  // Group id as text: pg_name verbatim, the decimal form of an integer
  // comm_group / communicator_id. group_attr tells which one it was.
  std::optional<std::string> group;
  GroupAttr group_attr = GroupAttr::kNone;
  bool group_is_string = false;  // the group attribute held a string value
  std::optional<int64_t> comm_src;
  std::optional<int64_t> comm_dst;
  std::optional<int64_t> comm_tag;
  uint64_t duration_micros = 0;  // v0.0.4 and JSON: the node's measured time (0: none)

  uint32_t missing = 0;  // MissingAttr bits for this node's kind

  void clear();
};

// Reads one file. Typical use:
//   TraceReader r;
//   if (!r.open(path)) fail(r.error());
//   TraceNode n;
//   while (r.next(n)) use(n);
//   if (!r.error().empty()) fail(r.error());
// Malformed input (truncated message, bad varint, undecodable message,
// malformed JSON) stops the reader with an error; it never throws for bad
// file content.
class TraceReader {
 public:
  TraceReader();
  ~TraceReader();
  TraceReader(const TraceReader&) = delete;
  TraceReader& operator=(const TraceReader&) = delete;

  // Opens `path` and detects its format. False (with error()) when the file
  // cannot be opened or its first message cannot be decoded. Opening again
  // closes the previous file and starts afresh.
  bool open(const std::string& path);
  // Fills `node` with the next node. False at the end of the file or on an
  // error; error() is empty in the first case.
  bool next(TraceNode& node);

  TraceFormat format() const { return format_; }
  const std::string& error() const { return error_; }
  uint64_t file_size() const { return file_size_; }
  // v0.0.4 GlobalMetadata: version and string-valued attributes
  // (e.g. {"schema", "symbolic_tensor_network"}).
  bool has_metadata() const { return has_metadata_; }
  const std::string& metadata_version() const { return metadata_version_; }
  const std::vector<std::pair<std::string, std::string>>& metadata_attrs() const {
    return metadata_attrs_;
  }

 private:
  bool fail(std::string message);
  void close();  // the stream, then the descriptor
  // Next varint-delimited message into `out`. False at a clean end of file
  // (error_ empty) or on a framing error.
  bool read_message(std::string& out);
  bool decode_v004(const std::string& msg, TraceNode& node);
  bool decode_v001(const std::string& msg, TraceNode& node);
  bool decode_json(const nlohmann::json& j, TraceNode& node);

  std::string path_;
  std::string error_;
  TraceFormat format_ = TraceFormat::kV004;
  uint64_t file_size_ = 0;
  uint64_t offset_ = 0;  // bytes consumed so far
  int fd_ = -1;
  std::unique_ptr<google::protobuf::io::FileInputStream> stream_;
  std::optional<std::string> pending_;  // first message when it is already a node
  bool done_ = false;
  uint64_t index_ = 0;  // messages/nodes returned

  bool has_metadata_ = false;
  std::string metadata_version_;
  std::vector<std::pair<std::string, std::string>> metadata_attrs_;

  nlohmann::json json_;  // whole document for the JSON layout
  size_t json_pos_ = 0;
};

// Rank of a trace file: the last all-digit token of the file name split at
// '.' ("workload.12.et" -> 12), or -1 when there is none.
int64_t rank_from_file_name(const std::string& file_name);

// Whether `file_name` looks like a per-rank trace: it has a rank token and
// its last token is "et", "json", "eg" or the rank itself.
bool is_trace_file_name(const std::string& file_name);

// A comm-group file: a JSON object whose keys are decimal integers and whose
// values are lists of integers. Group ids keep their key text.
struct CommGroups {
  std::vector<std::pair<std::string, std::vector<int64_t>>> groups;  // file order
};
// Parses `path`; false with `error` if it is not such a file.
bool read_comm_groups(const std::string& path, CommGroups& out, std::string& error);
// Cheap check of a file's first bytes: true when it may be a comm-group file
// (an object whose first key is a decimal number), so that JSON traces are
// not parsed twice while looking for the comm-group file.
bool may_be_comm_group_file(const std::string& path);

// The trace files of a directory and its comm-group file.
struct TraceDir {
  std::vector<std::pair<int64_t, std::string>> files;  // (rank, path), by rank then name
  std::string comm_group_file;                         // "" when there is none
};
// Lists `dir`: trace files (is_trace_file_name, not a comm-group file) and
// the comm-group file, which is `comm_group_override` when given, else the
// one JSON file of the directory that parses as a comm-group file. False
// with `error` when the directory cannot be listed or holds several
// comm-group files (the caller must then name one).
bool scan_trace_dir(const std::string& dir, const std::string& comm_group_override, TraceDir& out,
                    std::string& error);

// Reads a whole file into `nodes` (one file of one rank; used by the tools
// that need the dependency graph). False with `error` on a read error.
bool read_trace(const std::string& path, std::vector<TraceNode>& nodes, TraceFormat& format,
                std::string& error);

}  // namespace stg::tools
