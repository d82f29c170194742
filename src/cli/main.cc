// The `stg` command: the seed generator's command line, unchanged.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "dot_command.h"
#include "generate_flags.h"
#include "generate_parse.h"
#include "generate_run.h"
#include "infer_command.h"
#include "inspect_command.h"
#include "plans_command.h"
#include "stg/models/presets.h"
#include "validate_command.h"

// `stg models`: the table of presets; `--help` says what it prints.
int models_main(const std::vector<std::string>& args) {
  for (const std::string& arg : args) {
    if (arg == "--help" || arg == "-h") {
      std::puts(
          "usage: stg models\n"
          "Prints the model presets (--model NAME) with their blocks, widths, heads, experts and\n"
          "parameters. Use a preset with stg --model NAME or stg infer --model NAME.");
      return 0;
    }
    std::fprintf(stderr,
                 "stg: error: stg models takes no arguments, '%s' given: run stg models "
                 "(--help says what it prints)\n",
                 arg.c_str());
    return 2;
  }
  std::fputs(stg::models::models_table().c_str(), stdout);
  return 0;
}

// `stg validate DIR`, `stg inspect DIR`, `stg dot DIR`, `stg plans ...`, `stg models`,
// `stg help`, `stg infer ...` (a serving iteration), `stg generate ...`;
// anything else is the generator's own command line.
int dispatch(int argc, char** argv, int (*generate_main)(int, char**)) {
  const std::string command = argc > 1 ? argv[1] : "";
  const std::vector<std::string> rest(argv + std::min(argc, 2), argv + argc);
  if (command == "validate") return cli::validate_main(rest);
  if (command == "inspect") return cli::inspect_main(rest);
  if (command == "dot") return cli::dot_main(rest);
  if (command == "plans") return cli::plans_main(rest);
  if (command == "infer") return cli::infer_main(argc - 1, argv + 1);
  if (command == "models") return models_main(rest);
  if (command == "help") {  // `stg help` is `stg --help`
    char help[] = "--help";
    char* args[] = {argv[0], help};
    return generate_main(2, args);
  }
  if (command == "generate") {
    argv[1] = argv[0];
    return generate_main(argc - 1, argv + 1);
  }
  return generate_main(argc, argv);
}

int generate_main(int argc, char** argv) {
  CLI::App app{"stg: synthetic distributed-training workloads as Chakra execution traces"};
  cli::GenerateFlags flags;
  cli::add_generate_flags(app, flags);
  if (const std::optional<int> status =
          cli::parse_generate_command(app, flags.integers, argc, argv))
    return *status;
  if (flags.version) {
    std::printf("stg %s (Chakra schemas: v0.0.4, v0.0.1, json)\n", STG_VERSION);
    return 0;
  }
  return cli::run_generate_command(flags);
}

int main(int argc, char** argv) { return dispatch(argc, argv, generate_main); }
