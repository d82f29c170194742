// libFuzzer target: stg::models::apply_hf_config (--hf_config) on arbitrary
// JSON text, written to a scratch file. UsageError is the documented answer
// to bad input; any other exception, a crash or a sanitizer report is a
// finding. Run twice: with default options and with some flags "given".
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "stg/models/hf_config.h"
#include "stg/options.h"

namespace fs = std::filesystem;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 65536) return 0;
  static const fs::path path =
      fs::temp_directory_path() / ("stg_fuzz_hf_config_" + std::to_string(::getpid()) + ".json");
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  for (int round = 0; round < 2; ++round) {
    stg::Options o;
    if (round == 1) {
      o.model = "llama";
      o.dmodel = 64;
      o.seq = 128;
      o.component_flags["--kvhead"] = 2;  // the attention row's flag
    }
    try {
      stg::models::apply_hf_config(path.string(), o);
    } catch (const stg::UsageError&) {
    }
  }
  return 0;
}
