// The seed's transformer at a size that runs in milliseconds: one block of
// width 64, 4 heads, 16 tokens, 4 sequences, 64-wide input and output.
#pragma once

#include <string>
#include <vector>

namespace stg_test {

inline const std::vector<std::string> kTinyTransformer = {
    "--num_stacks", "1",  "--dmodel", "64", "--dff", "128", "--head", "4",
    "--seq",        "16", "--batch",  "4",  "--din", "64",  "--dout", "64"};

// kTinyTransformer followed by `extra`.
inline std::vector<std::string> tiny_transformer(const std::vector<std::string>& extra) {
  std::vector<std::string> args = kTinyTransformer;
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

}  // namespace stg_test
