// A pipeline schedule as one row (docs/architecture.md "How to add a
// pipeline schedule"): its --pipeline_schedule name, the order of a stage's
// steps, whether it separates weight gradients, its chunks and model
// replicas, what it requires of pp and the micro-batches, the activations
// it keeps in flight (the memory report) and where its chunks sit in the
// pipeline (`stg inspect --schedule`). The command line, lowering, the
// memory report and the chart ask the row (through lower::Schedule and the
// functions of schedule.h); a new schedule is one file in
// lower/schedules/ that defines its row, and one line in schedule_rows.cc.
#pragma once

#include <string>
#include <vector>

#include "stg/lower/schedule.h"

namespace stg::lower {

class ScheduleRow {
 public:
  virtual ~ScheduleRow() = default;

  // Its --pipeline_schedule text, and what --help says of it beside the
  // name ("": nothing).
  virtual const char* name() const = 0;
  virtual const char* help() const { return ""; }

  // Whether it orders the passes at all ("none" leaves the order to the
  // simulator: no slots, no ctrl_deps).
  virtual bool orders_passes() const { return true; }

  // Slots of `stage` in execution order, for `micro_batches` > 1 that meet
  // requirement() and `chunks` = chunks(virtual stages). schedule_slots
  // orders one micro-batch, and too few, itself.
  virtual std::vector<Slot> slots(int stage, int pp, int micro_batches, int chunks) const = 0;

  // Whether each backward is two steps, B and W, ordered on their own.
  virtual bool separates_weight_gradients() const { return false; }

  // Model chunks each stage holds, and those assign-stages cuts the model
  // into (fewer when a chunk is a mirrored copy of the model).
  virtual int chunks(int virtual_stages) const {
    (void)virtual_stages;
    return 1;
  }
  virtual int model_chunks(int virtual_stages) const { return chunks(virtual_stages); }
  // Whether --virtual_stages sets chunks(), and whether the micro-batches
  // go in groups of pp (so their number is a multiple of pp).
  virtual bool takes_virtual_stages() const { return false; }
  virtual bool needs_whole_groups() const { return false; }
  // How the refusal of too many chunks for the blocks names them:
  // "--pp 4 x --virtual_stages 2" unless the schedule's own.
  virtual std::string chunks_text(int64_t pp, int model_chunks) const;

  // Micro-batch replicas of the training graph, the micro-batches they
  // stand for, and a stage's steps renumbered from micro-batches to
  // replicas.
  virtual int replica_count(int micro_batches) const { return micro_batches; }
  virtual int micro_batches_of_replicas(int replicas) const { return replicas; }
  virtual void to_replicas(std::vector<Step>& steps, int micro_batches) const {
    (void)steps;
    (void)micro_batches;
  }

  // Whether the model's stages sit in a V (chunk 1 of stage s is pipeline
  // stage 2pp-1-s), and whether a second, mirrored copy of the model runs
  // the other way (passes/mirror_model.h).
  virtual bool v_shaped() const { return false; }
  virtual bool mirrors_model() const { return false; }

  // The one-line error for a number of micro-batches it cannot order on
  // `pp` stages, or "".
  virtual std::string requirement(int pp, int micro_batches) const {
    (void)pp;
    (void)micro_batches;
    return "";
  }

  // Largest number of micro-batches whose activations a stage holds at
  // once, in units of one replica's activations on the stage.
  virtual double activations_in_flight(int stage, int pp, int micro_batches, int chunks) const = 0;

  // The pipeline stage (0..) a stage's chunk is for a micro-batch, and the
  // number of pipeline stages a micro-batch passes (`chunks` per stage).
  virtual int pipeline_position(int pp, int stage, int chunk) const { return chunk * pp + stage; }
  virtual int pipeline_length(int pp, int chunks) const { return pp * chunks; }
};

// Every row, in --help's order (schedule_rows.cc).
const std::vector<const ScheduleRow*>& schedule_rows();

// The rows' names as a choice: "none, gpipe, ... or dualpipev"; only those
// that order passes when `ordering`, or that take --virtual_stages.
std::string schedule_names(bool ordering = false);
std::string virtual_stage_schedule_names();
// --help's text: each name with its note, "none (order left to the
// simulator), gpipe, ...".
std::string schedule_help();

}  // namespace stg::lower
