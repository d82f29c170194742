// What Chakra v0.0.1 can hold (docs/facts.md §5.5): its published schema
// (mlcommons/chakra et_def/et_def.proto, the proto2 schema of June 2023)
// declares `comm_size` as uint32, so Chakra's legacy readers keep the low 32
// bits of a larger size (13,421,772,800 is read as 536,870,912). A run with
// such a message is refused before anything is written.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "stg/lower/flat_stage.h"

namespace stg::emit {

// The largest comm_size v0.0.1 holds.
inline constexpr int64_t kV001MaxCommSize = (int64_t{1} << 32) - 1;

// The refusal (one line naming the largest message and pointing to v0.0.4)
// when a stage has a message of 2^32 or more, else nothing. `stages[i]`:
// stage i, or null when it is not written.
std::optional<std::string> v001_comm_size_refusal(
    const std::vector<const lower::FlatStage*>& stages);

}  // namespace stg::emit
