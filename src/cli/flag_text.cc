// The flags read as text (--pipeline_schedule 1f1b, --shard 2/8, ...) into
// the library's enums and figures, with stg's one-line messages.
#include "flag_text.h"

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "stg/lower/schedule_row.h"
#include "stg/models/parts/context_parallel.h"
#include "stg/util/closest.h"
#include "stg/util/ignore_case.h"

namespace cli {

namespace {

// "--units 'phisical' is unknown: did you mean physical? (use stg or
// physical)"; without a close choice, "... is unknown: use stg or physical".
[[noreturn]] void unknown_choice(const char* flag, std::string_view text,
                                 const std::vector<std::string>& choices,
                                 const std::string& valid) {
  const std::string close = stg::util::closest(std::string(text), choices);
  const std::string what = std::string(flag) + " '" + std::string(text) + "' is unknown: ";
  throw stg::UsageError(close.empty() ? what + "use " + valid
                                 : what + "did you mean " + close + "? (use " + valid + ")");
}

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

stg::emit::Schema parse_schema(std::string_view s) {
  if (stg::util::equal_ignoring_case(s, "v0.0.4")) return stg::emit::Schema::kV004;
  if (stg::util::equal_ignoring_case(s, "v0.0.1")) return stg::emit::Schema::kV001;
  if (stg::util::equal_ignoring_case(s, "json")) return stg::emit::Schema::kJson;
  unknown_choice("--chakra_schema_version", s, {"v0.0.4", "v0.0.1", "json"},
                 "v0.0.4, v0.0.1 or json");
}

stg::emit::TraceDetail parse_trace_detail(std::string_view s) {
  if (stg::util::equal_ignoring_case(s, "full")) return stg::emit::TraceDetail::kFull;
  if (stg::util::equal_ignoring_case(s, "sim")) return stg::emit::TraceDetail::kSim;
  unknown_choice("--trace_detail", s, {"full", "sim"}, "full or sim");
}

stg::lower::Schedule parse_schedule(std::string_view s) {
  std::vector<std::string> names;
  for (const stg::lower::ScheduleRow* row : stg::lower::schedule_rows()) {
    if (stg::util::equal_ignoring_case(s, row->name())) return *row;
    names.push_back(row->name());
  }
  unknown_choice("--pipeline_schedule", s, names, stg::lower::schedule_names());
}

std::string parse_cp_algo(std::string_view s) {
  std::vector<std::string> names;
  for (const stg::models::CpAlgoRow* row : stg::models::cp_algo_rows()) {
    if (stg::util::equal_ignoring_case(s, row->name)) return row->name;
    names.push_back(row->name);
  }
  unknown_choice("--cp_algo", s, names, stg::models::cp_algo_names());
}

stg::Units parse_units(std::string_view s) {
  if (stg::util::equal_ignoring_case(s, "stg")) return stg::Units::kStg;
  if (stg::util::equal_ignoring_case(s, "physical")) return stg::Units::kPhysical;
  unknown_choice("--units", s, {"stg", "physical"}, "stg or physical");
}

stg::DType parse_dtype(std::string_view s) {
  if (stg::util::equal_ignoring_case(s, "fp32")) return stg::DType::kFp32;
  if (stg::util::equal_ignoring_case(s, "bf16")) return stg::DType::kBf16;
  if (stg::util::equal_ignoring_case(s, "fp16")) return stg::DType::kFp16;
  if (stg::util::equal_ignoring_case(s, "fp8")) return stg::DType::kFp8;
  unknown_choice("--dtype", s, {"fp32", "bf16", "fp16", "fp8"}, "fp32, bf16, fp16 or fp8");
}

stg::Recompute parse_recompute(std::string_view s) {
  if (s == "0" || stg::util::equal_ignoring_case(s, "false") || stg::util::equal_ignoring_case(s, "no") ||
      stg::util::equal_ignoring_case(s, "none"))
    return stg::Recompute::kNone;
  if (s == "1" || stg::util::equal_ignoring_case(s, "true") || stg::util::equal_ignoring_case(s, "yes") ||
      stg::util::equal_ignoring_case(s, "full"))
    return stg::Recompute::kFull;
  if (stg::util::equal_ignoring_case(s, "selective")) return stg::Recompute::kSelective;
  throw stg::UsageError("--activation_recompute '" + std::string(s) +
                   "' is unknown: use 0/none, 1/full or selective");
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
        throw stg::UsageError(std::string("--shard auto: ") + src.index + "=" + index + " and " +
                         src.count + "=" + count + " are not a shard index and count: give " +
                         "--shard i/n");
      return {i - offset, n};
    }
    throw stg::UsageError(
        "--shard auto found no launcher variables (OMPI_COMM_WORLD_RANK/SIZE, PMIX_RANK/SIZE, "
        "PMI_RANK/SIZE, SLURM_ARRAY_TASK_ID/COUNT, SLURM_PROCID/NTASKS): give --shard i/n");
  }
  const size_t slash = text.find('/');
  const int64_t i = slash == std::string_view::npos ? -1 : whole(text.substr(0, slash));
  const int64_t n = slash == std::string_view::npos ? -1 : whole(text.substr(slash + 1));
  if (i < 0 || n < 1 || i >= n)
    throw stg::UsageError("--shard '" + std::string(text) +
                     "' is not valid: use i/n with 0 <= i < n (e.g. 0/4), or auto");
  return {i, n};
}

}  // namespace cli
