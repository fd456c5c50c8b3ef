#!/usr/bin/env python3
"""sinter-run and the collectives across processes and machines.

    launcher.py SINTER_RUN COLLECTIVE_WORKER CASE [DATA_PARALLEL_TRAIN [AOT_DATA_PARALLEL]]

Each case starts sinter-run (one per node) with tests/e2e/collective_worker,
checks its exit status, its output and how long it took, and leaves no
process (and no network namespace) behind: every child is killed at a
deadline, every namespace deleted. The two-machine cases run each node in a
network namespace of its own, joined by a veth pair (10.77.0.1 and 10.77.0.2,
no other address); where namespaces cannot be made they exit 77 (skipped) and
say why.
"""
import os
import re
import shutil
import struct
import signal
import subprocess
import sys
import tempfile
import time

SINTER_RUN, WORKER, CASE = sys.argv[1], sys.argv[2], sys.argv[3]
TRAINER = sys.argv[4] if len(sys.argv) > 4 else None
AOT_TRAINER = sys.argv[5] if len(sys.argv) > 5 else None
DEADLINE = 60  # seconds, for any one sinter-run


def fail(message):
    print("FAIL:", message)
    sys.exit(1)


def start(args, env=None, netns=None):
    command = [SINTER_RUN] + args
    if netns:
        command = ["ip", "netns", "exec", netns] + command
    full_env = dict(os.environ)
    full_env.update(env or {})
    print("$", " ".join(command), flush=True)
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, env=full_env, start_new_session=True)


def finish(process, deadline=DEADLINE):
    """(exit status, output, seconds); the process group is killed at the deadline."""
    began = time.monotonic()
    try:
        output, _ = process.communicate(timeout=deadline)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        print(output)
        fail(f"sinter-run was still running after {deadline} s")
    took = time.monotonic() - began
    print(output, end="")
    print(f"-> exit {process.returncode} after {took:.1f} s", flush=True)
    return process.returncode, output, took


def run(args, env=None, netns=None, deadline=DEADLINE):
    return finish(start(args, env, netns), deadline)


def expect(condition, message):
    if not condition:
        fail(message)


def totals(output):
    return re.findall(r"\[rank (\d+)\] total ([0-9.]+) after", output)


def standalone(nproc, *worker_args):
    return ["--standalone", "--nproc-per-node", str(nproc), WORKER] + list(worker_args)


# ---------------------------------------------------------------- one machine

def case_one_node():
    status, output, _ = run(standalone(3, "--steps", "4"))
    expect(status == 0, "three workers on one node should finish")
    # Steps 0..3 over three ranks: (1+2+3) + 3s each, 42 in all.
    expect(sorted(totals(output)) == [("0", "42.0"), ("1", "42.0"), ("2", "42.0")],
           "every rank's total is 42")
    expect("joined as rank 2 of 3 (sinter-run, restart 0, local rank 2 of 3" in output,
           "workers see RANK, WORLD_SIZE and LOCAL_RANK")
    expect(re.search(r"OMP_NUM_THREADS=\d+\)", output), "workers get OMP_NUM_THREADS")


def case_killed():
    status, output, took = run(standalone(2, "--steps", "200", "--sleep-ms", "20",
                                          "--kill-rank", "1", "--at-step", "3"))
    expect(status == 1, "a killed worker fails the job")
    expect(re.search(r"rank 1 \(local rank 1 on node 0, pid \d+\) was killed by signal 9 \(Killed\)",
                     output), "the agent names the rank and the signal")
    expect("failing at step 3" in output, "with the rank's last lines")
    expect(took < 10, f"within 10 s (took {took:.1f} s)")


def case_exit_code():
    status, output, took = run(standalone(2, "--steps", "200", "--sleep-ms", "20",
                                          "--kill-rank", "0", "--at-step", "2",
                                          "--exit-code", "7"))
    expect(status == 1, "a worker that exits 7 fails the job")
    expect("rank 0 (local rank 0 on node 0" in output and "exited with status 7" in output,
           "the agent names the rank and its status")
    expect(took < 10, f"within 10 s (took {took:.1f} s)")


def case_stopped():
    # Rank 1 stops itself (SIGSTOP) before a collective: rank 0's collective
    # times out after 5 s, rank 0 exits 1, the agent kills the stopped rank.
    status, output, took = run(standalone(2, "--steps", "200", "--kill-rank", "1",
                                          "--at-step", "2", "--stop"),
                               env={"SINTER_COLLECTIVE_TIMEOUT": "5"})
    expect(status == 1, "a stopped worker fails the job")
    expect("all_reduce at step 2" in output and "imed out" in output,
           "rank 0's collective times out, naming the step")
    expect("rank 0 (local rank 0 on node 0" in output, "the agent reports rank 0's failure")
    expect(4.5 < took < 20, f"at the 5 s timeout plus a margin (took {took:.1f} s)")


def case_restart():
    with tempfile.TemporaryDirectory() as plain, tempfile.TemporaryDirectory() as restarted:
        status, output, _ = run(standalone(2, "--steps", "6", "--checkpoint", plain))
        expect(status == 0, "the uninterrupted run finishes")
        uninterrupted = sorted(totals(output))
        status, output, took = run(["--max-restarts", "1"] +
                                   standalone(2, "--steps", "6", "--sleep-ms", "20",
                                              "--checkpoint", restarted,
                                              "--kill-rank", "1", "--at-step", "3"))
        expect(status == 0, "with --max-restarts 1 the job completes after the kill")
        expect("restarting every worker (restart 1 of 1)" in output, "the agent says it restarts")
        expect("joined as rank 1 of 2 (sinter-run, restart 1" in output,
               "workers see the restart count")
        expect("[rank 1] resumed at step 3" in output, "workers resume from their checkpoint")
        expect(sorted(totals(output)) == uninterrupted == [("0", "48.0"), ("1", "48.0")],
               f"the same result as an uninterrupted run ({uninterrupted})")
    status, output, _ = run(["--max-restarts", "1"] +
                            standalone(2, "--steps", "50", "--sleep-ms", "20", "--kill-rank", "1",
                                       "--at-step", "3", "--every-run"))
    expect(status == 1 and "no restarts left (--max-restarts 1)" in output,
           "a failure in the last restart ends the job")


def case_bad_flags():
    status, output, _ = run(["--standalone", "--nproc-per-node", "2"])
    expect(status == 2 and "no program to run" in output, "no program is refused")
    status, output, _ = run(["--nnodes", "2", "--node-rank", "2", WORKER])
    expect(status == 2 and "--node-rank 2 is not below --nnodes 2" in output,
           "a node rank outside the job is refused")
    status, output, _ = run(["--standalone", "--nproc-per-node", "1", "/nonexistent/program"])
    expect(status == 1 and "cannot run /nonexistent/program" in output and "exited with status 127"
           in output, "a program that cannot start is named")


def floats(path):
    with open(path, "rb") as file:
        data = file.read()
    return struct.unpack(f"<{len(data) // 4}f", data)


def case_exactness():
    """2 ranks x batch B against one process, after 20 AdamW steps."""
    with tempfile.TemporaryDirectory() as folder:
        def train(mode, *launch, env=None):
            path = os.path.join(folder, mode + "-" + "-".join(launch) + ".bin")
            common = ["--mode", mode, "--steps", "20", "--batch", "16", "--out", path]
            if launch:
                status, output, _ = run(list(launch) + [TRAINER] + common, env=env, deadline=300)
            else:
                print("$", TRAINER, " ".join(common), flush=True)
                done = subprocess.run([TRAINER] + common, capture_output=True, text=True,
                                      timeout=300)
                status, output = done.returncode, done.stdout + done.stderr
                print(output, end="")
            expect(status == 0, f"{mode} {' '.join(launch)} trains")
            return floats(path), re.findall(r"step 19 loss (\S+)", output)

        accumulated, accumulated_loss = train("accumulate")
        whole, _ = train("whole")
        ranks, ranks_loss = train("ranks", "--standalone", "--nproc-per-node", "2",
                                  env={"SINTER_DETERMINISTIC_COLLECTIVES": "1"})
        expect(len(ranks) == len(accumulated) == len(whole) > 2000, "every parameter written")
        differ = sum(a != b for a, b in zip(ranks, accumulated))
        expect(differ == 0, f"2 ranks in the deterministic mode equal one process accumulating "
                            f"the 2 micro-batches to the bit ({differ} of {len(ranks)} differ)")
        expect(set(ranks_loss) == set(accumulated_loss) and len(ranks_loss) == 2,
               f"every rank logs the loss one process logs: {ranks_loss} vs {accumulated_loss}")
        # One batch of 2B adds the same numbers in another order: measured
        # 4.5e-8 at most after 20 steps (parameters up to 0.27; AdamW moves
        # each by up to lr = 1e-2 a step). 2e-6 is 40 times that, and 5000
        # times below one step's change.
        worst = max(abs(a - b) for a, b in zip(ranks, whole))
        print(f"largest difference from one process with batch 2B: {worst:.3g}")
        expect(worst < 2e-6, f"within 2e-6 of one process with batch 2B ({worst:.3g})")
        expect(worst > 0 or ranks == whole, "the comparison sees the parameters")


def case_zero():
    """ZeRO stage 1 (AdamW's state sharded over 2 ranks) trains as the
    unsharded optimizer to the bit: with parameters that split evenly and
    with ones that do not (9 classes, a scalar), in the default mode (a sum
    of two values has one order) and in the deterministic one."""
    with tempfile.TemporaryDirectory() as folder:
        def train(*flags, env=None):
            path = os.path.join(folder, "-".join(flags) + ".bin")
            args = [f for f in flags if f != "--buckets"]  # a name for the file only
            status, output, _ = run(["--standalone", "--nproc-per-node", "2", TRAINER, "--mode",
                                     "ranks", "--steps", "20", "--batch", "16", "--out", path] +
                                    args, env=env, deadline=300)
            expect(status == 0, f"{' '.join(flags)} trains")
            return floats(path), re.findall(r"step 19 loss (\S+)", output)

        for odd in ([], ["--odd"]):
            unsharded, unsharded_loss = train(*odd)
            sharded, sharded_loss = train("--zero", *odd)
            expect(len(sharded) == len(unsharded) > 2000, "every parameter written")
            differ = sum(a != b for a, b in zip(sharded, unsharded))
            expect(differ == 0, f"{' '.join(odd) or 'even'}: sharded state trains as unsharded "
                                f"to the bit ({differ} of {len(sharded)} differ)")
            expect(set(sharded_loss) == set(unsharded_loss) and len(sharded_loss) == 2,
                   f"the same losses: {sharded_loss} vs {unsharded_loss}")
        deterministic, _ = train("--zero", "--odd", env={"SINTER_DETERMINISTIC_COLLECTIVES": "1"})
        expect(deterministic == sharded, "the deterministic mode gives the same bits")
        # Buckets of 4 KiB: the parameters in several reduce-scatters and
        # all-gathers (one bucket of them all by default).
        buckets, _ = train("--zero", "--odd", "--buckets", env={"SINTER_BUCKET_MB": "0.004"})
        expect(buckets == sharded, "several buckets give the same bits")


def case_aot_ranks():
    """A data-parallel step exported ahead of time in a world of one, run
    by 2 ranks through the C API, trains as the same step just in time on 2
    ranks, to the bit (deterministic collectives, x86-64-v3 kernels both)."""
    with tempfile.TemporaryDirectory() as folder:
        artifact = os.path.join(folder, "mlp.sinter")
        print("$", AOT_TRAINER, "--export", artifact, flush=True)
        done = subprocess.run([AOT_TRAINER, "--export", artifact], capture_output=True,
                              text=True, timeout=300)
        print(done.stdout + done.stderr, end="")
        expect(done.returncode == 0, "the step is exported in a world of one")
        env = {"SINTER_DETERMINISTIC_COLLECTIVES": "1"}

        def train(*mode):
            out = os.path.join(folder, mode[0].lstrip("-"))
            status, output, _ = run(["--standalone", "--nproc-per-node", "2", AOT_TRAINER] +
                                    list(mode) + ["--out", out], env=env, deadline=300)
            expect(status == 0, f"{' '.join(mode)} trains on 2 ranks")
            ranks = [floats(f"{out}.{rank}") for rank in range(2)]
            expect(len(ranks[0]) == 32 * 64 + 64 + 64 * 10 + 10, "every parameter written")
            expect(ranks[0] == ranks[1], f"{' '.join(mode)}: both ranks hold the same parameters")
            losses = re.findall(r"\[rank 0\] step (\d+) loss (\S+)", output)
            expect(len(losses) == 20, f"{' '.join(mode)}: rank 0 logs 20 steps")
            return ranks[0], losses

        jit, jit_losses = train("--jit")
        aot, aot_losses = train("--run", artifact)
        differ = sum(a != b for a, b in zip(aot, jit))
        expect(differ == 0, f"the artifact on 2 ranks trains as the just-in-time step to the bit "
                            f"({differ} of {len(aot)} parameters differ)")
        expect(aot_losses == jit_losses, f"the same losses: {aot_losses[-1]} vs {jit_losses[-1]}")
        expect(jit_losses[0][1] != jit_losses[-1][1], "the loss moves")

        # A world of one runs the artifact too (its mean over ranks is its
        # own gradient); a session without a process group refuses the step.
        print("$", AOT_TRAINER, "--run", artifact, "--steps 2 (no launcher)", flush=True)
        alone = subprocess.run([AOT_TRAINER, "--run", artifact, "--steps", "2", "--out",
                                os.path.join(folder, "alone")], capture_output=True, text=True,
                               timeout=120)
        print(alone.stdout + alone.stderr, end="")
        expect(alone.returncode == 0 and "rank 0 of 1: done" in alone.stdout,
               "a world of one runs the artifact")
        refused = subprocess.run([AOT_TRAINER, "--run", artifact, "--steps", "1", "--no-group",
                                  "--out", os.path.join(folder, "refused")], capture_output=True,
                                 text=True, timeout=120)
        print(refused.stdout + refused.stderr, end="")
        expect(refused.returncode == 1 and "sinter_session_set_process_group" in refused.stderr,
               "a session without a process group refuses the step, saying what to call")


def case_diverged():
    """Ranks that record different collectives stop at once, naming the first."""
    with tempfile.TemporaryDirectory() as folder:
        started = time.monotonic()
        status, output, _ = run(["--standalone", "--nproc-per-node", "2", TRAINER, "--mode",
                                 "ranks", "--steps", "2", "--diverge", "--out",
                                 os.path.join(folder, "p.bin")],
                                env={"SINTER_COLLECTIVE_TIMEOUT": "60"})
        seconds = time.monotonic() - started
        expect(status != 0, "the job fails")
        expect(seconds < 30, f"within seconds, not at the 60 s collective timeout ({seconds:.1f} s)")
        for rank in (0, 1):
            expect(re.search(rf"\[rank {rank}\].*mark_step: the ranks recorded different collectives",
                             output),
                   f"rank {rank} says that the ranks recorded different collectives")
        expect(re.search(r"rank 0: all_reduce \(mean\) f32\[64, 32\]; "
                         r"rank 1: all_reduce \(mean\) f32\[65, 32\]", output),
               "the first collective that differs is named, for every rank")
        expect(re.search(r"this rank's \(1\) was recorded at \S*data_parallel_train.cpp:\d+",
                         output), "with the rank's own source line")


# ------------------------------------------------------------- two machines

class Namespaces:
    """Two network namespaces joined by a veth pair: 10.77.0.1 and 10.77.0.2."""

    def __init__(self):
        tag = str(os.getpid())
        self.names = [f"sinter-a-{tag}", f"sinter-b-{tag}"]
        self.links = [f"sva{tag}"[:15], f"svb{tag}"[:15]]

    def __enter__(self):
        if shutil.which("ip") is None:
            print("SKIPPED: network namespaces cannot be made here: no `ip` command "
                  "(iproute2, which tools/install_deps.sh installs)")
            sys.exit(77)
        commands = [
            ["ip", "netns", "add", self.names[0]],
            ["ip", "netns", "add", self.names[1]],
            ["ip", "link", "add", self.links[0], "netns", self.names[0], "type", "veth", "peer",
             "name", self.links[1], "netns", self.names[1]],
        ]
        for i, name in enumerate(self.names):
            commands += [
                ["ip", "-n", name, "addr", "add", f"10.77.0.{i + 1}/24", "dev", self.links[i]],
                ["ip", "-n", name, "link", "set", self.links[i], "up"],
                ["ip", "-n", name, "link", "set", "lo", "up"],
            ]
        for command in commands:
            done = subprocess.run(command, capture_output=True, text=True)
            if done.returncode != 0:
                self.__exit__()
                print(f"SKIPPED: network namespaces cannot be made here: {' '.join(command)}: "
                      f"{done.stderr.strip()}")
                sys.exit(77)
        return self

    def __exit__(self, *args):
        for name in self.names:
            subprocess.run(["ip", "netns", "pids", name], capture_output=True)
            pids = subprocess.run(["ip", "netns", "pids", name], capture_output=True,
                                  text=True).stdout.split()
            for pid in pids:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
            subprocess.run(["ip", "netns", "del", name], capture_output=True)


def two_nodes(namespaces, port, worker_args, env=None):
    env = env or {}
    nodes = []
    for node in range(2):
        nodes.append(start(["--nnodes", "2", "--node-rank", str(node), "--nproc-per-node", "1",
                            "--master-addr", "10.77.0.1", "--master-port", str(port),
                            "--rdzv-timeout", "30", WORKER] + worker_args,
                           env=env, netns=namespaces.names[node]))
    return nodes


def case_two_nodes():
    status, output, _ = run(standalone(2, "--steps", "6"))
    expect(status == 0, "the one-machine run finishes")
    one_machine = sorted(totals(output))
    with Namespaces() as namespaces:
        results = [finish(node) for node in two_nodes(namespaces, 29611, ["--steps", "6"])]
    for node, (status, output, _) in enumerate(results):
        expect(status == 0, f"node {node} finishes")
    combined = sorted(totals(results[0][1]) + totals(results[1][1]))
    expect(combined == one_machine == [("0", "48.0"), ("1", "48.0")],
           f"the same result as on one machine: {combined} vs {one_machine}")
    expect("store at 10.77.0.1:29611" in results[1][1], "node 1 reaches node 0's store over TCP")


def case_two_nodes_killed():
    with Namespaces() as namespaces:
        nodes = two_nodes(namespaces, 29612, ["--steps", "500", "--sleep-ms", "20",
                                              "--kill-rank", "1", "--at-step", "5"])
        results = [finish(node) for node in nodes]
    (status0, output0, took0), (status1, output1, took1) = results
    expect(status1 == 1 and re.search(r"rank 1 \(local rank 0 on node 1, pid \d+\) was killed by "
                                      r"signal 9", output1), "node 1 names its killed rank")
    expect(status0 == 1 and re.search(r"node 0: (first|then): rank 1 \(local rank 0 on "
                                      r"node 1, pid \d+\) was killed by signal 9", output0),
           "node 0 stops and names the other node's failed rank")
    expect(max(took0, took1) < 15, f"both within seconds ({took0:.1f} s, {took1:.1f} s)")


def case_two_nodes_link_down():
    with Namespaces() as namespaces:
        nodes = two_nodes(namespaces, 29613, ["--steps", "100000", "--sleep-ms", "10"],
                          env={"SINTER_COLLECTIVE_TIMEOUT": "5"})
        time.sleep(3)  # both are in the loop of all-reduces
        subprocess.run(["ip", "-n", namespaces.names[1], "link", "set", namespaces.links[1],
                        "down"], check=True)
        began = time.monotonic()
        results = [finish(node, deadline=60) for node in nodes]
        took = time.monotonic() - began
    for node, (status, output, _) in enumerate(results):
        expect(status == 1, f"node {node} fails when the link goes down")
        expect("imed out" in output or "lost the rendezvous store" in output
               or "stopped its workers" in output, f"node {node} says why")
    expect(took < 40, f"both sides find it within the timeout plus a margin ({took:.1f} s)")


CASES = {name[5:]: function for name, function in globals().items() if name.startswith("case_")}
if CASE not in CASES:
    fail(f"unknown case {CASE}; cases: {', '.join(CASES)}")
CASES[CASE]()
print("PASS:", CASE)
