// The frameworks by --framework name (framework.h). A new framework is one
// line in registry.cc's table.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "stg/frameworks/framework.h"

namespace stg::frameworks {

// The names, in the table's order.
std::vector<std::string> names();

// The framework called `name`; UsageError naming --framework and the valid
// names otherwise. Each framework exists once: the reference lives as long
// as the program.
const Framework& find(std::string_view name);

// A flag of another framework than `chosen` (Framework::own_flag_given):
// UsageError naming the flag and its framework, so that it is refused
// rather than ignored.
void refuse_flags_of_others(const Framework& chosen, const Options& o);

}  // namespace stg::frameworks
