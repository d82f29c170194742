// The per-step figures (step_figures.h) of a generation run, from its lowered
// stages: every rank of a stage writes the stage's nodes, so a stage's
// figures are those of each of its ranks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "stg/lower/flat_stage.h"
#include "stg/lower/stage_graph.h"
#include "stg/mesh/mesh.h"
#include "stg/report/step_figures.h"

namespace stg::report {

// The name a collective's mesh axis is reported under: "sp" as "cp", dp,
// tp, cp and ep as themselves, an index past the mesh's axes as
// "embedding" (the tied-embedding group listed after the mesh's groups),
// any other axis "other".
std::string reported_axis(const mesh::Mesh& mesh, int axis);

// The name a send or recv's traffic is reported under: "pp" between
// stages, "<axis> p2p" along a mesh axis (ring attention's "cp p2p").
std::string p2p_axis(const mesh::Mesh& mesh, const mesh::Peer& peer);

// What each rank of a stage does in one step.
RankStep stage_step(const StageGraph& stage, const mesh::Mesh& mesh);
RankStep stage_step(const lower::FlatStage& stage, const mesh::Mesh& mesh);

// Figures of ranks first_rank..last_rank (rank numbering of
// mesh/rank_layout.h: the stage varies slowest) from each stage's step.
// SEND/RECV count as "pp".
StepFigures step_figures(const std::vector<RankStep>& by_stage, const mesh::Mesh& mesh,
                         int64_t first_rank, int64_t last_rank, std::string units);
StepFigures step_figures(const std::vector<StageGraph>& stages, const mesh::Mesh& mesh,
                         int64_t first_rank, int64_t last_rank, std::string units);

}  // namespace stg::report
