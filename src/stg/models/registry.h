// The model of a run: its family's workload builder (families/registry.h),
// or a --module_csv sheet, under the run's framework as a decoder policy
// (workloads/build_workload.h chooses the framework and the workload kind).
#pragma once

#include "stg/models/decoder_policy.h"
#include "stg/models/workload.h"

namespace stg::models {

// The flags of the decoder models given to another model: --cp_algo's
// decoder kernels, then the mixers' flags (models/row_flag.h); UsageError.
void refuse_decoder_flags(const Options& o);

// The model of a run: the serving iteration under --serving, else the
// builder of its family, or the --module_csv sheet.
Workload build_model(const Options& o, const DecoderPolicy& f);

}  // namespace stg::models
