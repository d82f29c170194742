// What an output directory says about stg's earlier run in it: the number of
// ranks its comm-group file lists. Stale-file removal uses it so that it only
// ever removes rank files that an earlier run of stg wrote (ranks below that
// count), never files that merely look like rank files.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace stg::io {

// The number of ranks (largest rank + 1) of the comm-group file at `path`, if
// the file exists and has the shape stg writes: one JSON object whose keys
// are group ids and whose values are lists of ranks. Anything else (missing,
// unreadable, another shape) gives nothing: then no file counts as stale.
std::optional<int64_t> earlier_rank_count(const std::string& path);

}  // namespace stg::io
