#include "inspect_command.h"

#include <CLI/CLI.hpp>
#include <cstdio>

#include "command_line.h"
#include "schedule_chart.h"
#include "stg/options.h"

namespace cli {
namespace {

using stg::tools::CountSize;
using stg::tools::InspectFile;
using stg::tools::InspectReport;
using stg::tools::NodeKind;
using stg::tools::Spread;

// Figures stay exact: the tables are for reading and diffing.
std::string num(int64_t v) { return std::to_string(v); }

void print_header(const InspectReport& r) {
  std::string formats;
  for (const std::string& f : r.formats) formats += (formats.empty() ? "" : ", ") + f;
  std::printf("  ranks:           %lld (%s), format %s\n", static_cast<long long>(r.ranks.size()),
              stg::tools::ranks_text(r.ranks).c_str(), formats.c_str());
  if (!r.missing_ranks.empty())
    std::printf("  missing ranks:   %s\n", stg::tools::ranks_text(r.missing_ranks).c_str());
  if (!r.metadata.empty())
    std::printf("  metadata:        %s\n", nlohmann::ordered_json(r.metadata).dump().c_str());
  if (!r.comm_group_file) {
    std::printf("  comm-group file: none\n");
  } else {
    const stg::tools::CommGroupSummary& cg = *r.comm_group_file;
    std::string sizes;
    for (const auto& [size, count] : cg.groups_by_size)
      sizes += (sizes.empty() ? "" : ", ") + std::to_string(count) + " of size " + num(size);
    std::printf("  comm-group file: %s (%lld groups: %s)\n", cg.file.c_str(),
                static_cast<long long>(cg.groups), sizes.c_str());
  }
  std::printf("  file bytes:      %s total, %s .. %s per rank\n", num(r.file_bytes.total).c_str(),
              num(r.file_bytes.min).c_str(), num(r.file_bytes.max).c_str());
}

void print_spread_row(const char* name, const Spread& s) {
  std::printf("  %-22s %14s %12s %12s\n", name, num(s.total).c_str(), num(s.min).c_str(),
              num(s.max).c_str());
}

void print_nodes(const InspectReport& r) {
  std::printf("\n%-24s %14s %12s %12s\n", "nodes", "total", "min/rank", "max/rank");
  for (NodeKind k : stg::tools::kNodeKindOrder) {
    const Spread& s = r.nodes_by_kind[static_cast<int>(k)];
    if (s.total) print_spread_row(kind_name(k), s);
  }
  print_spread_row("all", r.nodes);
  if (r.nodes_missing_attributes)
    std::printf("  nodes missing attributes: %lld\n",
                static_cast<long long>(r.nodes_missing_attributes));
  std::printf("\ncompute (COMP_NODE)\n");
  std::printf("  num_ops total %s (per rank %s .. %s)\n", r.compute.num_ops.text().c_str(),
              num(r.compute.num_ops_min).c_str(), num(r.compute.num_ops_max).c_str());
  std::printf("  tensor_size total %s\n", num(r.compute.tensor_size).c_str());
}

void print_count_size(const std::string& name, const CountSize& c) {
  std::printf("  %-22s %10s %20s\n", name.c_str(), num(c.count).c_str(), num(c.size).c_str());
}

void print_transfers(const InspectReport& r) {
  const stg::tools::CollectiveFigures& co = r.collectives;
  std::printf("\n%-24s %10s %20s   (sizes as stored in the traces)\n", "collectives", "count",
              "comm_size sum");
  for (const auto& [type, c] : co.by_type)
    print_count_size(type == -1 ? "MISSING" : stg::tools::coll_name(type), c);
  for (const auto& [size, c] : co.by_group_size)
    print_count_size("group size " + (size < 0 ? std::string("unknown") : num(size)), c);
  print_count_size("all", co.total);
  if (!co.by_group_attr.empty()) {
    std::string attrs;
    for (const auto& [name, count] : co.by_group_attr)
      attrs += (attrs.empty() ? "" : ", ") + name + " " + std::to_string(count);
    std::printf("  groups named by: %s; %lld distinct groups used\n", attrs.c_str(),
                static_cast<long long>(co.groups_used));
  }
  std::printf("\n%-24s %10s %20s\n", "point-to-point", "count", "comm_size sum");
  print_count_size("send", r.send);
  print_count_size("recv", r.recv);
}

// The columns of a structure group or a file after its first column(s).
void print_file_columns(const InspectFile& f) {
  std::printf(" %7s %6s %6s %5s %5s %16s %14s %10s  %016llx\n", num(f.nodes).c_str(),
              num(f.by_kind(NodeKind::kComp)).c_str(), num(f.by_kind(NodeKind::kColl)).c_str(),
              num(f.by_kind(NodeKind::kSend)).c_str(), num(f.by_kind(NodeKind::kRecv)).c_str(),
              num(f.num_ops).c_str(), num(f.collectives.size).c_str(), num(f.file_bytes).c_str(),
              static_cast<unsigned long long>(f.structure_hash));
}

void print_structure(const InspectReport& r) {
  std::printf(
      "\nstructure groups: %zu (ranks whose graphs match up to ids, group ids, peers and tags)\n",
      r.structure_groups.size());
  std::printf("  %-3s %-16s %7s %6s %6s %5s %5s %16s %14s %10s  %s\n", "#", "ranks", "nodes",
              "comp", "coll", "send", "recv", "num_ops", "coll size", "bytes", "hash");
  int idx = 0;
  for (const stg::tools::StructureGroup& g : r.structure_groups) {
    std::printf("  %-3d %-16s", ++idx, stg::tools::ranks_text(g.ranks).c_str());
    print_file_columns(g.first);
  }
  if (!r.per_rank) return;
  std::printf("\n  %-6s %-24s %7s %6s %6s %5s %5s %16s %14s %10s  %s\n", "rank", "file", "nodes",
              "comp", "coll", "send", "recv", "num_ops", "coll size", "bytes", "hash");
  for (const InspectFile& f : *r.per_rank) {
    std::printf("  %-6lld %-24s", static_cast<long long>(f.rank), f.file.c_str());
    print_file_columns(f);
  }
}

void add_options(CLI::App& app, IntegerFlags& integers, stg::tools::InspectOptions& options,
                 std::string& dir, bool& as_json, ScheduleChartRequest& chart) {
  app.add_option("DIR", dir, "directory of per-rank traces (or --schedule)");
  app.add_option("--schedule", chart.schedule,
                 "instead of DIR: draw a pipeline schedule's order (gpipe, 1f1b, interleaved, "
                 "zb-h1, dualpipe, dualpipev) with unit times, its bubble and activations");
  app.add_option("--pp", chart.pp, "with --schedule: pipeline stages (default 4)")
      ->check(CLI::Range(1, 64));
  app.add_option("--micro_batches", chart.micro_batches,
                 "with --schedule: micro-batches (default 8)")
      ->check(CLI::Range(1, 1024));
  app.add_option("--virtual_stages", chart.virtual_stages,
                 "with --schedule interleaved: chunks per stage (default 2)")
      ->check(CLI::Range(1, 16));
  app.add_option("--comm_group,--comm_group_file", options.comm_group_file,
                 "comm-group JSON (default: the one in DIR)")
      ->check(kFileName);
  app.add_flag("--json", as_json, "print the figures as JSON");
  app.add_flag("--per_rank", options.per_rank, "also list every rank");
  integers.add(app, "--threads", options.threads, "reader threads (default: one per core)",
               stg::kMaxThreads,
               "an integer up to " + std::to_string(stg::kMaxThreads) + " (0: one per core)");
}

}  // namespace

void print_inspection(const InspectReport& r) {
  std::printf("trace directory: %s\n", r.directory.c_str());
  if (!r.listed) return;
  print_header(r);
  print_nodes(r);
  print_transfers(r);
  std::printf("\n%s", stg::report::format_step_figures(r.step).c_str());
  print_structure(r);
}

int inspect_main(const std::vector<std::string>& args) {
  CLI::App app{
      "Summarises the per-rank Chakra traces in DIR (v0.0.4, v0.0.1 or JSON): ranks,\n"
      "nodes by type, compute, collectives by type and group size, send/recv,\n"
      "structure groups and file sizes.",
      "stg inspect"};
  app.footer("Exit status: 0, or 2 on unreadable input or a usage error.");
  stg::tools::InspectOptions options;
  std::string dir;
  bool as_json = false;
  ScheduleChartRequest chart;
  IntegerFlags integers;
  add_options(app, integers, options, dir, as_json, chart);
  if (const auto done = parse_command(app, integers, "inspect", args)) return *done;
  if (!chart.schedule.empty()) {
    try {
      std::fputs(schedule_chart_text(chart).c_str(), stdout);
      return 0;
    } catch (const std::exception& e) {
      std::string what = e.what();
      if (what.rfind("--pipeline_schedule", 0) == 0) what.replace(0, 19, "--schedule");
      std::fprintf(stderr, "stg inspect: error: %s\n", what.c_str());
      return 2;
    }
  }
  if (dir.empty()) {
    std::fprintf(stderr,
                 "stg inspect: error: DIR is required: give a trace directory or "
                 "--schedule NAME\n");
    return 2;
  }
  const InspectReport report = stg::tools::inspect_dir(dir, options);
  if (as_json) {
    std::printf("%s\n", to_json(report).dump(1).c_str());
  } else {
    print_inspection(report);
  }
  for (const std::string& e : report.errors)
    std::fprintf(stderr, "stg inspect: error: %s\n", e.c_str());
  std::fflush(stdout);
  return report.exit_status();
}

nlohmann::ordered_json inspect_json(const std::vector<std::string>& args) {
  CLI::App app{"Summarises the per-rank Chakra traces in DIR.", "stg inspect"};
  stg::tools::InspectOptions options;
  std::string dir;
  bool as_json = false;
  ScheduleChartRequest chart;
  IntegerFlags integers;
  add_options(app, integers, options, dir, as_json, chart);
  parse_command_flags(app, integers, "inspect", args);
  if (!chart.schedule.empty())
    throw stg::UsageError(
        "--schedule draws a chart, which has no JSON: run `stg inspect --schedule " +
        chart.schedule + "`");
  if (dir.empty()) throw stg::UsageError("DIR is required: give a trace directory");
  const InspectReport report = stg::tools::inspect_dir(dir, options);
  if (report.exit_status() != 0) {
    std::string errors;
    for (const std::string& e : report.errors) errors += (errors.empty() ? "" : "; ") + e;
    throw stg::UsageError(errors);
  }
  return to_json(report);
}

}  // namespace cli
