// A per-test directory of hand-written trace files (workload.<rank>.et, comm groups).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "delimited.h"
#include "et_def_v004.pb.h"
#include "temp_dir.h"

namespace stg_test {

class TraceSet {
 public:
  explicit TraceSet(std::string prefix) : tmp_({.prefix = std::move(prefix)}) {}

  std::string dir() const { return tmp_.path().string(); }
  std::string path(int rank) const { return tmp_.sub("workload." + std::to_string(rank) + ".et"); }

  void write_file(const std::string& name, const std::string& content) const {
    tmp_.write(name, content);
  }
  // Rank `rank`'s trace: the metadata message, then `nodes`.
  void write_rank(int rank, const std::vector<ChakraProtoMsg::Node>& nodes) const {
    std::string out;
    ChakraProtoMsg::GlobalMetadata md;
    auto* a = md.add_attr();
    a->set_name("schema");
    a->set_string_val("symbolic_tensor_network");
    append_delimited(out, md);
    for (const ChakraProtoMsg::Node& n : nodes) append_delimited(out, n);
    write_file("workload." + std::to_string(rank) + ".et", out);
  }
  void write_comm_groups(const std::string& text) const { write_file("workload.json", text); }

 private:
  TempDir tmp_;
};

}  // namespace stg_test
