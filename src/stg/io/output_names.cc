#include "stg/io/output_names.h"

#include <algorithm>
#include <string_view>

namespace stg::io {

namespace {

bool ends_with(std::string_view s, std::string_view end) {
  return s.size() >= end.size() && s.substr(s.size() - end.size()) == end;
}

// Where the "%d" of `pattern` starts (a "%%" is a literal percent sign), or
// npos.
size_t rank_position(const std::string& pattern) {
  for (size_t i = 0; i + 1 < pattern.size(); ++i) {
    if (pattern[i] != '%') continue;
    if (pattern[i + 1] == 'd') return i;
    ++i;  // "%%" or another directive (check_rank_pattern refuses those)
  }
  return std::string::npos;
}

}  // namespace

std::string complete_rank_pattern(const std::string& name) {
  if (rank_position(name) != std::string::npos) return name;
  for (std::string_view extension : {".et", ".json"})
    if (ends_with(name, extension) && name.size() > extension.size() &&
        name[name.size() - extension.size() - 1] != '/')
      return name.substr(0, name.size() - extension.size()) + ".%d" + std::string(extension);
  return name + ".%d.et";
}

bool astra_sim_can_open(const std::string& pattern) {
  const size_t at = rank_position(pattern);
  if (at == std::string::npos || pattern.compare(at, std::string::npos, "%d.et") != 0) return false;
  // PREFIX ends in '.', and has a file-name part before that dot.
  return at >= 2 && pattern[at - 1] == '.' && pattern[at - 2] != '/';
}

std::string derived_comm_group_name(const std::string& pattern) {
  const size_t at = rank_position(pattern);
  std::string before = at == std::string::npos ? pattern : pattern.substr(0, at);
  const std::string after = at == std::string::npos ? "" : pattern.substr(at + 2);
  if (at != std::string::npos && !before.empty() && before.back() == '.')
    before.pop_back();  // ".%d" goes as a whole
  // The file name the traces' pattern spells: "%%" is one percent sign.
  std::string name;
  const std::string joined = before + after;
  for (size_t i = 0; i < joined.size(); ++i) {
    name += joined[i];
    if (joined[i] == '%' && i + 1 < joined.size() && joined[i + 1] == '%') ++i;
  }
  // The last ".et" extension becomes ".json" (followed by the end or a
  // further extension: "w.et.bak.%d.et" -> "w.et.bak.json", "w.%d.et.bak" ->
  // "w.json.bak").
  for (size_t from = name.size(); from > 0;) {
    const size_t dot = name.rfind(".et", from - 1);
    if (dot == std::string::npos) break;
    if (dot + 3 == name.size() || name[dot + 3] == '.') {
      name.replace(dot, 3, ".json");
      return name;
    }
    from = dot;
  }
  if (name == pattern || name.empty()) name += ".json";
  return name;
}

std::string directory_part(const std::string& name) {
  const size_t slash = name.rfind('/');
  return slash == std::string::npos ? "" : name.substr(0, slash);
}

}  // namespace stg::io

namespace stg::io {

std::string outside_output_dir(const std::string& name) {
  if (!name.empty() && name.front() == '/') return "is an absolute path";
  size_t start = 0;
  while (start <= name.size()) {
    const size_t slash = std::min(name.find('/', start), name.size());
    if (std::string_view(name).substr(start, slash - start) == "..") return "has a '..' part";
    start = slash + 1;
  }
  return "";
}

}  // namespace stg::io
