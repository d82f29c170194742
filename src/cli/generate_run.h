// Running the generator once its flags are parsed: the run, its summary, and
// every error as a message and an exit status.
#pragma once

#include "generate_flags.h"

namespace cli {

// Applies the text flags, then prints the pass pipeline (--print_passes) or
// generates the traces and prints what the flags ask for. Returns the exit
// status: 0; 2 for a usage error; 1 when the output cannot be written;
// 128 + signal when interrupted; 3 for an internal error; --validate's.
int run_generate_command(GenerateFlags& flags);

}  // namespace cli
