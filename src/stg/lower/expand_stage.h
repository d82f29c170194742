// Every node of a FlatStage written out: the stage as lowering each
// micro-batch would give it (ids, names with the micro-batch number, tags,
// data and schedule dependencies). The libprotobuf writers (v0.0.1, JSON)
// and the tests' full-expansion oracle read this form; v0.0.4 traces are
// written from the FlatStage itself (emit/flat_writer.h), without it.
#pragma once

#include "stg/lower/flat_stage.h"
#include "stg/lower/stage_graph.h"

namespace stg::lower {

StageGraph expand(const FlatStage& stage);

}  // namespace stg::lower
