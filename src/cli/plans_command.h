// `stg plans --model NAME --gpus N ...`: every valid parallel plan, its
// figures as a table (or CSV), sorted and filtered (stg/sweep/sweep.h).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cli {

// `stg plans` with the arguments after the word "plans". Returns 0, or 2
// after a usage error (one line on stderr).
int plans_main(const std::vector<std::string>& args);

// The same command as a value (the Python module's stg.plans): the rows it
// prints, as a JSON array of objects keyed by the CSV columns.
nlohmann::ordered_json plans_call(const std::vector<std::string>& args);

}  // namespace cli
