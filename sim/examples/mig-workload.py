#!/usr/bin/env python3
"""Generates a GPU workload whose MIG profile mix changes over time, for tessera-sim's
MIG comparison (--compare mig-whole,mig-static,mig-dynamic). Standard library only.

How the workload is made (deterministic for a seed):
  - Three phases of --phase-hours each, then they repeat (--cycles times):
      inference  1g.10gb 60%, 2g.20gb 25%, 3g.40gb 10%, 7g.80gb 5%
      finetune   1g.10gb 10%, 3g.40gb 40%, 4g.40gb 20%, 7g.80gb 30%
      mixed      1g.10gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb 20% each
    (profile names of an 80 GB A100/H100; every job asks for one instance).
  - Arrivals are Poisson. The rate of each phase is set so that the GPU memory the phase's jobs
    ask for, times their mean run time, is --load of the cluster's GPU memory (--gpus x 80 GB):
    the same offered memory load in every phase, whatever its mix.
  - Run times are log-normal (median --median-min minutes, sigma 1), at least 60 s and at most
    8 h; the requested time limit is the run time times a uniform factor in [1, 3], rounded up
    to a minute (users overestimate).
  - 4 CPUs and 16 GiB of host memory per job; users u0..u19, accounts a0..a3.

Writes the trace (tessera-sim's CSV format) to stdout.
"""
import argparse
import math
import random

PHASES = [
    ("inference", {"1g.10gb": 60, "2g.20gb": 25, "3g.40gb": 10, "7g.80gb": 5}),
    ("finetune", {"1g.10gb": 10, "3g.40gb": 40, "4g.40gb": 20, "7g.80gb": 30}),
    ("mixed", {"1g.10gb": 20, "2g.20gb": 20, "3g.40gb": 20, "4g.40gb": 20, "7g.80gb": 20}),
]


def gib(profile):
    return int(profile.split(".")[1].rstrip("gb"))


def runtime(rng, median_s):
    return int(min(8 * 3600, max(60, rng.lognormvariate(math.log(median_s), 1.0))))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--gpus", type=int, default=128, help="GPUs in the cluster (80 GB each)")
    ap.add_argument("--load", type=float, default=0.8, help="offered GPU-memory load (0..)")
    ap.add_argument("--phase-hours", type=float, default=4)
    ap.add_argument("--cycles", type=int, default=1)
    ap.add_argument("--median-min", type=float, default=30)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    median_s = a.median_min * 60
    # mean of the clipped log-normal, estimated once by sampling (same for every phase)
    probe = random.Random(a.seed + 1)
    mean_run = sum(runtime(probe, median_s) for _ in range(200000)) / 200000
    capacity_gib = a.gpus * 80
    print("submit,runtime,req_time,gpus,cpus,mem_mib,nodes,user,account,partition,qos,gpu_model")
    t = 0.0
    phase_s = a.phase_hours * 3600
    for cycle in range(a.cycles):
        for k, (_, mix) in enumerate(PHASES):
            start = (cycle * len(PHASES) + k) * phase_s
            end = start + phase_s
            names, weights = list(mix), list(mix.values())
            mean_gib = sum(gib(p) * w for p, w in mix.items()) / sum(weights)
            rate = a.load * capacity_gib / (mean_gib * mean_run)  # jobs per second
            t = max(t, start)
            while True:
                t += rng.expovariate(rate)
                if t >= end:
                    break
                run = runtime(rng, median_s)
                req = int(math.ceil(run * rng.uniform(1, 3) / 60) * 60)
                profile = rng.choices(names, weights)[0]
                u = rng.randrange(20)
                print(f"{int(t)},{run},{req},1,4,16384,1,u{u},a{u % 4},,,{profile}")


if __name__ == "__main__":
    main()
