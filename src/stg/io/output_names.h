// The names of a run's files: the trace name pattern (--output_name), the
// comm-group file name derived from it, the name rule of ASTRA-sim's trace
// reader, and the sub-directories of the output directory the names need.
#pragma once

#include <string>

namespace stg::io {

// A name without "%d" gets the rank before its extension: "workload.et" ->
// "workload.%d.et", "workload.json" -> "workload.%d.json"; any other name
// gets ".%d.et" appended ("trace" -> "trace.%d.et"). A name with "%d" is
// returned unchanged.
std::string complete_rank_pattern(const std::string& name);

// ASTRA-sim opens rank r's trace as PREFIX + "." + r + ".et": true when
// `pattern` is PREFIX.%d.et with a non-empty file-name part in PREFIX.
bool astra_sim_can_open(const std::string& pattern);

// The comm-group file name derived from a trace pattern, as the later
// reference does for its names: drop ".%d" (or a "%d" without a dot before
// it), turn the last ".et" extension into ".json" ("workload.%d.et" ->
// "workload.json", "w.et.bak.%d.et" -> "w.et.bak.json"); "%%" is written as
// "%" as in the traces' names ("w%%.%d.et" -> "w%.json"). ".json" is
// appended if the name would otherwise not change.
std::string derived_comm_group_name(const std::string& pattern);

// The directory part of `name` ("sub/dir" for "sub/dir/x.et"; "" for a plain
// file name), relative to the output directory.
std::string directory_part(const std::string& name);

}  // namespace stg::io

namespace stg::io {

// Why `name` (an --output_name pattern or a comm-group file name, relative to
// the output directory) would put a file outside the output directory: "an
// absolute path" or "'..' leaves it"; "" when it stays inside. Every file a
// run writes or removes is inside --output_dir.
std::string outside_output_dir(const std::string& name);

}  // namespace stg::io
