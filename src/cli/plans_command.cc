#include "plans_command.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <numeric>

#include "command_line.h"
#include "generate_flags.h"
#include "generate_options.h"
#include "generate_parse.h"
#include "progress_bar.h"
#include "stg/sweep/sweep.h"

namespace cli {

namespace {

using stg::sweep::PlanRow;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

namespace mesh = stg::mesh;

// The axis label an axis name of the traffic counts under: its first word
// when that is an axis's label (Megatron-LM's gradient group "dp x cp"
// under dp, ring attention's "cp p2p" under cp), else none ("": the
// tied-embedding group, ...).
std::string column_label(const std::string& axis) {
  const std::string first = axis.substr(0, axis.find(' '));
  for (const mesh::AxisSpec& a : mesh::kAxes)
    if (first == a.label) return first;
  return "";
}

double column_bytes(const PlanRow& r, const std::string& label) {
  double sum = 0;
  for (const auto& [axis, bytes] : r.bytes)
    if (column_label(axis) == label) sum += bytes;
  return sum;
}

double comm_bytes(const PlanRow& r) {
  double sum = 0;
  for (const auto& [axis, bytes] : r.bytes) sum += bytes;
  return sum;
}

// The columns: name, value, whether it is printed in the text table.
struct Column {
  std::string name;
  std::function<double(const PlanRow&)> value;
  bool in_table;
  int decimals;
};

// The axis rows in the order of their degree columns (AxisSpec::plans_column).
std::vector<int> degree_column_rows() {
  std::vector<int> rows;
  for (int r = 0; r < mesh::kNumAxes; ++r) rows.push_back(r);
  std::sort(rows.begin(), rows.end(),
            [](int a, int b) { return mesh::kAxes[a].plans_column < mesh::kAxes[b].plans_column; });
  return rows;
}

std::vector<Column> make_columns() {
  std::vector<Column> c;
  for (int r : degree_column_rows())
    c.push_back(
        {mesh::kAxes[r].label, [r](const PlanRow& p) { return double(p.degree.row(r)); }, true, 0});
  c.insert(
      c.end(),
      {
          {"virtual_stages", [](const PlanRow& r) { return double(r.virtual_stages); }, true, 0},
          {"micro_batch", [](const PlanRow& r) { return double(r.micro_batch); }, true, 0},
          {"zero_stage", [](const PlanRow& r) { return double(r.zero_stage); }, true, 0},
          {"micro_batches", [](const PlanRow& r) { return double(r.micro_batches); }, false, 0},
          {"memory_gib", [](const PlanRow& r) { return r.memory / kGiB; }, true, 2},
          {"params_gib", [](const PlanRow& r) { return r.params / kGiB; }, false, 3},
          {"grads_gib", [](const PlanRow& r) { return r.grads / kGiB; }, false, 3},
          {"optimizer_gib", [](const PlanRow& r) { return r.optimizer / kGiB; }, false, 3},
          {"activations_gib", [](const PlanRow& r) { return r.activations / kGiB; }, true, 2},
          {"tflop", [](const PlanRow& r) { return r.flops / 1e12; }, true, 1},
      });
  // Traffic by axis in rank order (the stages last), then what no axis has
  // (Megatron-LM's tied-embedding group, ...).
  for (int r : mesh::rank_order()) {
    const std::string label = mesh::kAxes[r].label;
    c.push_back({label + "_gib",
                 [label](const PlanRow& p) { return column_bytes(p, label) / kGiB; }, true, 2});
  }
  c.insert(c.end(),
           {
               {"other_gib", [](const PlanRow& r) { return column_bytes(r, "") / kGiB; }, false, 3},
               {"comm_gib", [](const PlanRow& r) { return comm_bytes(r) / kGiB; }, true, 2},
               {"bubble", [](const PlanRow& r) { return r.bubble; }, true, 4},
               // The predicted step time and its parts (sweep/plan_time.h).
               {"time_s", [](const PlanRow& r) { return r.time.total; }, true, 3},
               {"compute_s", [](const PlanRow& r) { return r.time.compute; }, false, 4},
               {"exposed_comm_s", [](const PlanRow& r) { return r.time.exposed; }, false, 4},
               {"dp_tail_s", [](const PlanRow& r) { return r.time.overlapped_tail; }, false, 4},
               {"bubble_s", [](const PlanRow& r) { return r.time.bubble; }, false, 4},
           });
  return c;
}

const std::vector<Column>& columns() {
  static const std::vector<Column> c = make_columns();
  return c;
}

std::string column_names() {
  std::string names;
  for (const Column& c : columns()) names += (names.empty() ? "" : ", ") + c.name;
  return names;
}

struct PlansRequest {
  GenerateFlags flags;
  int64_t gpus = 0;
  std::string sort = "memory_gib";
  double fits_gb = 0;  // 0: no limit
  bool csv = false;
  int64_t top = 0;  // 0: all
  stg::sweep::SweepOptions sweep;
  std::string model_name;
};

void add_plans_flags(CLI::App& app, PlansRequest& r) {
  add_generate_flags(app, r.flags);
  app.description(
      "stg plans: every valid (dp, tp, pp, cp, ep, virtual stages, micro-batch, ZeRO) plan of a "
      "decoder model on --gpus N, evaluated without writing traces. The model's flags are "
      "generate's; a degree flag (--tp 8) keeps only plans with it.");
  r.flags.integers.add(app, "--gpus", r.gpus, "GPUs (ranks) of every plan", stg::kMaxRanks,
                       "an integer from 1 to " + std::to_string(stg::kMaxRanks), 1);
  app.add_option("--sort", r.sort,
                 "column to sort by, ascending: " + column_names() +
                     " (time: time_s, the predicted step time on --gpu)");
  app.add_option("--fits_gb", r.fits_gb, "drop plans whose memory per rank exceeds X GiB")
      ->check(kPositive);
  app.add_flag("--csv", r.csv, "print CSV with every column, for scripts");

  r.flags.integers.add(app, "--top", r.top, "print only the first N plans (default all)",
                       std::numeric_limits<int64_t>::max(), "an integer >= 0", 0);
}

// Parses and checks; throws stg::UsageError (CLI::CallForHelp for --help).
void parse(CLI::App& app, PlansRequest& r, const std::vector<std::string>& args) {
  parse_generate_flags(app, r.flags.integers, "stg plans", args);
  if (r.csv && r.flags.json)
    throw stg::UsageError("--csv and --json are two formats: give one of them");
  if (r.sort == "time") r.sort = "time_s";
  if (app.count("--gpus") == 0)
    throw stg::UsageError("--gpus is required: give the GPU count, e.g. --gpus 64");
  if (std::none_of(columns().begin(), columns().end(),
                   [&](const Column& c) { return r.sort == c.name; }))
    throw stg::UsageError("--sort '" + r.sort + "' is not a column: use one of " + column_names());
  if (app.count("--pipeline_schedule"))
    throw stg::UsageError(
        "--pipeline_schedule is chosen by stg plans (1f1b, interleaved with --virtual_stages > 1): "
        "drop it");
  apply_text_flags(r.flags);
  const stg::Options& o = r.flags.options;
  auto fix = [&](const std::string& name, std::initializer_list<const char*> flags, int64_t value) {
    for (const char* f : flags)
      if (*f && app.count(f)) r.sweep.fixed[name] = value;
  };
  // A degree flag (its alias counted with it) or its other spelling.
  for (int a = 0; a < mesh::kNumAxes; ++a)
    fix(mesh::kAxes[a].label, {mesh::kAxes[a].flag, mesh::kAxes[a].spelling}, o.degree.row(a));
  fix("virtual_stages", {"--virtual_stages"}, o.virtual_stages);
  fix("micro_batch", {"--micro_batch"}, o.micro_batch.value_or(0));
  fix("zero_stage", {"--zero_stage"}, o.zero_stage.value_or(0));
  if (o.weight_sharded) r.sweep.fixed["zero_stage"] = 3;
  r.sweep.gpus = r.gpus;
  r.sweep.threads = o.threads;
}

// The plans to print: filtered by --fits_gb, sorted by --sort (ties in
// enumeration order), the first --top.
std::vector<PlanRow> selected(const PlansRequest& r, std::vector<PlanRow> plans) {
  if (r.fits_gb > 0)
    plans.erase(std::remove_if(plans.begin(), plans.end(),
                               [&](const PlanRow& p) { return p.memory / kGiB > r.fits_gb; }),
                plans.end());
  const Column& key = *std::find_if(columns().begin(), columns().end(),
                                    [&](const Column& c) { return r.sort == c.name; });
  // Each plan's key once, and the plans moved in its order (not swapped
  // about by the sort).
  std::vector<double> keys;
  keys.reserve(plans.size());
  for (const PlanRow& p : plans) keys.push_back(key.value(p));
  std::vector<size_t> order(plans.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return keys[a] < keys[b]; });
  if (r.top > 0 && static_cast<int64_t>(order.size()) > r.top) order.resize(r.top);
  std::vector<PlanRow> sorted;
  sorted.reserve(order.size());
  for (size_t i : order) sorted.push_back(std::move(plans[i]));
  return sorted;
}

std::string cell(const Column& c, const PlanRow& r) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", c.decimals, c.value(r));
  return text;
}

void print_csv(const std::vector<PlanRow>& plans) {
  std::string line;
  for (const Column& c : columns()) line += (line.empty() ? "" : ",") + c.name;
  std::printf("%s,schedule\n", line.c_str());
  for (const PlanRow& p : plans) {
    line.clear();
    for (const Column& c : columns()) line += (line.empty() ? "" : ",") + cell(c, p);
    std::printf("%s,%s\n", line.c_str(), p.schedule.c_str());
  }
}

void print_table(const std::vector<PlanRow>& plans) {
  std::string line;
  for (const Column& c : columns())
    if (c.in_table) {
      char head[64];
      std::snprintf(head, sizeof head, "%*s", std::max<int>(6, static_cast<int>(c.name.size())),
                    c.name.c_str());
      line += (line.empty() ? "" : " ") + std::string(head);
    }
  std::printf("%s\n", line.c_str());
  for (const PlanRow& p : plans) {
    line.clear();
    for (const Column& c : columns())
      if (c.in_table) {
        char text[64];
        std::snprintf(text, sizeof text, "%*s", std::max<int>(6, static_cast<int>(c.name.size())),
                      cell(c, p).c_str());
        line += (line.empty() ? "" : " ") + std::string(text);
      }
    std::printf("%s\n", line.c_str());
  }
}

// The plans as JSON: every column, the schedule and the bytes per axis.
nlohmann::ordered_json plans_json(const std::vector<PlanRow>& plans) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const PlanRow& p : plans) {
    nlohmann::ordered_json row;
    for (const Column& c : columns())
      row[c.name] = c.decimals == 0 ? nlohmann::ordered_json(static_cast<int64_t>(c.value(p)))
                                    : nlohmann::ordered_json(c.value(p));
    row["schedule"] = p.schedule;
    row["bytes"] = p.bytes;
    row["flops"] = p.flops;
    row["memory_bytes"] = p.memory;
    rows.push_back(row);
  }
  return rows;
}

}  // namespace

int plans_main(const std::vector<std::string>& args) {
  CLI::App app{"stg plans", "stg plans"};
  PlansRequest r;
  add_plans_flags(app, r);
  try {
    parse(app, r, args);
    const auto start = std::chrono::steady_clock::now();
    stg::sweep::SweepResult result;
    {
      ProgressBar bar;  // on a terminal, after a second
      r.sweep.progress = &bar;
      result = stg::sweep::sweep(r.flags.options, r.sweep);
      r.sweep.progress = nullptr;
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const size_t found = result.plans.size();
    const std::vector<PlanRow> plans = selected(r, std::move(result.plans));
    if (r.flags.json) {
      std::printf("%s\n", plans_json(plans).dump(1).c_str());
    } else if (r.csv) {
      print_csv(plans);
    } else {
      print_table(plans);
      std::printf(
          "stg plans: %zu plans on %lld GPUs (%zu printed; %lld candidates, %lld shapes) in %.3f "
          "s; per rank: memory of the most loaded rank, TFLOP and GiB sent per step\n",
          found, static_cast<long long>(r.gpus), plans.size(),
          static_cast<long long>(result.candidates), static_cast<long long>(result.templates),
          seconds);
    }
    return 0;
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const stg::UsageError& e) {
    std::fprintf(stderr, "stg plans: error: %s\n", e.what());
    return 2;
  }
}

nlohmann::ordered_json plans_call(const std::vector<std::string>& args) {
  CLI::App app{"stg plans", "stg plans"};
  PlansRequest r;
  add_plans_flags(app, r);
  try {
    parse(app, r, args);
  } catch (const CLI::CallForHelp&) {
    throw stg::UsageError("--help is the command line's: run `stg plans --help`");
  }
  return plans_json(selected(r, stg::sweep::sweep(r.flags.options, r.sweep).plans));
}

}  // namespace cli
