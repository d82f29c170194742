// The order in which a stage's nodes are numbered (ids 0..n-1 in file
// order). ASTRA-sim issues the lowest-id ready node first and runs a rank's
// collectives and sends through one communication slot, so the numbering is
// part of the workload (docs/facts.md §5.8).
#pragma once

#include <vector>

#include "stg/lower/stage_graph.h"

namespace stg::lower {

enum class NodeOrder {
  // The reference generator's: nodes are numbered as they are created, per
  // op in graph order (an op's compute node, then the collectives on its
  // first input, then those on its second), then the stage's SENDs and
  // RECVs in link (tag) order. Not topological: a compute node comes before
  // the collectives it reads, and dependencies point to later ids.
  kReference,
  // The order a framework issues the work: compute in graph order, each
  // SEND and collective right behind the node that produces its input, each
  // RECV right before its first consumer.
  kIssue,
};

// A stage's nodes as the issue order reads them: how many, which are
// compute nodes and RECVs, and each one's dependencies (data and ctrl,
// indices). The index is the creation order: among ready compute nodes the
// lowest goes first. A lowered stage is one such graph; a FlatStage's
// micro-batch copies, numbered in reference order, are another.
class IssueGraph {
 public:
  virtual ~IssueGraph() = default;
  virtual int size() const = 0;
  virtual bool removed(int /*i*/) const { return false; }
  virtual NodeKind kind(int i) const = 0;
  virtual void deps(int i, std::vector<int>& out) const = 0;  // appends
};

// The issue order of `g` (indices, parents first), leaving out removed
// nodes. On a cycle the result stops short.
std::vector<int> issue_order(const IssueGraph& g);

// The issue order of `nodes` (indices, parents first), leaving out those
// with `removed[i]`. Dependencies (data and ctrl) must point to kept nodes;
// among compute nodes that are ready the earliest created comes first. On a
// cycle the result stops short (the nodes on or behind it are left out).
std::vector<int> issue_order(const std::vector<LoweredNode>& nodes,
                             const std::vector<bool>& removed);

}  // namespace stg::lower
