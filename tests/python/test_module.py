"""The Python module against the command line it wraps: the same flags give
the same files and figures, the same bad input the same message.

Run from a build directory's module: PYTHONPATH=build python3 -m unittest
(ctest runs it so). The `stg` binary is the one beside the module."""

import filecmp
import json
import os
import re
import subprocess
import tempfile
import unittest

import stg

STG = os.path.join(os.path.dirname(stg.__file__), "stg")
# A small Llama 3 8B: two of its blocks, 8 ranks.
SMALL = dict(model="llama3-8b", num_stacks=2, dp=2, tp=2, pp=2, seq=1024, batch=8,
             micro_batch=4)


def cli_args(flags):
    return ["--%s=%s" % (k, str(v).lower() if isinstance(v, bool) else v)
            for k, v in flags.items()]


def run_cli(*args):
    return subprocess.run([STG, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True)


class GenerateTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def dir(self, name):
        return os.path.join(self.tmp.name, name)

    def test_same_files_and_summary_as_the_command_line(self):
        summary = stg.generate(output_dir=self.dir("py"), **SMALL)
        cli = run_cli(*cli_args(SMALL), "--output_dir", self.dir("cli"))
        self.assertEqual(cli.returncode, 0, cli.stderr)
        m = re.search(r"stg: (\d+) ranks, (\d+) files, (\d+) bytes, (\d+) nodes", cli.stdout)
        self.assertIsNotNone(m, cli.stdout)
        self.assertEqual([summary[k] for k in ("ranks", "files", "bytes", "nodes")],
                         [int(g) for g in m.groups()])
        names = sorted(os.listdir(self.dir("cli")))
        self.assertEqual(sorted(os.listdir(self.dir("py"))), names)
        self.assertEqual(len(names), 9)  # 8 ranks and the comm-group file
        _, mismatch, errors = filecmp.cmpfiles(self.dir("py"), self.dir("cli"), names,
                                               shallow=False)
        self.assertEqual((mismatch, errors), ([], []))
        self.assertEqual(summary["output_dir"], self.dir("py"))
        # The memory per stage is always there; its text only with print_gpu_vram=1.
        self.assertEqual(len(summary["memory"]), 2)
        self.assertEqual(summary["memory_report"], "")

    def test_step_figures_are_those_of_inspect(self):
        summary = stg.generate(output_dir=self.dir("run"), units="physical", **SMALL)
        inspected = stg.inspect(self.dir("run"))
        self.assertEqual(summary["step"]["flops"]["total"], inspected["step"]["flops"]["total"])
        self.assertEqual(summary["step"]["axes"], inspected["step"]["axes"])

    def test_validate_flag_adds_the_report(self):
        summary = stg.generate(output_dir=self.dir("run"), validate=True, **SMALL)
        self.assertEqual(summary["validation"]["exit_status"], 0)
        self.assertEqual(summary["validation"]["ranks"], 8)

    def test_print_makespan_adds_the_replay_of_the_command_line(self):
        flags = dict(SMALL, gpu="h100-sxm", compute_time="model", pipeline_schedule="1f1b",
                     print_makespan=True)
        summary = stg.generate(output_dir=self.dir("py"), **flags)
        cli = run_cli(*cli_args(flags), "--output_dir", self.dir("cli"), "--json")
        self.assertEqual(cli.returncode, 0, cli.stderr)
        expected = json.loads(cli.stdout)
        self.assertEqual(summary["makespan_ns"], expected["makespan_ns"])
        self.assertEqual(summary["time_breakdown"], expected["time_breakdown"])
        for stage in summary["time_breakdown"]:
            parts = (stage["compute_ms"] + sum(stage["exposed_comm_ms"].values()) +
                     stage["bubble_ms"])
            self.assertAlmostEqual(parts, summary["makespan_ns"] / 1e6, places=6)


class PlanTest(unittest.TestCase):
    def test_plan_has_the_run_figures_without_files(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "out")
            summary = stg.generate(output_dir=out, print_gpu_vram=1, **SMALL)
            plan = stg.plan(output_dir=os.path.join(d, "never"), **SMALL)
            self.assertFalse(os.path.exists(os.path.join(d, "never")))
        self.assertEqual(plan["step"], summary["step"])
        self.assertEqual(plan["memory"], summary["memory"])
        self.assertEqual(plan["nodes"], summary["nodes"])
        self.assertEqual(plan["ranks"], 8)
        self.assertEqual(plan["ranks_per_stage"], 4)
        self.assertEqual(plan["micro_batches"], 2)
        self.assertEqual(len(plan["nodes_per_stage"]), 2)
        self.assertEqual(sum(plan["nodes_per_stage"]) * 4, plan["nodes"])

    def test_pipeline_bytes_follow_the_textbook(self):
        # Under --units physical each stage boundary carries, per micro-batch,
        # the activations of micro_batch/dp sequences of seq x dmodel bf16
        # values, split over tp (sequence parallel), forward and back.
        flags = dict(model_type="llama", num_stacks=4, dp=2, tp=2, pp=2, seq=512, dmodel=256,
                     dff=512, head=8, kvhead=4, dvocal=1000, batch=16, micro_batch=4,
                     units="physical")
        plan = stg.plan(**flags)
        per_micro_batch = (4 // 2) * 512 * 256 * 2 // 2
        pp = plan["step"]["axes"]["pp"]
        micro_batches = 16 // 4
        self.assertEqual(pp["bytes_sent"]["max"], micro_batches * per_micro_batch)
        self.assertEqual(pp["bytes_received"]["max"], micro_batches * per_micro_batch)


class ErrorTest(unittest.TestCase):
    def assert_same_message(self, call, cli_line, **flags):
        with self.assertRaises(ValueError) as raised:
            call(**flags)
        cli = run_cli(*cli_line)
        self.assertEqual(cli.returncode, 2)
        self.assertEqual(cli.stderr.strip(), "stg: error: " + str(raised.exception))

    def test_bad_degree(self):
        self.assert_same_message(stg.plan, ["--dp", "0"], dp=0)

    def test_unknown_flag_names_the_closest(self):
        self.assert_same_message(stg.plan, ["--dpp", "2"], dpp=2)
        with self.assertRaisesRegex(ValueError, r"unknown flag --dpp: did you mean --dp\?"):
            stg.generate(dpp=2)

    def test_bad_choice(self):
        self.assert_same_message(stg.plan, ["--pipeline_schedule", "fast"],
                                 pipeline_schedule="fast")

    def test_unreadable_directory(self):
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaises(ValueError):
                stg.inspect(os.path.join(d, "missing"))
            with self.assertRaises(ValueError):
                stg.validate(os.path.join(d, "missing"))


class InspectValidateTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.out = os.path.join(cls.tmp.name, "run")
        stg.generate(output_dir=cls.out, **SMALL)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_inspect_is_the_json_of_the_command(self):
        cli = run_cli("inspect", self.out, "--json")
        self.assertEqual(cli.returncode, 0, cli.stderr)
        self.assertEqual(stg.inspect(self.out), json.loads(cli.stdout))
        self.assertEqual(stg.inspect(self.out, per_rank=True)["per_rank"][7]["rank"], 7)

    def test_validate_is_the_json_of_the_command(self):
        cli = run_cli("validate", self.out, "--json", "--replay")
        self.assertEqual(cli.returncode, 0, cli.stderr)
        report = stg.validate(self.out, replay=True)
        self.assertEqual(report, json.loads(cli.stdout))
        self.assertEqual(report["exit_status"], 0)
        self.assertTrue(report["replay"]["completed"])
        self.assertEqual(report["ranks"], 8)

    def test_violations_are_in_the_report(self):
        with tempfile.TemporaryDirectory() as d:
            for name in os.listdir(self.out):
                if name != "workload.3.et":
                    os.symlink(os.path.join(self.out, name), os.path.join(d, name))
            report = stg.validate(d)
        self.assertEqual(report["exit_status"], 1)
        self.assertGreaterEqual(report["violations"]["R0"]["count"], 1)

    def test_bad_flag_of_a_subcommand(self):
        with self.assertRaisesRegex(ValueError, r"--show"):
            stg.validate(self.out, show=-1)


# Llama 3 8B serving: two of its blocks on tp 2.
SERVE = dict(model="llama3-8b", num_stacks=2, tp=2, requests=8, prompt_len=256, decode_steps=4)


class InferTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def dir(self, name):
        return os.path.join(self.tmp.name, name)

    def test_same_files_and_figures_as_the_command_line(self):
        summary = stg.infer(output_dir=self.dir("py"), **SERVE)
        cli = run_cli("infer", *cli_args(SERVE), "--output_dir", self.dir("cli"))
        self.assertEqual(cli.returncode, 0, cli.stderr)
        names = sorted(os.listdir(self.dir("cli")))
        self.assertEqual(sorted(os.listdir(self.dir("py"))), names)
        _, mismatch, errors = filecmp.cmpfiles(self.dir("py"), self.dir("cli"), names,
                                               shallow=False)
        self.assertEqual((mismatch, errors), ([], []))
        # Each printed phase row: its name, then FLOPs, bytes read, weights read,
        # KV read and comm bytes.
        rows = re.findall(r"^  (prefill|decode[^\d]*\d+(?: steps)?) +([\d,]+) +([\d,]+) +"
                          r"([\d,]+) +([\d,]+) +([\d,]+)", cli.stdout, re.M)
        phases = summary["serving"]["stages"][0]["phases"]
        self.assertEqual(len(rows), len(phases), cli.stdout)
        for row, phase in zip(rows, phases):
            self.assertEqual(row[0], phase["phase"])
            self.assertEqual([int(x.replace(",", "")) for x in row[1:]],
                             [phase[k] for k in ("flops", "bytes_read", "weight_bytes",
                                                 "kv_bytes", "comm_bytes")])

    def test_kv_cache_is_the_textbook_size(self):
        serving = stg.infer(output_dir=self.dir("run"), **SERVE)["serving"]
        # K and V of 8 KV heads of 128 over tp 2, prompt and decode tokens, bf16.
        kv = 2 * 2 * 8 * (256 + 4) * (8 // 2) * 128 * 2
        self.assertEqual(serving["stages"][0]["memory"]["kv_cache"], kv)
        self.assertEqual(serving["decode_steps"], 4)
        self.assertTrue(serving["fits"])
        decode = serving["stages"][0]["phases"][1]
        self.assertEqual(decode["phase"], "decode 0")
        self.assertGreater(decode["memory_ms"], decode["compute_ms"])  # memory-bound

    def test_validate_flag_adds_the_report(self):
        summary = stg.infer(output_dir=self.dir("run"), validate=True, **SERVE)
        self.assertEqual(summary["validation"]["exit_status"], 0)
        self.assertEqual(summary["validation"]["ranks"], 2)

    def test_bad_input_has_the_message_of_the_command_line(self):
        with self.assertRaises(ValueError) as raised:
            stg.infer(batch=8, **SERVE)
        cli = run_cli("infer", "--batch", "8", *cli_args(SERVE))
        self.assertEqual(cli.returncode, 2)
        self.assertEqual(cli.stderr.strip(), "stg: error: " + str(raised.exception))


if __name__ == "__main__":
    unittest.main()
