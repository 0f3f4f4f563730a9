#!/usr/bin/env python3
"""Snakemake's cluster-status command for SLURM: prints running, success or failed for a job id
(what `sbatch --parsable` printed: ID or ID;CLUSTER).

It asks the controller first (`scontrol`, which needs no accounting store and knows a job until
MinJobAge after its end), then the accounting store (`sacct`) for a job the controller forgot.
A controller that does not answer is taken as running: Snakemake asks again.
"""

import subprocess
import sys

RUNNING = {"PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "REQUEUED",
           "REQUEUE_FED", "REQUEUE_HOLD", "RESIZING", "SIGNALING", "STAGE_OUT", "STOPPED"}


def verdict(state):
    state = state.split()[0].rstrip("+") if state.strip() else ""
    if state == "COMPLETED":
        return "success"
    return "running" if state in RUNNING else "failed"


def main():
    if len(sys.argv) != 2:
        sys.stderr.write("usage: slurm_status.py JOBID\n")
        return 2
    job, _, cluster = sys.argv[1].partition(";")
    where = ["--clusters", cluster] if cluster else []
    shown = subprocess.run(["scontrol", *where, "show", "job", "--oneliner", job],
                           capture_output=True, text=True)
    if shown.returncode == 0:
        for field in shown.stdout.split():
            if field.startswith("JobState="):
                print(verdict(field[len("JobState="):]))
                return 0
    elif "Invalid job id" not in shown.stderr:
        print("running")
        return 0
    accounted = subprocess.run(["sacct", *where, "--noheader", "--allocations", "--parsable2",
                                "--format=State", "--jobs", job], capture_output=True, text=True)
    states = accounted.stdout.split()
    print(verdict(states[0]) if accounted.returncode == 0 and states else "failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
