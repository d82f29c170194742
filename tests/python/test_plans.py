"""stg.plans: the rows `stg plans --csv` prints, as dicts; its flags are the
command line's."""

import csv
import io
import os
import subprocess
import unittest

import stg

STG = os.path.join(os.path.dirname(stg.__file__), "stg")
MODEL = dict(model_type="llama", num_stacks=4, dmodel=256, dff=512, head=8, kvhead=4,
             dvocal=1024, seq=256, batch=16)


class PlansTest(unittest.TestCase):
    def test_rows_are_the_csv_of_the_command(self):
        rows = stg.plans(gpus=8, sort="comm_gib", **MODEL)
        args = ["--%s=%s" % (k, v) for k, v in MODEL.items()]
        cli = subprocess.run([STG, "plans", "--gpus", "8", "--sort", "comm_gib", "--csv", *args],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertEqual(cli.returncode, 0, cli.stderr)
        table = list(csv.DictReader(io.StringIO(cli.stdout)))
        self.assertEqual(len(rows), len(table))
        for row, line in zip(rows, table):
            for key in ("dp", "tp", "pp", "cp", "ep", "virtual_stages", "micro_batch",
                        "zero_stage", "schedule"):
                self.assertEqual(str(row[key]), line[key])
            self.assertAlmostEqual(row["memory_gib"], float(line["memory_gib"]), places=2)
        comm = [r["comm_gib"] for r in rows]
        self.assertEqual(comm, sorted(comm))

    def test_every_plan_uses_the_gpus(self):
        rows = stg.plans(gpus=8, **MODEL)
        self.assertTrue(rows)
        for r in rows:
            self.assertEqual(r["dp"] * r["tp"] * r["pp"] * r["cp"] * r["ep"], 8)
            self.assertEqual(r["micro_batch"] % r["dp"], 0)
            self.assertEqual(r["micro_batches"] * r["micro_batch"], 16)
            self.assertLessEqual(r["pp"] * r["virtual_stages"], 4)
            # The bubble of the schedule: (p - 1) / (v m + p - 1).
            self.assertAlmostEqual(r["bubble"], (r["pp"] - 1) /
                                   (r["virtual_stages"] * r["micro_batches"] + r["pp"] - 1))

    def test_sort_by_time(self):
        rows = stg.plans(gpus=8, sort="time", **MODEL)
        times = [r["time_s"] for r in rows]
        self.assertTrue(times)
        self.assertEqual(times, sorted(times))
        # Its parts: the stage's busy time, the bubble and dp's tail.
        for r in rows:
            self.assertAlmostEqual(r["time_s"], r["compute_s"] + r["exposed_comm_s"] +
                                   r["dp_tail_s"] + r["bubble_s"], places=2)
            self.assertGreater(r["compute_s"], 0)

    def test_fits_and_fixed_degrees(self):
        rows = stg.plans(gpus=8, tp=2, fits_gb=0.05, **MODEL)
        self.assertTrue(rows)
        self.assertTrue(all(r["tp"] == 2 and r["memory_gib"] <= 0.05 for r in rows))
        self.assertLess(len(rows), len(stg.plans(gpus=8, **MODEL)))

    def test_plan_of_a_row_has_its_figures(self):
        row = stg.plans(gpus=8, pp=2, dp=2, tp=2, micro_batch=4, zero_stage=1, **MODEL)[0]
        plan = stg.plan(dp=2, tp=2, pp=2, micro_batch=4, zero_stage=1, units="physical",
                        pipeline_schedule=row["schedule"],
                        virtual_stages=row["virtual_stages"], **MODEL)
        self.assertEqual(round(row["flops"]), plan["step"]["flops"]["max"])
        self.assertAlmostEqual(row["memory_bytes"], max(m["total"] for m in plan["memory"]))

    def test_bad_input(self):
        with self.assertRaisesRegex(ValueError, r"--gpus is required"):
            stg.plans(**MODEL)
        with self.assertRaisesRegex(ValueError, r"--sort 'speed' is not a column"):
            stg.plans(gpus=8, sort="speed", **MODEL)


if __name__ == "__main__":
    unittest.main()
