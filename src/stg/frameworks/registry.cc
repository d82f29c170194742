#include "stg/frameworks/registry.h"

#include <memory>

#include "stg/util/ignore_case.h"

namespace stg::frameworks {

// Each framework's file defines its factory.
std::unique_ptr<Framework> make_reference();
std::unique_ptr<Framework> make_megatron();

namespace {

struct Entry {
  const char* name;
  std::unique_ptr<Framework> (*make)();
};

// The table (an explicit list: a self-registering object in a static
// library would be dropped by the linker).
constexpr Entry kFrameworks[] = {
    {"reference", make_reference},
    {"megatron", make_megatron},
};

struct Built {
  std::string name;
  std::unique_ptr<Framework> framework;
};

const std::vector<Built>& built() {
  static const std::vector<Built> all = [] {
    std::vector<Built> out;
    for (const Entry& e : kFrameworks) out.push_back({e.name, e.make()});
    return out;
  }();
  return all;
}

// "a, b or c"
std::string choices() {
  const std::vector<std::string> all = names();
  std::string out;
  for (size_t i = 0; i < all.size(); ++i)
    out += (i == 0 ? "" : i + 1 == all.size() ? " or " : ", ") + all[i];
  return out;
}

}  // namespace

std::vector<std::string> names() {
  std::vector<std::string> out;
  for (const Entry& e : kFrameworks) out.emplace_back(e.name);
  return out;
}

const Framework& find(std::string_view name) {
  for (const Built& b : built())
    if (util::equal_ignoring_case(b.name, name)) return *b.framework;
  throw UsageError("--framework '" + std::string(name) + "' is unknown: use " + choices());
}

void refuse_flags_of_others(const Framework& chosen, const Options& o) {
  for (const Built& b : built()) {
    if (b.framework.get() == &chosen) continue;
    const std::string flag = b.framework->own_flag_given(o);
    if (!flag.empty())
      throw UsageError(flag + " applies to --framework " + b.name + " only: add --framework " +
                       b.name);
  }
}

}  // namespace stg::frameworks
