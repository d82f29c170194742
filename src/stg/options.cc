#include "stg/options.h"

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "stg/util/closest.h"
#include "stg/util/ignore_case.h"

namespace stg {

namespace {

// "--units 'phisical' is unknown: did you mean physical? (use stg or
// physical)"; without a close choice, "... is unknown: use stg or physical".
[[noreturn]] void unknown_choice(const char* flag, std::string_view text,
                                 const std::vector<std::string>& choices,
                                 const std::string& valid) {
  const std::string close = util::closest(std::string(text), choices);
  const std::string what = std::string(flag) + " '" + std::string(text) + "' is unknown: ";
  throw UsageError(close.empty() ? what + "use " + valid
                                 : what + "did you mean " + close + "? (use " + valid + ")");
}

}  // namespace

emit::Schema parse_schema(std::string_view s) {
  if (util::equal_ignoring_case(s, "v0.0.4")) return emit::Schema::kV004;
  if (util::equal_ignoring_case(s, "v0.0.1")) return emit::Schema::kV001;
  if (util::equal_ignoring_case(s, "json")) return emit::Schema::kJson;
  unknown_choice("--chakra_schema_version", s, {"v0.0.4", "v0.0.1", "json"},
                 "v0.0.4, v0.0.1 or json");
}

emit::TraceDetail parse_trace_detail(std::string_view s) {
  if (util::equal_ignoring_case(s, "full")) return emit::TraceDetail::kFull;
  if (util::equal_ignoring_case(s, "sim")) return emit::TraceDetail::kSim;
  unknown_choice("--trace_detail", s, {"full", "sim"}, "full or sim");
}

lower::Schedule parse_schedule(std::string_view s) {
  for (const auto& [name, value] : std::initializer_list<std::pair<const char*, lower::Schedule>>{
           {"none", lower::Schedule::kNone},
           {"gpipe", lower::Schedule::kGpipe},
           {"1f1b", lower::Schedule::k1F1B},
           {"interleaved", lower::Schedule::kInterleaved},
           {"zb-h1", lower::Schedule::kZbH1},
           {"dualpipe", lower::Schedule::kDualPipe},
           {"dualpipev", lower::Schedule::kDualPipeV}})
    if (util::equal_ignoring_case(s, name)) return value;
  unknown_choice("--pipeline_schedule", s,
                 {"none", "gpipe", "1f1b", "interleaved", "zb-h1", "dualpipe", "dualpipev"},
                 "none, gpipe, 1f1b, interleaved, zb-h1, dualpipe or dualpipev");
}

CpAlgo parse_cp_algo(std::string_view s) {
  if (util::equal_ignoring_case(s, "allgather")) return CpAlgo::kAllGather;
  if (util::equal_ignoring_case(s, "ring")) return CpAlgo::kRing;
  if (util::equal_ignoring_case(s, "ulysses")) return CpAlgo::kUlysses;
  unknown_choice("--cp_algo", s, {"allgather", "ring", "ulysses"}, "allgather, ring or ulysses");
}

Units parse_units(std::string_view s) {
  if (util::equal_ignoring_case(s, "stg")) return Units::kStg;
  if (util::equal_ignoring_case(s, "physical")) return Units::kPhysical;
  unknown_choice("--units", s, {"stg", "physical"}, "stg or physical");
}

DType parse_dtype(std::string_view s) {
  if (util::equal_ignoring_case(s, "fp32")) return DType::kFp32;
  if (util::equal_ignoring_case(s, "bf16")) return DType::kBf16;
  if (util::equal_ignoring_case(s, "fp16")) return DType::kFp16;
  if (util::equal_ignoring_case(s, "fp8")) return DType::kFp8;
  unknown_choice("--dtype", s, {"fp32", "bf16", "fp16", "fp8"}, "fp32, bf16, fp16 or fp8");
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::kFp32:
      return "fp32";
    case DType::kBf16:
      return "bf16";
    case DType::kFp16:
      return "fp16";
    case DType::kFp8:
      return "fp8";
  }
  return "?";
}

Recompute parse_recompute(std::string_view s) {
  if (s == "0" || util::equal_ignoring_case(s, "false") || util::equal_ignoring_case(s, "no") ||
      util::equal_ignoring_case(s, "none"))
    return Recompute::kNone;
  if (s == "1" || util::equal_ignoring_case(s, "true") || util::equal_ignoring_case(s, "yes") ||
      util::equal_ignoring_case(s, "full"))
    return Recompute::kFull;
  if (util::equal_ignoring_case(s, "selective")) return Recompute::kSelective;
  throw UsageError("--activation_recompute '" + std::string(s) +
                   "' is unknown: use 0/none, 1/full or selective");
}

int64_t dtype_bytes(DType dtype) {
  switch (dtype) {
    case DType::kFp32:
      return 4;
    case DType::kBf16:
    case DType::kFp16:
      return 2;
    case DType::kFp8:
      return 1;
  }
  return 2;
}

namespace {

// A whole number >= 0, or -1.
int64_t whole(std::string_view text) {
  if (text.empty() || text.size() > 18) return -1;
  int64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}

}  // namespace

void check_limits(const Options& o) {
  if (o.threads > kMaxThreads)
    throw UsageError("--threads " + std::to_string(o.threads) + " is too many: use at most " +
                     std::to_string(kMaxThreads) + " (0: one per core)");
  if (o.num_stacks && *o.num_stacks > kMaxStacks)
    throw UsageError("--num_stacks " + std::to_string(*o.num_stacks) +
                     " is too many blocks: use at most " + std::to_string(kMaxStacks));
  std::string flags;
  int64_t ranks = 1;
  bool too_many = false;
  for (int r = 0; r < mesh::kNumAxes; ++r) {
    const int64_t degree = o.degree.row(r);
    if (degree < 1) return;  // refused as not a degree
    if (degree == 1) continue;
    flags += (flags.empty() ? "" : " * ") + std::string(mesh::kAxes[r].flag) + " " +
             std::to_string(degree);
    too_many = too_many || __builtin_mul_overflow(ranks, degree, &ranks) || ranks > kMaxRanks;
  }
  if (too_many)
    throw UsageError(flags + " is more than " + std::to_string(kMaxRanks) +
                     " ranks, the most Chakra traces can number (32-bit ranks): use smaller "
                     "degrees");
}

std::pair<int64_t, int64_t> parse_shard(std::string_view text,
                                        const std::function<const char*(const char*)>& getenv) {
  if (text == "auto") {
    // Index and count variables of the launchers, most specific first; a
    // Slurm job array numbers its tasks from SLURM_ARRAY_TASK_MIN.
    struct Source {
      const char *index, *count, *offset;
    };
    const Source sources[] = {
        {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", nullptr},
        {"PMIX_RANK", "PMIX_SIZE", nullptr},
        {"PMI_RANK", "PMI_SIZE", nullptr},
        {"SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN"},
        {"SLURM_PROCID", "SLURM_NTASKS", nullptr},
    };
    for (const Source& src : sources) {
      const char* index = getenv(src.index);
      const char* count = getenv(src.count);
      if (!index || !count) continue;
      int64_t i = whole(index), n = whole(count);
      const int64_t offset = src.offset && getenv(src.offset) ? whole(getenv(src.offset)) : 0;
      if (i < 0 || n < 1 || offset < 0 || i - offset < 0 || i - offset >= n)
        throw UsageError(std::string("--shard auto: ") + src.index + "=" + index + " and " +
                         src.count + "=" + count + " are not a shard index and count: give " +
                         "--shard i/n");
      return {i - offset, n};
    }
    throw UsageError(
        "--shard auto found no launcher variables (OMPI_COMM_WORLD_RANK/SIZE, PMIX_RANK/SIZE, "
        "PMI_RANK/SIZE, SLURM_ARRAY_TASK_ID/COUNT, SLURM_PROCID/NTASKS): give --shard i/n");
  }
  const size_t slash = text.find('/');
  const int64_t i = slash == std::string_view::npos ? -1 : whole(text.substr(0, slash));
  const int64_t n = slash == std::string_view::npos ? -1 : whole(text.substr(slash + 1));
  if (i < 0 || n < 1 || i >= n)
    throw UsageError("--shard '" + std::string(text) +
                     "' is not valid: use i/n with 0 <= i < n (e.g. 0/4), or auto");
  return {i, n};
}

}  // namespace stg
