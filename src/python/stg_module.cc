// `import stg`: the command line's commands as Python functions. Keyword
// arguments are the command line's flags without their dashes
// (stg.generate(model="llama3-8b", dp=2) is `stg --model llama3-8b --dp 2`),
// parsed by the same flag parser; results are what the commands print with
// --json, as dicts; a bad argument raises ValueError with the command
// line's message. docs/python.md has the API.
#include <pybind11/pybind11.h>

#include <functional>
#include <string>
#include <vector>

#include "cli/calls.h"
#include "cli/inspect_command.h"
#include "cli/plans_command.h"
#include "cli/validate_command.h"
#include "stg/io/error.h"
#include "stg/options.h"

namespace py = pybind11;

namespace {

// One "--name=value" argument per keyword: True/False as true/false (a
// switch such as quiet takes them too), a list or tuple joined with commas
// (network_dims=[2, 4]), None left out.
std::vector<std::string> flag_args(const py::kwargs& kwargs) {
  std::vector<std::string> args;
  for (const auto& [key, value] : kwargs) {
    if (value.is_none()) continue;
    std::string text;
    if (py::isinstance<py::bool_>(value)) {
      text = value.cast<bool>() ? "true" : "false";
    } else if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
      for (const py::handle item : value)
        text += (text.empty() ? "" : ",") + py::str(item).cast<std::string>();
    } else {
      text = py::str(value).cast<std::string>();
    }
    args.push_back("--" + py::str(key).cast<std::string>() + "=" + text);
  }
  return args;
}

// Runs `call` without the GIL (it may take seconds and uses threads) and
// returns its JSON as Python objects.
py::object run(const std::function<nlohmann::ordered_json(const std::vector<std::string>&)>& call,
               const std::vector<std::string>& args) {
  std::string text;
  {
    py::gil_scoped_release release;
    text = call(args).dump();
  }
  return py::module_::import("json").attr("loads")(text);
}

std::vector<std::string> with_dir(const std::string& dir, const py::kwargs& kwargs) {
  std::vector<std::string> args = {dir};
  for (std::string& a : flag_args(kwargs)) args.push_back(std::move(a));
  return args;
}

}  // namespace

PYBIND11_MODULE(stg, m) {
  m.doc() =
      "stg: synthetic distributed-training workloads as Chakra execution traces. Keyword "
      "arguments are the command line's flags without dashes; results are dicts; bad input "
      "raises ValueError with the command line's message.";
  m.attr("__version__") = STG_VERSION;
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const stg::UsageError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const stg::io::Interrupted& e) {
      PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
    } catch (const stg::io::OutputError& e) {
      PyErr_SetString(PyExc_OSError, e.what());
    }
  });
  m.def(
      "generate", [](const py::kwargs& kw) { return run(cli::generate_call, flag_args(kw)); },
      "generate(**flags) -> dict: writes the traces as `stg --flag value ...` does "
      "(output_dir=..., model=..., dp=..., ...) and returns the run's summary: ranks, files, "
      "bytes, nodes, memory per stage, FLOPs and bytes per axis per rank (step), notes.");
  m.def(
      "plan", [](const py::kwargs& kw) { return run(cli::plan_call, flag_args(kw)); },
      "plan(**flags) -> dict: the same flags as generate, nothing written: FLOPs and bytes "
      "per axis per rank (step), memory per rank of every stage, nodes per rank.");
  m.def(
      "infer", [](const py::kwargs& kw) { return run(cli::infer_call, flag_args(kw)); },
      "infer(**flags) -> dict: writes one serving iteration as `stg infer --flag value ...` "
      "does (model=..., tp=..., requests=..., prompt_len=..., decode_steps=..., "
      "output_dir=...) and returns the run's summary with \"serving\": per stage, each "
      "phase's FLOPs, bytes read (weights, KV cache), communication and roofline times, and "
      "the memory per rank.");
  m.def(
      "plans", [](const py::kwargs& kw) { return run(cli::plans_call, flag_args(kw)); },
      "plans(model=..., gpus=N, **flags) -> list of dicts: every valid parallel plan for N "
      "GPUs with its memory, FLOPs and bytes per axis per rank and bubble fraction, as "
      "`stg plans --csv` lists them (sort=, fits_gb= as on the command line).");
  m.def(
      "inspect",
      [](const std::string& dir, const py::kwargs& kw) {
        return run(cli::inspect_json, with_dir(dir, kw));
      },
      py::arg("dir"), "inspect(dir, **flags) -> dict: what `stg inspect DIR --json` prints.");
  m.def(
      "validate",
      [](const std::string& dir, const py::kwargs& kw) {
        return run(cli::validate_json, with_dir(dir, kw));
      },
      py::arg("dir"),
      "validate(dir, **flags) -> dict: what `stg validate DIR --json` prints (replay=True "
      "replays); violations are in the report, unreadable input raises ValueError.");
}
