#include "stg/io/earlier_run.h"

#include <fstream>
#include <nlohmann/json.hpp>

namespace stg::io {

std::optional<int64_t> earlier_rank_count(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  const nlohmann::json groups = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!groups.is_object() || groups.empty()) return std::nullopt;
  int64_t count = 0;
  for (const auto& [id, ranks] : groups.items()) {
    if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    if (!ranks.is_array() || ranks.empty()) return std::nullopt;
    for (const auto& rank : ranks) {
      if (!rank.is_number_unsigned()) return std::nullopt;
      const auto r = rank.get<uint64_t>();
      if (r >= (uint64_t{1} << 40)) return std::nullopt;  // no run has that many ranks
      count = std::max<int64_t>(count, static_cast<int64_t>(r) + 1);
    }
  }
  return count;
}

}  // namespace stg::io
