// The generator's flags read as text, turned into stg::Options.
#pragma once

#include <string>
#include <vector>

#include "generate_flags.h"

namespace cli {

// Converts the text flags of `flags` into `flags.options`, in a fixed order
// (the first bad value is the one reported), then applies --model or
// --hf_config. Throws stg::UsageError on a bad value. Returns the notes
// --hf_config leaves for the user.
std::vector<std::string> apply_text_flags(GenerateFlags& flags);

// A boolean flag's text: 0/1, true/false, yes/no (and t/f, y/n), in any
// case; stg::UsageError naming `flag` otherwise.
bool parse_bool(const std::string& flag, const std::string& value);

}  // namespace cli
