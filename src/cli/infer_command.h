// `stg infer`: one serving iteration of a decoder model (docs/inference.md).
#pragma once

namespace cli {

// argv[0] is the word `infer`; returns the exit status.
int infer_main(int argc, char** argv);

}  // namespace cli
