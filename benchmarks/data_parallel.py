#!/usr/bin/env python3
"""Data-parallel training speed and memory: one process against two, gradient
buckets waited for at once against buckets in flight (overlap), AdamW's state
sharded over the workers (ZeRO stage 1), on one machine and across two network
namespaces joined by a veth pair whose sends `tc tbf` limits.

    sudo benchmarks/data_parallel.py BUILD_DIR [--model gpt-mini] [--steps 40]
        [--rounds 2] [--rate 1gbit]

Each configuration runs `sinter-train` on the same global batch (one process
with 2B rows a step, or 2 workers with B each) for --steps steps; the median
step time of each run, and its planned step and optimizer state, come from
its summary.json (rank 0's). The
configurations run interleaved, --rounds times each, so that a machine whose
speed drifts slows them alike; the table gives the median over the rounds and
the ratios. The two-namespace configurations need root (`ip netns`, `tc`);
without it they are left out, saying so.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def job(model, batch, steps, output_dir, processes, instances, zero=0):
    hyperparameters = {"batch_size": batch, "steps": steps, "eval_batches": 1,
                       "eval_every": steps, "checkpoint_every": steps, "zero_stage": zero}
    document = {"entry_point": model, "output_dir": output_dir,
                "hyperparameters": hyperparameters}
    if model.startswith("gpt"):
        document["dataset"] = "/usr/share/common-licenses"
    if processes * instances > 1:
        document["distribution"] = {"pytorchxla": {"enabled": True},
                                    "processes_per_host": processes}
        document["instance_count"] = instances
    return document


def run_checked(command, env):
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stdout}{done.stderr}")


def summary_of(output_dir):
    with open(os.path.join(output_dir, "summary.json")) as f:
        return json.load(f)


class Namespaces:
    """Two network namespaces, 10.78.0.1 and 10.78.0.2, over a veth pair
    whose sends are limited to `rate` (tc tbf)."""

    def __init__(self, rate):
        tag = str(os.getpid())
        self.names = [f"sinter-bench-a-{tag}", f"sinter-bench-b-{tag}"]
        self.links = [f"sba{tag}"[:15], f"sbb{tag}"[:15]]
        self.rate = rate

    def __enter__(self):
        commands = [["ip", "netns", "add", self.names[0]], ["ip", "netns", "add", self.names[1]],
                    ["ip", "link", "add", self.links[0], "netns", self.names[0], "type", "veth",
                     "peer", "name", self.links[1], "netns", self.names[1]]]
        for i, name in enumerate(self.names):
            commands += [
                ["ip", "-n", name, "addr", "add", f"10.78.0.{i + 1}/24", "dev", self.links[i]],
                ["ip", "-n", name, "link", "set", self.links[i], "up"],
                ["ip", "-n", name, "link", "set", "lo", "up"],
                ["ip", "netns", "exec", name, "tc", "qdisc", "add", "dev", self.links[i], "root",
                 "tbf", "rate", self.rate, "burst", "128kb", "latency", "50ms"],
            ]
        for command in commands:
            done = subprocess.run(command, capture_output=True, text=True)
            if done.returncode != 0:
                self.__exit__()
                raise OSError(f"{' '.join(command)}: {done.stderr.strip()}")
        return self

    def __exit__(self, *args):
        for name in self.names:
            subprocess.run(["ip", "netns", "del", name], capture_output=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("build_dir")
    parser.add_argument("--model", default="gpt-mini")
    parser.add_argument("--batch", type=int, default=8, help="rows a worker (B)")
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--rate", default="1gbit")
    args = parser.parse_args()
    train = os.path.join(args.build_dir, "tools", "sinter-train", "sinter-train")
    launcher = os.path.join(args.build_dir, "tools", "sinter-run", "sinter-run")
    scratch = tempfile.mkdtemp(prefix="sinter-dp-bench-")
    env = dict(os.environ, SINTER_CACHE_DIR=os.path.join(scratch, "kernel-cache"))

    def one_process():
        d = os.path.join(scratch, "one")
        path = os.path.join(scratch, "one.json")
        json.dump(job(args.model, 2 * args.batch, args.steps, d, 1, 1), open(path, "w"))
        run_checked([train, "--config", path], env)
        return summary_of(d)

    def two_processes(in_flight, zero=0):
        d = os.path.join(scratch, f"two-{in_flight}-{zero}")
        path = os.path.join(scratch, f"two-{in_flight}-{zero}.json")
        json.dump(job(args.model, args.batch, args.steps, d, 2, 1, zero), open(path, "w"))
        run_checked([train, "--config", path], dict(env, SINTER_BUCKETS_IN_FLIGHT=str(in_flight)))
        return summary_of(d)

    def two_machines(namespaces, in_flight):
        d = os.path.join(scratch, f"machines-{in_flight}")
        path = os.path.join(scratch, f"machines-{in_flight}.json")
        json.dump(job(args.model, args.batch, args.steps, d, 1, 2), open(path, "w"))
        agents = []
        for node, name in enumerate(namespaces.names):
            agents.append(subprocess.Popen(
                ["ip", "netns", "exec", name, launcher, "--nnodes", "2", "--node-rank", str(node),
                 "--master-addr", "10.78.0.1", "--master-port", "29511", "--nproc-per-node", "1",
                 train, "--config", path],
                env=dict(env, SINTER_BUCKETS_IN_FLIGHT=str(in_flight)),
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
        for agent in agents:
            output, _ = agent.communicate(timeout=1800)
            if agent.returncode != 0:
                raise RuntimeError(f"a node failed:\n{output}")
        return summary_of(d)

    configurations = [("1 process, batch 2B", one_process),
                      ("2 processes, buckets waited for at once", lambda: two_processes(0)),
                      ("2 processes, 2 buckets in flight", lambda: two_processes(2)),
                      ("2 processes, optimizer state sharded (ZeRO-1)",
                       lambda: two_processes(2, zero=1))]
    namespaces = None
    if os.geteuid() == 0:
        try:
            namespaces = Namespaces(args.rate).__enter__()
            configurations += [
                (f"2 machines ({args.rate}), waited for at once",
                 lambda: two_machines(namespaces, 0)),
                (f"2 machines ({args.rate}), 2 in flight",
                 lambda: two_machines(namespaces, 2))]
        except OSError as error:
            print(f"(two machines left out: {error})")
    else:
        print("(two machines left out: network namespaces need root)")
    try:
        runs = {name: [] for name, _ in configurations}
        for round_ in range(args.rounds + 1):  # the first round warms the kernel cache
            for name, run in configurations:
                summary = run()
                if round_ > 0:
                    runs[name].append(summary)
    finally:
        if namespaces is not None:
            namespaces.__exit__()

    def median_ms(name):
        return statistics.median(r["step_ms_median"] for r in runs[name])

    base = median_ms(configurations[0][0])
    print(f"\n{args.model}, global batch {2 * args.batch}, {args.steps} steps, median of "
          f"{args.rounds} interleaved rounds:\n")
    print("| configuration | ms a step | vs 1 process | optimizer state (MiB) | planned step (MiB) |")
    print("| --- | --- | --- | --- | --- |")
    for name, _ in configurations:
        ms, last = median_ms(name), runs[name][-1]
        print(f"| {name} | {ms:.1f} | {base / ms:.2f}x | "
              f"{last.get('optimizer_state_bytes', 0) / 2**20:.2f} | "
              f"{last['planned_step_bytes'] / 2**20:.2f} |")


if __name__ == "__main__":
    sys.exit(main())
