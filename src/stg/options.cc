#include "stg/options.h"

#include <string>

#include "stg/models/model_kind.h"

namespace stg {

ModelKind parse_model_kind(std::string_view text) {
  if (const models::ModelName* e = models::find_model(text)) return e->kind;
  throw UsageError("--model_type '" + std::string(text) + "' is unknown: use " +
                   models::model_names());
}

emit::Schema parse_schema(std::string_view s) {
  if (s == "v0.0.4") return emit::Schema::kV004;
  if (s == "v0.0.1") return emit::Schema::kV001;
  if (s == "json") return emit::Schema::kJson;
  throw UsageError("--chakra_schema_version '" + std::string(s) +
                   "' is unknown: use v0.0.4, v0.0.1 or json");
}

lower::Schedule parse_schedule(std::string_view s) {
  if (s == "none") return lower::Schedule::kNone;
  if (s == "gpipe") return lower::Schedule::kGpipe;
  if (s == "1f1b") return lower::Schedule::k1F1B;
  if (s == "interleaved") return lower::Schedule::kInterleaved;
  throw UsageError("--pipeline_schedule '" + std::string(s) +
                   "' is unknown: use none, gpipe, 1f1b or interleaved");
}

Units parse_units(std::string_view s) {
  if (s == "stg") return Units::kStg;
  if (s == "physical") return Units::kPhysical;
  throw UsageError("--units '" + std::string(s) + "' is unknown: use stg or physical");
}

DType parse_dtype(std::string_view s) {
  if (s == "fp32") return DType::kFp32;
  if (s == "bf16") return DType::kBf16;
  if (s == "fp16") return DType::kFp16;
  if (s == "fp8") return DType::kFp8;
  throw UsageError("--dtype '" + std::string(s) + "' is unknown: use fp32, bf16, fp16 or fp8");
}

int64_t dtype_bytes(DType dtype) {
  switch (dtype) {
    case DType::kFp32:
      return 4;
    case DType::kBf16:
    case DType::kFp16:
      return 2;
    case DType::kFp8:
      return 1;
  }
  return 2;
}

}  // namespace stg
