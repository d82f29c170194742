// The table of pipeline schedule rows (schedule_row.h): a new schedule is
// its file in lower/schedules/ and one line here, in --help's order.
#include <stdexcept>
#include <string>

#include "stg/lower/schedule_row.h"
#include "stg/util/ignore_case.h"

namespace stg::lower {

const ScheduleRow& none_schedule();         // schedules/none.cc
const ScheduleRow& gpipe_schedule();        // schedules/gpipe.cc
const ScheduleRow& one_f_one_b_schedule();  // schedules/one_f_one_b.cc
const ScheduleRow& interleaved_schedule();  // schedules/interleaved.cc
const ScheduleRow& zb_h1_schedule();        // schedules/zb_h1.cc
const ScheduleRow& dualpipe_schedule();     // schedules/dualpipe.cc
const ScheduleRow& dualpipev_schedule();    // schedules/dualpipev.cc

const std::vector<const ScheduleRow*>& schedule_rows() {
  static const std::vector<const ScheduleRow*> rows = {
      &none_schedule(),  &gpipe_schedule(),    &one_f_one_b_schedule(), &interleaved_schedule(),
      &zb_h1_schedule(), &dualpipe_schedule(), &dualpipev_schedule()};
  return rows;
}

const ScheduleRow& Schedule::row() const { return row_ ? *row_ : none_schedule(); }

Schedule Schedule::named(std::string_view name) {
  for (const ScheduleRow* row : schedule_rows())
    if (util::equal_ignoring_case(name, row->name())) return *row;
  throw std::invalid_argument("--pipeline_schedule '" + std::string(name) + "' is unknown: use " +
                              schedule_names());
}

namespace {

// "a, b or c" of the rows `keep` says.
template <typename Keep>
std::string choice(Keep keep, bool with_help = false) {
  std::vector<std::string> names;
  for (const ScheduleRow* row : schedule_rows())
    if (keep(*row))
      names.push_back(std::string(row->name()) +
                      (with_help && *row->help() ? std::string(" (") + row->help() + ")" : ""));
  std::string out;
  for (size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return out;
}

}  // namespace

std::string schedule_names(bool ordering) {
  return choice([&](const ScheduleRow& r) { return !ordering || r.orders_passes(); });
}

std::string virtual_stage_schedule_names() {
  return choice([](const ScheduleRow& r) { return r.takes_virtual_stages(); });
}

std::string schedule_help() {
  return choice([](const ScheduleRow&) { return true; }, true);
}

std::string ScheduleRow::chunks_text(int64_t pp, int model_chunks) const {
  return "--pp " + std::to_string(pp) + " x --virtual_stages " + std::to_string(model_chunks);
}

}  // namespace stg::lower
