// The flags read as text into the library's enums (flag_text.cc).
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <utility>

#include "stg/options.h"

namespace cli {

// Flag text -> enum; stg::UsageError naming the flag and the valid choices.
stg::emit::Schema parse_schema(std::string_view text);             // --chakra_schema_version
stg::emit::TraceDetail parse_trace_detail(std::string_view text);  // --trace_detail
stg::lower::Schedule parse_schedule(std::string_view text);        // --pipeline_schedule
stg::Units parse_units(std::string_view text);                     // --units
stg::DType parse_dtype(std::string_view text);                     // --dtype
// 0/1/true/false/yes/no as none/full, or none, full, selective.
stg::Recompute parse_recompute(std::string_view text);  // --activation_recompute
std::string parse_cp_algo(std::string_view text);       // --cp_algo

// --shard "i/n", or "auto": i and n from the launcher's variables (Open MPI,
// PMI, Slurm tasks or job array), read through `getenv` (injected so that
// tests need no environment). Returns {i, n}.
std::pair<int64_t, int64_t> parse_shard(std::string_view text,
                                        const std::function<const char*(const char*)>& getenv);


}  // namespace cli
