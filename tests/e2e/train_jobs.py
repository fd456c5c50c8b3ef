#!/usr/bin/env python3
"""sinter-train end to end: bad jobs refused, start lines, aliases, resuming,
a user's program, the largest batch, and a language model beating the
unigram baseline.

    train_jobs.py CASE SINTER_TRAIN SCRATCH_DIR

Each case exits 0 when everything it checks holds, and prints what did not.
"""
import json
import re
import os
import shutil
import subprocess
import sys

CASE, TRAIN, SCRATCH = sys.argv[1], sys.argv[2], sys.argv[3]
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)


def run(args, job=None, name="job"):
    """Runs sinter-train with `args` (and `job` written as --config)."""
    os.makedirs(SCRATCH, exist_ok=True)
    if job is not None:
        path = os.path.join(SCRATCH, name + ".json")
        with open(path, "w") as f:
            f.write(job if isinstance(job, str) else json.dumps(job))
        args = ["--config", path] + args
    result = subprocess.run([TRAIN] + args, capture_output=True, text=True, timeout=900)
    return result.returncode, result.stdout + result.stderr


def ran_as(output_dir, mode, steps, text=""):
    """Every one of at least `steps` steps of the job in `output_dir` ran
    `mode` ("compiled" or "eager"), none on the reference executor."""
    with open(os.path.join(output_dir, "summary.json")) as f:
        summary = json.load(f)
    check(summary["fallbacks"] == 0,
          f"{output_dir}: {summary['fallbacks']} fallbacks to the reference executor: "
          f"{summary['fallback_reasons']}\n{text}")
    check(summary[mode + "_steps"] >= steps,
          f"{output_dir}: {summary[mode + '_steps']} {mode} steps, expected at least {steps}")
    other = "eager" if mode == "compiled" else "compiled"
    check(summary[other + "_steps"] == 0,
          f"{output_dir}: {summary[other + '_steps']} {other} steps in a {mode} job")
    return summary


def rows(output_dir, split):
    with open(os.path.join(output_dir, "metrics.jsonl")) as f:
        return [r for r in map(json.loads, f) if r["split"] == split]


def out(name):
    path = os.path.join(SCRATCH, name)
    shutil.rmtree(path, ignore_errors=True)
    return path


def case_errors():
    mlp = {"entry_point": "mlp"}
    bad = [
        ({"entry_point": "mlp", "ouput_dir": "x"},
         'ouput_dir: unknown key (did you mean "output_dir"?); expected one of: compiler_config'),
        ({**mlp, "hyperparameters": {"batchsize": 8}},
         'hyperparameters.batchsize: unknown key (did you mean "batch_size"?)'),
        ({**mlp, "hyperparameters": {"batch_size": "sixty-four"}},
         'hyperparameters.batch_size: must be an integer, got a string "sixty-four"'),
        ({**mlp, "hyperparameters": {"learning_rate": "fast"}},
         'hyperparameters.learning_rate: must be a number, got a string "fast"'),
        ({**mlp, "hyperparameters": {"batch_size": -8}},
         "hyperparameters.batch_size: must be at least 1, got -8"),
        ({**mlp, "hyperparameters": {"learning_rate": 0}},
         "hyperparameters.learning_rate: must be above 0, got 0"),
        ({**mlp, "hyperparameters": {"epochs": 1.5}},
         "hyperparameters.epochs: must be an integer, got a number 1.5"),
        ({**mlp, "compiler_config": {"enabled": "yes"}},
         'compiler_config.enabled: must be true or false, got a string "yes"'),
        ({**mlp, "compiler_config": {"enable": True}},
         'compiler_config.enable: unknown key (did you mean "enabled"?)'),
        ({**mlp, "dataset": "/nonexistent/images"},
         'dataset: "/nonexistent/images": /nonexistent/images does not exist'),
        ({**mlp, "dataset": "/usr/share/common-licenses"},
         'dataset: "/usr/share/common-licenses" holds no train-images-idx3-ubyte.gz'),
        ({"entry_point": "gpt-mini"}, "dataset: is required for gpt-mini"),
        ({"entry_point": "vgg"}, 'entry_point: "vgg" is neither a model'),
        ({"hyperparameters": {}}, "entry_point: is required"),
        ({**mlp, "n_gpus": 2}, "n_gpus: is 2: one process per GPU needs distribution enabled"),
        ({**mlp, "instance_count": 2},
         "instance_count: is 2: training on several machines needs distribution enabled"),
        ({**mlp, "instance_count": 0}, "instance_count: must be at least 1, got 0"),
        ({**mlp, "n_gpus": 2, "distribution": {"pytorchxla": {"enabled": True}}},
         "n_gpus: is 2: data parallelism between GPUs needs NCCL"),
        ({**mlp, "distribution": {"processes_per_host": 2}},
         "distribution.processes_per_host: is 2 but distribution is not enabled"),
        ({**mlp, "distribution": {"enabled": True, "processes_per_host": 0}},
         "distribution.processes_per_host: must be at least 1, got 0"),
        ({**mlp, "distribution": {"enabled": False, "pytorchxla": {"enabled": True}}},
         "distribution.pytorchxla.enabled: is true but distribution.enabled is false"),
        ({**mlp, "distribution": {"pytorchxla": {"enable": True}}},
         'distribution.pytorchxla.enable: unknown key (did you mean "enabled"?)'),
        ({**mlp, "distribution": {"enabled": False},
          "hyperparameters": {"sagemaker_pytorch_xla_multi_worker_enabled": "true"}},
         "hyperparameters.sagemaker_pytorch_xla_multi_worker_enabled: is true but "
         "distribution.enabled is false"),
        ({**mlp, "instance_count": 2, "distribution": {"enabled": True}},
         "instance_count: is 2 and this process was started by no launcher: start one "
         "sinter-run per machine"),
        ({**mlp, "compiler_config": {"enabled": False},
          "hyperparameters": {"training_compiler_enabled": True}},
         "hyperparameters.training_compiler_enabled: is true but compiler_config.enabled is false"),
        ({**mlp, "hyperparameters": {"scale_learning_rate": True}},
         "hyperparameters.scale_learning_rate: needs hyperparameters.native_batch_size"),
        ({**mlp, "hyperparameters": {"memory_budget": "lots"}},
         'hyperparameters.memory_budget: must be a positive byte count such as 268435456 or '
         '"256MiB", got "lots"'),
        ({**mlp, "hyperparameters": {"memory_budget_hard": True}},
         "hyperparameters.memory_budget_hard: needs hyperparameters.memory_budget"),
        ({**mlp, "hyperparameters": {"context": 64}},
         "hyperparameters.context: is for language models (gpt-*), not mlp"),
        ({**mlp, "hyperparameters": {"warmup_steps": 50, "steps": 20}},
         "hyperparameters.warmup_steps: is 50, more than the job's 20 steps"),
        ({**mlp, "hyperparameters": {"batch_size": 100000}},
         "hyperparameters.batch_size: 100000 is more than the 60000 training examples"),
        ({"entry_point": "gpt-mini", "dataset": "/usr/share/common-licenses/GPL-3",
          "hyperparameters": {"tokenizer": "/nonexistent"}},
         'hyperparameters.tokenizer: "/nonexistent" is not byte, bpe, or a folder'),
        ("[1, 2]", ".json: must hold a JSON object"),
        ('{"entry_point": "mlp",', "not valid JSON: [json.exception.parse_error.101]"),
        ('{"entry_point": "mlp", "hyperparameters": {"steps": 1e999}}',
         "not valid JSON: [json.exception.out_of_range.406] number overflow"),
    ]
    for i, (job, message) in enumerate(bad):
        code, text = run(["--output-dir", out("errors")], job, f"bad{i}")
        check(code == 2, f"job {job}: exit status {code}, expected 2; output:\n{text}")
        check(message in text, f"job {job}: expected {message!r} in:\n{text}")
        if "training examples" not in message and "warmup" not in message:  # known once the data is read
            check("Found configuration" not in text, f"job {job}: started before refusing:\n{text}")
    flags = [
        (["--model", "mlp", "--batch-size"], "--batch-size: 1 required"),
        (["--model", "mlp", "--bogus"], "The following argument was not expected: --bogus"),
        (["--model", "mlp", "--compiler", "maybe"], "--compiler: maybe not in {on,off}"),
        (["--model", "mlp", "--epochs", "two"], "Could not convert: --epochs = two"),
        (["--model", "mlp", "--batch-size", "-4"],
         "hyperparameters.batch_size: must be at least 1, got -4"),
        (["--model", "mlp", "--set", "warmup"], '--set: "warmup" is not KEY=VALUE'),
        (["--model", "mlp", "--resume", "/nonexistent.safetensors"],
         "--resume: no checkpoint at /nonexistent.safetensors"),
        (["--config", "/nonexistent.json"], "--config: File does not exist: /nonexistent.json"),
    ]
    for args, message in flags:
        code, text = run(["--output-dir", out("errors")] + args)
        check(code == 2, f"flags {args}: exit status {code}, expected 2; output:\n{text}")
        check(message in text, f"flags {args}: expected {message!r} in:\n{text}")

    # An output folder whose name a shell would run: the loss curve is drawn
    # there by gnuplot, run without a shell.
    parent = out("crafted")
    crafted = os.path.join(parent, "it's $(touch pwned) `touch pwned2`")
    code, text = run(["--model", "mlp", "--steps", "2", "--set", "eval_batches=1",
                      "--output-dir", crafted])
    check(code == 0 and os.path.getsize(os.path.join(crafted, "loss.png")) > 1000,
          f"the loss curve in a folder named with quotes:\n{text}")
    check(not any(f.startswith("pwned") for f in os.listdir(parent) + os.listdir(".") +
                  os.listdir(crafted)), "a command in the folder's name ran")

    # A memory budget no plan meets: said when the step is compiled, at the
    # end and in the summary, and the job runs over it; as a hard limit,
    # the step is refused.
    over_dir = out("over-budget")
    over = ["--model", "mlp", "--steps", "3", "--set", "eval_batches=1", "--set",
            "memory_budget=1", "--output-dir", over_dir]
    code, text = run(over)
    check(code == 0, f"a job over its budget runs:\n{text}")
    for words in ["sinter: warning: the step's smallest plan needs ",
                  " over the memory budget of 1 bytes (CompilerConfig::memory_budget",
                  "memory budget 1 bytes: the step's smallest plan is "]:
        check(words in text, f"expected {words!r} in:\n{text}")
    summary = json.load(open(os.path.join(over_dir, "summary.json")))
    check(summary["memory_budget"] == 1 and
          summary["over_budget_bytes"] == summary["planned_step_bytes"] - 1,
          f"the summary's budget: {summary}")
    code, text = run(over + ["--set", "memory_budget_hard=true"])
    check(code != 0 and "over the memory budget of 1 bytes" in text and
          "memory_budget_hard refuses it" in text, f"a hard budget refuses the step:\n{text}")


def case_data_parallel():
    """The managed service's data-parallel job (distribution pytorchxla, two
    processes on this host, hyperparameters as strings): sinter-train starts
    its own workers, each trains on its shard of every global batch, and the
    job reaches the accuracy of one process (85% after an epoch of batch 64).
    """
    d = out("data-parallel")
    job = {"entry_point": "mlp", "output_dir": d,
           "distribution": {"pytorchxla": {"enabled": True}, "processes_per_host": 2},
           "hyperparameters": {"batch_size": "32", "epochs": 1, "scale_learning_rate": "true",
                               "native_batch_size": 64, "native_learning_rate": "2e-3",
                               "sagemaker_pytorch_xla_multi_worker_enabled": "true"}}
    code, text = run([], job, "data-parallel")
    check(code == 0, f"exit status {code}:\n{text}")
    for rank in (0, 1):
        check(f"[rank {rank}] data parallel: rank {rank} of 2, 2 processes on each of 1 machines; "
              f"batch 32 a rank, 64 a step" in text, f"rank {rank}'s start line:\n{text}")
    check("learning rate scaled: 0.002 / 64 * 32 * 2 = 0.002" in text,
          f"the learning-rate rule with the world size:\n{text}")
    accuracy = [float(a) for a in re.findall(r"\[rank 0\] test accuracy ([0-9.]+)%", text)]
    check(accuracy and accuracy[0] >= 84.0, f"rank 0's test accuracy {accuracy}:\n{text}")
    # Each rank evaluates every other batch; both log the sums of all.
    evaluations = {rank: re.findall(rf"\[rank {rank}\] (test at step .*)", text) for rank in (0, 1)}
    check(evaluations[0] == evaluations[1] and len(evaluations[0]) == 1 and
          "(10000 images)" in evaluations[0][0],
          f"both ranks log the evaluation of all 10000 test images: {evaluations}")
    check("rank 1 done; rank 0 writes the job's files" in text, f"rank 1 writes nothing:\n{text}")
    summary = json.load(open(os.path.join(d, "summary.json")))
    check(summary["world_size"] == 2 and summary["steps"] == 937,
          f"937 steps of the global batch 64, world 2: {summary}")
    check(len(rows(d, "train")) == 937, "one metrics row a step, written by rank 0")


def case_gradient_accumulation():
    """gradient_accumulation_steps: 2 micro-batches of 32 a step train as one
    batch of 64 (the same losses up to the order of the additions), in a
    step planned for a batch of 32."""
    common = ["--model", "mlp", "--steps", "40", "--set", "eval_batches=1"]
    whole, micro = out("batch-64"), out("micro-2x32")
    code, text = run(common + ["--batch-size", "64", "--output-dir", whole])
    check(code == 0, f"batch 64:\n{text}")
    code, text = run(common + ["--batch-size", "32", "--set", "gradient_accumulation_steps=2",
                               "--output-dir", micro])
    check(code == 0, f"2 micro-batches of 32:\n{text}")
    check("gradient accumulation: batch 32 x 2 micro-batches, 64 a step" in text,
          f"the job says how it accumulates:\n{text}")
    summary = ran_as(micro, "compiled", 80, text)
    check(summary["gradient_accumulation_steps"] == 2 and summary["steps"] == 40,
          f"40 steps of 2 micro-batches: {summary}")
    a, b = rows(whole, "train"), rows(micro, "train")
    check(len(a) == len(b) == 40, f"{len(a)} and {len(b)} training rows")
    # The micro-batches add each half's mean / 2 where one batch takes the
    # mean of all 64: measured 1.2e-7 relative at most over the 40 steps;
    # 1e-5 is 80 times that, and far below a step's change of the loss.
    worst = max(abs(x["loss"] - y["loss"]) / abs(x["loss"]) for x, y in zip(a, b))
    print(f"largest relative difference of the losses: {worst:.3g}")
    check(worst < 1e-5, f"the losses of 2 x 32 and of 64 differ by {worst:.3g} (relative)")
    check(worst > 0 or a == b, "the comparison sees the losses")
    whole_bytes = json.load(open(os.path.join(whole, "summary.json")))["planned_step_bytes"]
    check(summary["planned_step_bytes"] < whole_bytes,
          f"a step of 2 x 32 plans {summary['planned_step_bytes']} bytes, one of 64 {whole_bytes}")
    # A checkpoint of 2 micro-batches is not resumed by a job of 1.
    code, text = run(common + ["--batch-size", "32", "--output-dir", micro, "--resume"])
    check(code == 2 and "has gradient_accumulation_steps 2, this job 1" in text,
          f"resuming with another accumulation:\n{text}")
    for value, message in [("0", "must be at least 1, got 0"),
                           ("4000", "is 4000, and an epoch has only 1875 batches of 32 a rank")]:
        code, text = run(common + ["--batch-size", "32", "--set",
                                   f"gradient_accumulation_steps={value}", "--output-dir",
                                   out("bad-accumulation")])
        check(code == 2 and message in text, f"gradient_accumulation_steps={value}:\n{text}")


def data_parallel_job(d, steps):
    return {"entry_point": "mlp", "output_dir": d,
            "distribution": {"pytorchxla": {"enabled": True}, "processes_per_host": 2},
            "hyperparameters": {"batch_size": 16, "steps": steps, "gradient_accumulation_steps": 2,
                                "eval_every": steps, "eval_batches": 1, "checkpoint_every": 25}}


def case_data_parallel_resume():
    """A data-parallel job (2 workers, 2 micro-batches each) continues to the
    bit: after --stop-at and --resume, and after a worker is killed under
    sinter-run --max-restarts 1 (its workers resume from the checkpoint by
    themselves)."""
    import signal
    import time
    steps = 500
    through, stopped, restarted = out("dp-through"), out("dp-stopped"), out("dp-restarted")
    code, text = run([], data_parallel_job(through, steps), "dp-through")
    check(code == 0, f"uninterrupted:\n{text}")
    check("batch 16 x 2 micro-batches a rank, 64 a step" in text, f"the start line:\n{text}")
    code, text = run(["--stop-at", "130"], data_parallel_job(stopped, steps), "dp-stopped")
    check(code == 0 and "stopped after step 130" in text, f"stopped at 130:\n{text}")
    code, text = run(["--resume"], data_parallel_job(stopped, steps), "dp-stopped")
    check(code == 0 and "resumed from" in text, f"resumed:\n{text}")
    check(rows(through, "train") == rows(stopped, "train"),
          "the training rows differ after --resume")
    check(tensors_of(os.path.join(through, "checkpoint.safetensors")) ==
          tensors_of(os.path.join(stopped, "checkpoint.safetensors")),
          "the parameters or optimizer state differ after --resume")

    # Under the launcher with a restart: rank 1 killed once the checkpoint
    # passes step 150.
    sinter_run = os.path.join(os.path.dirname(os.path.dirname(TRAIN)), "sinter-run", "sinter-run")
    path = os.path.join(SCRATCH, "dp-restarted.json")
    with open(path, "w") as f:
        json.dump(data_parallel_job(restarted, steps), f)
    agent = subprocess.Popen([sinter_run, "--standalone", "--nproc-per-node", "2",
                              "--max-restarts", "1", TRAIN, "--config", path],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    checkpoint = os.path.join(restarted, "checkpoint.safetensors")
    killed = None
    deadline = time.monotonic() + 120
    while agent.poll() is None and killed is None and time.monotonic() < deadline:
        if os.path.exists(checkpoint) and checkpoint_step(checkpoint) >= 150:
            for pid in filter(str.isdigit, os.listdir("/proc")):
                try:
                    with open(f"/proc/{pid}/stat") as f:
                        parent = int(f.read().rsplit(")", 1)[1].split()[1])
                    with open(f"/proc/{pid}/environ", "rb") as f:
                        environ = f.read().split(b"\0")
                except OSError:
                    continue
                if parent == agent.pid and b"RANK=1" in environ:
                    os.kill(int(pid), signal.SIGKILL)
                    killed = int(pid)
                    break
        time.sleep(0.005)
    text, _ = agent.communicate(timeout=300)
    check(killed is not None, f"rank 1 was found and killed before the job ended:\n{text}")
    check(agent.returncode == 0, f"the restarted job exits 0 ({agent.returncode}):\n{text}")
    check("restarting every worker (restart 1 of 1)" in text and
          re.search(r"\[rank 0\] restart 1 of the job's workers: resuming from", text),
          f"the workers restart and resume by themselves:\n{text}")
    check(rows(through, "train") == rows(restarted, "train"),
          "the training rows differ after the restart")
    check(tensors_of(os.path.join(through, "checkpoint.safetensors")) == tensors_of(checkpoint),
          "the parameters or optimizer state differ after the restart")


def case_zero_stage():
    """zero_stage 1 (AdamW's state sharded over the 2 workers) trains as
    zero_stage 0 to the bit (a mean of two values has one order), with the
    optimizer's state halved in each worker's memory plan; its checkpoint
    holds whole tensors and resumes to the bit; clipping sees the reduced
    gradients; stages past 1 are refused."""
    steps = 60

    def job(d, zero, **more):
        j = data_parallel_job(d, steps)
        j["hyperparameters"].update({"zero_stage": zero, **more})
        return j

    plain, sharded, stopped = out("zero-0"), out("zero-1"), out("zero-1-stopped")
    code, text = run([], job(plain, 0), "zero-0")
    check(code == 0, f"zero_stage 0:\n{text}")
    code, text = run([], job(sharded, 1), "zero-1")
    check(code == 0, f"zero_stage 1:\n{text}")
    for rank in (0, 1):
        check(f"[rank {rank}] optimizer state sharded over 2 ranks (ZeRO stage 1)" in text,
              f"rank {rank} says its optimizer state is sharded:\n{text}")
    check(rows(plain, "train") == rows(sharded, "train") and
          rows(plain, "test") == rows(sharded, "test"), "the metrics differ between the stages")
    check(tensors_of(os.path.join(plain, "checkpoint.safetensors")) ==
          tensors_of(os.path.join(sharded, "checkpoint.safetensors")),
          "the parameters or the (whole) optimizer state differ between the stages")
    a = json.load(open(os.path.join(plain, "summary.json")))
    b = json.load(open(os.path.join(sharded, "summary.json")))
    print(f"optimizer state in the plan: {a['optimizer_state_bytes']} bytes unsharded, "
          f"{b['optimizer_state_bytes']} sharded; step {a['planned_step_bytes']} and "
          f"{b['planned_step_bytes']}")
    check(b["zero_stage"] == 1 and a["zero_stage"] == 0, f"the summaries' stages: {a}, {b}")
    # Half of each moment, and a slice of 64 bytes at most a tensor more.
    half = a["optimizer_state_bytes"] / 2
    check(half <= b["optimizer_state_bytes"] <= half + 8 * 64,
          f"sharded state {b['optimizer_state_bytes']} bytes, unsharded "
          f"{a['optimizer_state_bytes']}")
    check(b["persistent_bytes"] < a["persistent_bytes"], "less kept between steps")

    code, text = run(["--stop-at", "30"], job(stopped, 1), "zero-1-stopped")
    check(code == 0 and "stopped after step 30" in text, f"stopped at 30:\n{text}")
    code, text = run(["--resume"], job(stopped, 1), "zero-1-stopped")
    check(code == 0 and "resumed from" in text, f"resumed:\n{text}")
    check(rows(sharded, "train") == rows(stopped, "train"), "the rows differ after --resume")
    check(tensors_of(os.path.join(sharded, "checkpoint.safetensors")) ==
          tensors_of(os.path.join(stopped, "checkpoint.safetensors")),
          "the checkpoint differs after --resume")

    # Clipping: the norm of the reduced gradients, summed over the shards
    # (another order of the additions than clip_grad_norm_'s).
    clipped = {}
    for zero in (0, 1):
        d = out(f"zero-{zero}-clipped")
        code, text = run([], job(d, zero, grad_clip=0.05), f"zero-{zero}-clipped")
        check(code == 0, f"zero_stage {zero} with grad_clip:\n{text}")
        clipped[zero] = [r["loss"] for r in rows(d, "train")]
    worst = max(abs(x - y) / abs(x) for x, y in zip(clipped[0], clipped[1]))
    print(f"grad_clip 0.05: largest relative difference of the losses {worst:.3g}")
    # Measured 2.9e-7 at most over the 60 steps; 1e-5 is 35 times that, and
    # far below a step's change of the loss.
    check(worst < 1e-5, f"clipped losses differ by {worst:.3g} between the stages")
    check(clipped[0] != [r["loss"] for r in rows(plain, "train")], "the clipping clips")

    code, text = run(["--model", "mlp", "--steps", "2", "--set", "zero_stage=2",
                      "--output-dir", out("zero-2")])
    check(code == 2 and "hyperparameters.zero_stage: is 2: 0 (every rank keeps all of AdamW's "
          "state) or 1" in text, f"zero_stage 2:\n{text}")


def case_main_job():
    """The README's main command's job file: at least 85% test accuracy."""
    d = out("main")
    code, text = run(["--output-dir", d], open(os.path.join(
        os.path.dirname(__file__), "..", "..", "examples", "jobs", "mlp-fashion-mnist.json")).read())
    check(code == 0, f"main job failed:\n{text}")
    summary = ran_as(d, "compiled", 937, text)
    print(f"test accuracy {summary['test_accuracy']:.4f}, compiled "
          f"{summary['compiled_samples_per_s']:.0f} samples/s, eager "
          f"{summary['eager_samples_per_s']:.0f}")
    check(summary["test_accuracy"] >= 0.85, f"test accuracy {summary['test_accuracy']} < 0.85")
    check(summary["steps"] == 937, f"{summary['steps']} steps, expected one epoch of 937")
    check("compiled is " in text, f"no compiled-vs-eager line:\n{text}")
    evals = rows(d, "test")
    check(len(evals) == 1 and evals[0]["step"] == 937 and "accuracy" in evals[0],
          f"evaluation rows {evals}")
    check(os.path.getsize(os.path.join(d, "loss.png")) > 1000, "no loss curve")


def case_start_lines():
    # Compiler on (default), with debug through the migrated alias.
    d = out("debug")
    code, text = run(["--steps", "3", "--set", "eval_batches=1", "--output-dir", d],
                     {"entry_point": "mlp",
                      "hyperparameters": {"sagemaker_training_compiler_debug_mode": True}})
    check(code == 0, f"debug job failed ({code}):\n{text}")
    lines = text.splitlines()
    check(lines[:3] == ["Found configuration for Training Compiler",
                        "Configuring Sinter Training Compiler...",
                        f"Training Compiler set to debug mode (dumps in {d}/debug, metrics at exit)"],
          f"start lines:\n{text}")
    dumps = os.listdir(os.path.join(d, "debug")) if os.path.isdir(os.path.join(d, "debug")) else []
    check(any(f.endswith(".fusion.txt") for f in dumps), f"no fusion dump in {d}/debug: {dumps}")
    check("compilations" in text, f"no metrics report at exit:\n{text}")
    # Compiler off, by the alias.
    code, text = run(["--steps", "3", "--set", "eval_batches=1", "--output-dir", out("eager")],
                     {"entry_point": "mlp",
                      "hyperparameters": {"training_compiler_enabled": False}})
    check(code == 0, f"eager job failed ({code}):\n{text}")
    check(text.splitlines()[:2] == ["Found configuration for Training Compiler",
                                     "Training Compiler disabled: steps run eagerly (one kernel per op)"],
          f"eager start lines:\n{text}")
    check(", eager on cpu\n" in text, f"the job does not say it runs eager on the CPU:\n{text}")


def case_resume():
    for compiler in ["on", "off"]:
        resume_with(compiler)


def resume_with(compiler):
    args = ["--model", "mlp", "--steps", "40", "--batch-size", "32", "--set", "eval_every=10",
            "--set", "eval_batches=2", "--set", "checkpoint_every=15", "--compiler", compiler]
    a, b = out("through-" + compiler), out("resumed-" + compiler)
    mode = "compiled" if compiler == "on" else "eager"
    code, text = run(args + ["--output-dir", a])
    check(code == 0, f"uninterrupted run failed:\n{text}")
    ran_as(a, mode, 40, text)
    code, text = run(args + ["--output-dir", b, "--stop-at", "23"])
    check(code == 0 and "stopped after step 23 (--stop-at); continue with --resume" in text,
          f"interrupted run:\n{text}")
    check("reference executor" not in text, f"the interrupted run fell back:\n{text}")
    check(len(rows(b, "train")) == 23, "the interrupted run logged other than 23 steps")
    code, text = run(args + ["--output-dir", b, "--resume"])
    check(code == 0 and "at step 23" in text, f"resumed run:\n{text}")
    ran_as(b, mode, 40 - 23, text)
    through, resumed = rows(a, "train"), rows(b, "train")
    check(len(through) == 40 and len(resumed) == 40,
          f"{len(through)} and {len(resumed)} training rows, expected 40")
    for x, y in zip(through, resumed):
        check(x == y, f"step {x['step']}: uninterrupted {x}, resumed {y}")
    check(rows(a, "test") == rows(b, "test"), "evaluations differ after resuming")
    # A checkpoint of another job is refused, naming the difference.
    code, text = run(["--model", "mlp", "--steps", "40", "--batch-size", "16", "--output-dir", b,
                      "--resume", "--compiler", compiler])
    check(code == 2 and "has batch_size 32, this job 16" in text,
          f"another job's checkpoint:\n{text}")
    # The checkpoint is a safetensors file with the step in its metadata.
    _, _, header, _ = safetensors_parts(os.path.join(b, "checkpoint.safetensors"))
    check(header["__metadata__"]["step"] == "40", f"checkpoint metadata {header['__metadata__']}")
    check("model.0.weight" in header and "optimizer.0.exp_avg" in header,
          f"checkpoint tensors {sorted(header)[:6]}")


def case_progress():
    """The progress line redraws itself on a terminal (run under `script`, a
    pseudo-terminal) and prints plain lines in a log."""
    import shlex
    args = [TRAIN, "--model", "mlp", "--steps", "30", "--set", "log_every=10",
            "--set", "eval_batches=1", "--output-dir", out("progress")]
    # Bytes, not text: text mode would turn the carriage returns into newlines.
    tty = subprocess.run(["script", "-qec", shlex.join(args), "/dev/null"],
                         capture_output=True, timeout=600)
    screen = tty.stdout.decode(errors="replace")
    check(tty.returncode == 0, f"job under a terminal failed:\n{screen}")
    check("\r\x1b[Kstep 10/30" in screen and "\r\x1b[Kstep 30/30" in screen,
          f"no redrawn progress line on a terminal:\n{screen!r}")
    code, text = run(args[1:])
    check(code == 0 and "\x1b[K" not in text, f"escape codes in a log:\n{text!r}")
    lines = [l for l in text.splitlines() if l.startswith("step ")]
    check([l.split()[1] for l in lines] == ["10/30", "20/30", "30/30"],
          f"progress lines in a log: {lines}")


def case_program():
    d = out("program")
    os.makedirs(d, exist_ok=True)
    script = os.path.join(d, "train.sh")
    with open(script, "w") as f:
        f.write('#!/bin/sh\necho "args: $*"\necho "compiler=$SINTER_COMPILER '
                'out=$SINTER_OUTPUT_DIR"\necho "hps=$SINTER_HYPERPARAMETERS"\n'
                'echo "budget=$SINTER_MEMORY_BUDGET fallback=$SINTER_ALLOW_FALLBACK"\nexit 3\n')
    os.chmod(script, 0o755)
    caller = dict(os.environ)
    os.environ.update(SINTER_MEMORY_BUDGET="5MiB", SINTER_ALLOW_FALLBACK="1")
    try:
        code, text = run([], {"entry_point": script, "output_dir": d,
                              "compiler_config": {"enabled": False},
                              "hyperparameters": {"batch_size": 32, "my_key": "x"}})
    finally:
        os.environ.clear()
        os.environ.update(caller)
    check(code == 3, f"the program's exit status is not passed on ({code}):\n{text}")
    check("args: --batch_size 32 --my_key x" in text, f"arguments:\n{text}")
    check(f"compiler=0 out={d}" in text, f"environment:\n{text}")
    check('hps={"batch_size":32,"my_key":"x"}' in text, f"hyperparameters:\n{text}")
    # The job's compiler settings, as its own session would have them: no
    # budget and no fallbacks (the job's defaults), whatever the caller's
    # environment says.
    check("budget=0 fallback=0" in text, f"compiler settings:\n{text}")


def case_cuda_simulator():
    """A job on cuda:0 with the CUDA simulator standing for the GPU
    (--device cuda, and n_gpus 1): the CPU's losses; without the simulator
    and without a GPU, refused naming what is missing; a user's program
    gets SINTER_DEVICE."""
    caller = dict(os.environ)
    try:
        os.environ["SINTER_CUDA_SIMULATOR"] = "1"
        losses = {}
        for name, args in [("cpu", ["--device", "cpu"]), ("cuda", ["--device", "cuda"]),
                           ("gpus", [])]:
            d = out("cuda-" + name)
            job = {"entry_point": "mlp", "output_dir": d, "hyperparameters": {"steps": 20}}
            if name == "gpus":
                job["n_gpus"] = 1
            code, text = run(args, job, "cuda-" + name)
            check(code == 0, f"{name}: the job failed:\n{text}")
            if code != 0:
                continue
            ran_as(d, "compiled", 20, text)
            where = "on cpu\n" if name == "cpu" else "on cuda:0 (the CUDA simulator)\n"
            check(where in text, f"{name}: no {where!r} in the start lines:\n{text}")
            losses[name] = [r["loss"] for r in rows(d, "train")]
        if len(losses) == 3:
            for name in ("cuda", "gpus"):
                close = all(abs(a - b) <= 1e-4 * max(abs(b), 1e-3)
                            for a, b in zip(losses[name], losses["cpu"]))
                check(close and len(losses[name]) == len(losses["cpu"]),
                      f"{name}: losses {losses[name]} differ from the CPU's {losses['cpu']}")
        d = out("cuda-program")
        os.makedirs(d, exist_ok=True)
        script = os.path.join(d, "train.sh")
        with open(script, "w") as f:
            f.write('#!/bin/sh\necho "device=$SINTER_DEVICE"\n')
        os.chmod(script, 0o755)
        code, text = run([], {"entry_point": script, "output_dir": d, "n_gpus": 1})
        check(code == 0 and "device=cuda:0" in text, f"program on one GPU:\n{text}")
        del os.environ["SINTER_CUDA_SIMULATOR"]
        if not os.path.exists("/dev/nvidia0"):
            code, text = run(["--output-dir", out("cuda-missing"), "--steps", "1"],
                             {"entry_point": "mlp", "n_gpus": 1}, "cuda-missing")
            check(code == 2, f"n_gpus 1 without a GPU: exit status {code}:\n{text}")
            check("Settings::device is cuda:0" in text and "SINTER_CUDA_SIMULATOR=1" in text,
                  f"n_gpus 1 without a GPU: the message does not say what is missing:\n{text}")
    finally:
        os.environ.clear()
        os.environ.update(caller)


def case_auto_batch():
    code, text = run(["--model", "mlp", "--batch-size", "auto", "--steps", "2",
                      "--set", "memory_budget=16MiB", "--set", "scale_learning_rate=true",
                      "--set", "native_batch_size=32", "--set", "native_learning_rate=0.001",
                      "--set", "eval_batches=1", "--output-dir", out("auto")])
    check(code == 0, f"auto batch job failed:\n{text}")
    found = [l for l in text.splitlines() if l.startswith("batch size auto: ")]
    check(len(found) == 1 and "of the budget of 16.0 MiB" in found[0], f"no choice printed:\n{text}")
    if found:
        batch = int(found[0].split()[3])
        lr = 0.001 / 32 * batch
        check(f"learning rate scaled: 0.001 / 32 * {batch} * 1 = {lr:g}" in text,
              f"learning rate for batch {batch}:\n{text}")
        check(f"steps of batch {batch} " in text, f"the job did not use batch {batch}:\n{text}")


def case_language_model():
    d = out("gpt")
    code, text = run(["--output-dir", d],
                     {"entry_point": "gpt-mini", "dataset": "/usr/share/common-licenses/GPL-3",
                      "hyperparameters": {"steps": 150, "batch_size": 8, "context": 64,
                                          "learning_rate": 0.002, "eval_every": 75,
                                          "eval_batches": 8, "log_every": 25}})
    check(code == 0, f"gpt-mini job failed:\n{text}")
    summary = ran_as(d, "compiled", 150, text)
    val, unigram = summary["val_loss"], summary["unigram_loss"]
    print(f"val loss {val:.4f}, unigram baseline {unigram:.4f}")
    check(val < unigram - 0.3, f"validation loss {val} is not clearly below the unigram {unigram}")
    evals = rows(d, "val")
    check([r["step"] for r in evals] == [75, 150], f"evaluation rows {evals}")
    check(all("perplexity" in r for r in evals), f"evaluation rows {evals}")
    check(os.path.getsize(os.path.join(d, "loss.png")) > 1000, "no loss curve")


def case_language_model_resume():
    """uint16 token files, and resuming a job with dropout: the random
    generator's state is in the checkpoint."""
    d = out("tokens")
    os.makedirs(d, exist_ok=True)
    with open("/usr/share/common-licenses/GPL-3", "rb") as f:
        tokens = list(f.read()) + [255]  # byte values as token ids: vocabulary 256
    path = os.path.join(d, "gpl3.bin")
    with open(path, "wb") as f:
        f.write(b"".join(t.to_bytes(2, "little") for t in tokens))
    args = ["--model", "gpt-mini", "--dataset", path, "--steps", "12", "--batch-size", "8",
            "--set", "context=64", "--set", "dropout=0.1", "--set", "eval_every=4",
            "--set", "eval_batches=2", "--set", "log_every=4"]
    a, b = out("tokens-through"), out("tokens-resumed")
    code, text = run(args + ["--output-dir", a])
    check(code == 0 and f"tokens of {path}" in text and "vocabulary 256" in text,
          f"token file job:\n{text}")
    code, text = run(args + ["--output-dir", b, "--stop-at", "6"])
    check(code == 0, f"interrupted token file job:\n{text}")
    code, text = run(args + ["--output-dir", b, "--resume"])
    check(code == 0, f"resumed token file job:\n{text}")
    check(rows(a, "train") == rows(b, "train") and len(rows(a, "train")) == 12,
          f"training rows differ after resuming:\n{rows(a, 'train')}\n{rows(b, 'train')}")
    check(rows(a, "val") == rows(b, "val"), "evaluations differ after resuming")
    # Without the generator's state the dropout masks differ: the rows above
    # would not match (a run with another seed gives other losses).
    code, text = run(args + ["--output-dir", out("tokens-seed"), "--seed", "1"])
    check(rows(out_keep("tokens-seed"), "train")[0]["loss"] != rows(a, "train")[0]["loss"],
          "another seed gave the same first loss: dropout or the seed is not used")


def case_bpe_tokenizer():
    d = out("bpe")
    code, text = run(["--model", "gpt-mini", "--dataset", "/usr/share/common-licenses/GPL-3",
                      "--steps", "3", "--batch-size", "4", "--set", "context=32",
                      "--set", "tokenizer=bpe", "--set", "vocab_size=320",
                      "--set", "eval_batches=1", "--output-dir", d])
    check(code == 0, f"bpe job failed:\n{text}")
    check("trained a BPE vocabulary of 320 tokens" in text and "vocabulary 320" in text,
          f"bpe job output:\n{text}")
    with open(os.path.join(d, "tokenizer", "encoder.json")) as f:
        check(len(json.load(f)) == 320, "encoder.json does not hold 320 tokens")
    with open(os.path.join(d, "tokenizer", "vocab.bpe")) as f:
        merges = f.read().splitlines()
    check(merges[0] == "#version: 0.2" and len(merges) == 1 + 320 - 256,
          f"vocab.bpe has {len(merges)} lines")
    # The saved vocabulary is a tokenizer folder another job can use.
    code, text = run(["--model", "gpt-mini", "--dataset", "/usr/share/common-licenses/GPL-3",
                      "--steps", "3", "--batch-size", "4", "--set", "context=32",
                      "--set", f"tokenizer={d}/tokenizer", "--set", "eval_batches=1",
                      "--output-dir", out("bpe-reused")])
    check(code == 0 and "vocabulary 320" in text, f"reusing the vocabulary:\n{text}")


def case_no_host_compiler():
    """Without a host compiler (and an empty kernel cache) a compiled job
    stops at its first step, saying which compiler is missing and how to
    fix it; allowed to fall back, it trains on the reference executor and
    says so in its output and summary (Note [Fallbacks are said])."""
    env = dict(os.environ, CXX="/nonexistent-compiler",
               SINTER_CACHE_DIR=out("empty-kernel-cache"))
    args = [TRAIN, "--model", "mlp", "--steps", "2", "--batch-size", "8", "--set",
            "eval_batches=1"]
    for compiler in ["on", "off"]:
        d = out("no-compiler-" + compiler)
        result = subprocess.run(args + ["--compiler", compiler, "--output-dir", d], env=env,
                                capture_output=True, text=True, timeout=600)
        text = result.stdout + result.stderr
        check(result.returncode == 2, f"compiler {compiler}: exit status {result.returncode}, "
              f"expected 2:\n{text}")
        for words in ["cannot be compiled", "compiler_config.allow_fallback",
                      "CXX is '/nonexistent-compiler', which is not an executable program",
                      "set CXX to a C++ compiler"]:
            check(words in text, f"compiler {compiler}: expected {words!r} in:\n{text}")
        check(not os.path.exists(os.path.join(d, "checkpoint.safetensors")),
              f"compiler {compiler}: a stopped job wrote a checkpoint")
    d = out("no-compiler-allowed")
    job = os.path.join(SCRATCH, "allow-fallback.json")
    with open(job, "w") as f:
        json.dump({"entry_point": "mlp", "output_dir": d,
                   "compiler_config": {"enabled": True, "allow_fallback": True}}, f)
    result = subprocess.run(args + ["--config", job], env=env, capture_output=True, text=True,
                            timeout=600)
    text = result.stdout + result.stderr
    check(result.returncode == 0, f"allowed fallback: exit status {result.returncode}:\n{text}")
    check("runs on the reference executor (far slower than compiled)" in text
          and "CXX is '/nonexistent-compiler'" in text, f"no warning at the first step:\n{text}")
    check("ran on the reference executor (compiler_config.allow_fallback)" in text,
          f"the summary does not say the job fell back:\n{text}")
    if os.path.exists(os.path.join(d, "summary.json")):
        with open(os.path.join(d, "summary.json")) as f:
            summary = json.load(f)
        check(summary["fallbacks"] >= 2 and summary["compiled_steps"] == 0,
              f"summary: {summary['fallbacks']} fallbacks, {summary['compiled_steps']} compiled")
        check(any("/nonexistent-compiler" in r for r in summary["fallback_reasons"]),
              f"summary reasons {summary['fallback_reasons']}")
    else:
        check(False, f"no summary.json in {d}")


def case_check_numerics():
    """With compiler_config.check_numerics, a job whose learning rate makes
    the weights overflow stops with exit status 2 at the first kernel that
    writes a NaN, naming the step, the kernel and the lines its ops come from
    (Note [Checked numerics]), in both modes; without it, the job only sees
    the NaN loss after the step, and cannot say where it came from."""
    for compiler in ["on", "off"]:
        d = out("numerics-" + compiler)
        job = {"entry_point": "mlp", "output_dir": d,
               "compiler_config": {"enabled": compiler == "on", "check_numerics": True},
               "hyperparameters": {"batch_size": 16, "learning_rate": 1e30, "steps": 6,
                                   "eval_batches": 1}}
        code, text = run([], job, "numerics-" + compiler)
        check(code == 2, f"compiler {compiler}: exit status {code}, expected 2:\n{text}")
        for words in ["mark_step: step ", "wrote NaN at element", "Train.cpp:", "Task.cpp:"]:
            check(words in text, f"compiler {compiler}: expected {words!r} in:\n{text}")
    d = out("numerics-unchecked")
    code, text = run(["--model", "mlp", "--batch-size", "16", "--lr", "1e30", "--steps", "6",
                      "--set", "eval_batches=1", "--output-dir", d])
    check(code == 1 and "the loss is nan at step 2" in text and "wrote NaN" not in text,
          f"unchecked: exit status {code}, expected 1 and the NaN loss alone:\n{text}")



def safetensors_parts(path):
    """A safetensors file's bytes, header length, header and tensor bytes."""
    with open(path, "rb") as f:
        whole = f.read()
    length = int.from_bytes(whole[:8], "little")
    return whole, length, json.loads(whole[8:8 + length]), whole[8 + length:]


def checkpoint_step(path):
    """The step of the checkpoint at `path` after checking that it is whole:
    its header parses and its tensors' bytes end where the file does."""
    whole, length, header, _ = safetensors_parts(path)
    end = max(v["data_offsets"][1] for k, v in header.items() if k != "__metadata__")
    check(8 + length + end == len(whole),
          f"{path}: {len(whole)} bytes, its header says {8 + length + end}")
    return int(header["__metadata__"]["step"])


def tensors_of(path):
    """A safetensors file's tensors (header entries and bytes), without its
    metadata."""
    _, _, header, data = safetensors_parts(path)
    header.pop("__metadata__", None)
    return header, data


def case_kill_resume():
    """Crash-safe state: a job killed with SIGKILL at random moments, with a
    checkpoint after every step, always leaves a whole checkpoint, and
    resuming from it each time ends exactly where an uninterrupted run ends:
    the same losses and evaluations, the same parameters and optimizer
    state to the bit."""
    import random
    import signal
    import time
    args = ["--model", "mlp", "--steps", "300", "--batch-size", "32", "--set", "eval_every=100",
            "--set", "eval_batches=1", "--set", "checkpoint_every=1"]
    a, b = out("unkilled"), out("killed")
    code, text = run(args + ["--output-dir", a])
    check(code == 0, f"uninterrupted run failed:\n{text}")
    checkpoint = os.path.join(b, "checkpoint.safetensors")
    # First a kill at the one moment that leaves a whole temporary beside the
    # checkpoint, between its flush and its rename (the test fault
    # SINTER_TEST_KILL_BEFORE_RENAME: Note [Faults for tests]): the 6th
    # atomic write is the checkpoint of step 5 (the metrics log's is the
    # first). The checkpoint of step 4 stays, whole.
    killed = subprocess.run([TRAIN] + args + ["--output-dir", b], capture_output=True, text=True,
                            env=dict(os.environ, SINTER_TEST_KILL_BEFORE_RENAME="6"), timeout=300)
    check(killed.returncode == -signal.SIGKILL,
          f"the fault kills the job ({killed.returncode}):\n{killed.stdout}{killed.stderr}")
    check(checkpoint_step(checkpoint) == 4, f"the checkpoint of step {checkpoint_step(checkpoint)}")
    temporaries = [f for f in os.listdir(b) if ".tmp." in f]
    check(len(temporaries) == 1 and temporaries[0].startswith("checkpoint.safetensors.tmp.") and
          os.path.getsize(os.path.join(b, temporaries[0])) == os.path.getsize(checkpoint),
          f"one whole temporary checkpoint beside the old: {os.listdir(b)}")
    rng = random.Random(21)
    steps = []
    # Each run is killed once its checkpoint passes a step drawn at random
    # (and a few milliseconds more, so kills also land mid-write), not after
    # a random time: a warm kernel cache runs the 300 steps in about a
    # second, and kills by the clock then mostly found the job finished.
    targets = sorted(rng.sample(range(5, 295), 8))
    for target in targets:
        resume = os.path.exists(checkpoint)
        p = subprocess.Popen([TRAIN] + args + ["--output-dir", b] + (["--resume"] if resume else []),
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while p.poll() is None and time.monotonic() < deadline:
            if os.path.exists(checkpoint) and checkpoint_step(checkpoint) >= target:
                break
            time.sleep(0.002)
        time.sleep(rng.uniform(0, 0.02))
        if p.poll() is not None:
            err = p.stderr.read()
            check(p.returncode == 0, f"a run that was not killed exited with {p.returncode}: {err}")
            break
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=60)
        p.stderr.close()
        if os.path.exists(checkpoint):
            steps.append(checkpoint_step(checkpoint))
    code, text = run(args + ["--output-dir", b] + (["--resume"] if os.path.exists(checkpoint) else []))
    check(code == 0, f"the last resumed run failed:\n{text}")
    resumed_mid_run = sorted(set(s for s in steps if 0 < s < 300))
    check(len(resumed_mid_run) >= 3,
          f"only {len(resumed_mid_run)} kills fell between checkpoints mid-run: {steps}")
    check(rows(a, "train") == rows(b, "train"), "training rows differ after the kills")
    check(rows(a, "test") == rows(b, "test"), "evaluations differ after the kills")
    check(tensors_of(os.path.join(a, "checkpoint.safetensors")) == tensors_of(checkpoint),
          "the final parameters or optimizer state differ after the kills")
    check(not [f for f in os.listdir(b) if ".tmp." in f],
          f"the finished job left temporaries of the killed ones: {os.listdir(b)}")
    print(f"killed {len(steps)} times; checkpoints at steps {steps}")


def in_small_tmpfs(folder, command, size="3584k"):
    """Runs `command` with a tmpfs of `size` mounted on `folder` in a mount
    namespace of its own (root: unshare --mount; otherwise a user namespace
    as well), then copies what it left there to `folder` + "-left"; returns
    (exit status, output, the copy's folder); None where no namespace can be
    made."""
    left = folder + "-left"
    shutil.rmtree(left, ignore_errors=True)
    os.makedirs(folder, exist_ok=True)
    os.makedirs(left)
    unshare = (["unshare", "--mount", "--propagation", "private"] if os.geteuid() == 0 else
               ["unshare", "--user", "--map-root-user", "--mount"])
    probe = subprocess.run(unshare + ["true"], capture_output=True)
    if probe.returncode != 0:
        print(f"no tmpfs: cannot make a mount namespace ({probe.stderr.decode().strip()})")
        return None
    script = ('mount -t tmpfs -o size=$0 sinter-full "$1" || exit 99; shift 2; "$@"; '
              'status=$?; cp -a "$folder"/. "$left"/; exit $status')
    env = dict(os.environ, folder=folder, left=left)
    result = subprocess.run(unshare + ["sh", "-c", script, size, folder, "x"] + command, env=env,
                            capture_output=True, text=True, timeout=900)
    check(result.returncode != 99, f"mounting the tmpfs failed: {result.stderr}")
    return result.returncode, result.stdout + result.stderr, left


def case_full_disk():
    """A disk that fills up while a checkpoint is written: the job stops with
    exit status 2, naming the checkpoint, the step and the system's reason,
    says that the previous checkpoint is intact, and it is (it loads, and
    the job resumes from it); no temporary file is left behind. The disk is
    full by the atomic writer's test fault (SINTER_TEST_WRITE_LIMIT: Note
    [Faults for tests]) everywhere, and also by a small tmpfs where a mount
    namespace can be made."""
    args = ["--model", "mlp", "--steps", "40", "--batch-size", "32", "--set", "checkpoint_every=10",
            "--set", "eval_every=40", "--set", "eval_batches=1"]

    def check_stopped(code, text, left):
        check(code == 2, f"exit status {code}, expected 2:\n{text}")
        for words in ["checkpoint.safetensors: the checkpoint of step 20 was not written",
                      "No space left on device",
                      "the checkpoint of step 10 is intact there: make room and continue with "
                      "--resume"]:
            check(words in text, f"expected {words!r} in:\n{text}")
        checkpoint = os.path.join(left, "checkpoint.safetensors")
        check(os.path.exists(checkpoint) and checkpoint_step(checkpoint) == 10,
              f"the checkpoint of step 10 is not what is left: {os.listdir(left)}")
        check(not [f for f in os.listdir(left) if ".tmp." in f],
              f"temporary files left behind: {os.listdir(left)}")
        code, text = run(args + ["--output-dir", left, "--resume"])
        check(code == 0 and "at step 10" in text, f"resuming from the intact checkpoint:\n{text}")

    # One mlp checkpoint (2.4 MB) fits in 3.5 MiB; a second beside it does not.
    d = out("full-disk-fault")
    env = dict(os.environ, SINTER_TEST_WRITE_LIMIT="3584KiB")
    done = subprocess.run([TRAIN] + args + ["--output-dir", d], env=env, capture_output=True,
                          text=True, timeout=900)
    check_stopped(done.returncode, done.stdout + done.stderr, d)
    d = out("full-disk")
    result = in_small_tmpfs(d, [TRAIN] + args + ["--output-dir", d])
    if result is None:
        return
    check_stopped(*result)


def case_concurrent_cold_cache():
    """Three jobs compiling the same kernels into one empty kernel cache at
    once: each compiles or loads whole libraries only (written beside and
    renamed into place), all three train alike, and the cache holds the
    libraries and nothing half-written."""
    cache = out("cold-cache")
    env = dict(os.environ, SINTER_CACHE_DIR=cache)
    args = ["--model", "mlp", "--steps", "20", "--batch-size", "16", "--set", "eval_batches=1"]
    dirs = [out(f"cold-cache-job{i}") for i in range(3)]
    jobs = [subprocess.Popen([TRAIN] + args + ["--output-dir", d], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            for d in dirs]
    for job in jobs:
        text, _ = job.communicate(timeout=900)
        check(job.returncode == 0, f"a job on the cold cache failed:\n{text}")
    first = rows(dirs[0], "train")
    for d in dirs[1:]:
        check(rows(d, "train") == first, f"{d} trained otherwise than {dirs[0]}")
    files = sorted(os.listdir(os.path.join(cache, "kernels")))
    libraries = [f for f in files if f.endswith(".so")]
    # Each library and, beside it, a checksum marker of each compile of it
    # (Note [A kernel cache that survives crashes]); no temporary.
    check(libraries and all(f.endswith(".so") or
                            (f.endswith(".ok") and f.split(".")[0] + ".so" in libraries)
                            for f in files),
          f"the cache holds other than whole libraries and their markers: {files}")
    # A fourth job finds every kernel there: it adds none.
    warm = subprocess.run([TRAIN] + args + ["--output-dir", out("cold-cache-job3")], env=env,
                          capture_output=True, text=True, timeout=900)
    check(warm.returncode == 0, f"the job on the warm cache failed:\n{warm.stdout}{warm.stderr}")
    check(sorted(os.listdir(os.path.join(cache, "kernels"))) == files,
          "the job on the warm cache compiled kernels the cold jobs had compiled")


def safetensors_file(header, data):
    text = json.dumps(header, separators=(",", ":"))
    text += " " * ((8 - len(text) % 8) % 8)
    return len(text).to_bytes(8, "little") + text.encode() + data


def idx_file(dims, data):
    return bytes([0, 0, 8, len(dims)]) + b"".join(d.to_bytes(4, "big") for d in dims) + data


def case_bad_files():
    """docs/BAD_FILES.md: each way a file a user hands sinter-train can be
    wrong exits with status 2 and one line that names the file and what is
    wrong, and the file is left as it was."""
    import gzip
    import hashlib
    import random
    root = out("bad-files")
    os.makedirs(root)

    def write(name, data):
        path = os.path.join(root, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def digest(path):
        if os.path.isdir(path):
            return sorted((n, digest(os.path.join(path, n))) for n in os.listdir(path))
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()

    def refused(what, args, path, message, names=None):
        before = digest(path)
        code, text = run(args)
        check(code == 2, f"{what}: exit status {code}, expected 2:\n{text}")
        lines = [line for line in text.splitlines() if message in line]
        check(lines and (names or path) in lines[0],
              f"{what}: expected one line naming {names or path} and saying {message!r} in:\n"
              f"{text}")
        check(digest(path) == before, f"{what}: {path} changed")

    # Checkpoints: each a changed copy of a real one, resumed by an mlp job.
    good = out("bad-files-good")
    code, text = run(["--model", "mlp", "--steps", "2", "--batch-size", "8", "--output-dir", good])
    check(code == 0, f"the run making a checkpoint failed:\n{text}")
    whole, length, header, data = safetensors_parts(os.path.join(good, "checkpoint.safetensors"))

    def changed(edit):
        h = json.loads(json.dumps(header))
        edit(h)
        return safetensors_file(h, data)

    def meta(key, value):
        return lambda h: h["__metadata__"].__setitem__(key, value)

    def rename(old, new):
        return lambda h: h.__setitem__(new, h.pop(old))

    def rebuilt(drop, extra=()):
        """The checkpoint without the tensors whose names start with `drop`,
        with (name, dtype, shape, bytes) of `extra` added."""
        h, body = {"__metadata__": header["__metadata__"]}, b""
        kept = sorted((e["data_offsets"], n) for n, e in header.items()
                      if n != "__metadata__" and not n.startswith(drop))
        for (begin, end), name in kept:
            h[name] = dict(header[name], data_offsets=[len(body), len(body) + end - begin])
            body += data[begin:end]
        for name, dtype, shape, chunk in extra:
            h[name] = {"dtype": dtype, "shape": shape,
                       "data_offsets": [len(body), len(body) + len(chunk)]}
            body += chunk
        return safetensors_file(h, body)

    optimizer_tensors = header["__metadata__"]["optimizer_tensors"]
    weight = header["model.0.weight"]["shape"]
    checkpoints = [
        ("an older format", changed(meta("format", "sinter-train-checkpoint/1")),
         'checkpoint format "sinter-train-checkpoint/1", expected sinter-train-checkpoint/2'),
        ("no optimizer state", rebuilt("optimizer."),
         f'holds 0 optimizer tensors, its metadata "optimizer_tensors" says {optimizer_tensors}'),
        ("a tensor of no parameter", rebuilt("-", [("model.9.weight", "F32", [2], bytes(8))]),
         "holds a tensor 'model.9.weight' that is no parameter or buffer of mlp"),
        ("another dataset's fingerprint", changed(meta("data", "60000:0badf00d")),
         "was trained on other data than this job's fashion-mnist (examples and CRC-32 of a "
         "sample: 60000:0badf00d, this job's 60000:"),
        ("empty", b"", "truncated (0 bytes; the header length alone takes 8)"),
        ("truncated", whole[:len(whole) // 2], "bytes of data (truncated file?)"),
        ("header length past the end", (10 ** 9).to_bytes(8, "little") + whole[8:],
         "the header length 1000000000 runs past the end of the file"),
        ("header not JSON", whole[:8] + b"{" * length + data, "the header is not a JSON object"),
        ("sizes that overflow",
         changed(lambda h: h["model.0.weight"].__setitem__("shape", [2 ** 32, 2 ** 32])),
         "whose element count overflows"),
        ("another model's shapes",
         changed(lambda h: h["model.0.weight"].__setitem__("shape", weight[::-1])),
         f"model.0.weight is [{weight[1]}, {weight[0]}] f32, the model's [{weight[0]}, {weight[1]}] f32"),
        ("another job's model", changed(meta("entry_point", "lenet")),
         "has entry_point lenet, this job mlp"),
        ("an artifact session's state of another model",
         changed(lambda h: (meta("format", "sinter-session/1")(h), meta("model", "lenet")(h))),
         "has model lenet, this job mlp"),
        ("an artifact session's state of a program's own step",
         changed(meta("format", "sinter-session/1")),
         "is the state of an artifact of your own step (its metadata names no zoo model)"),
        ("not a sinter-train checkpoint", changed(lambda h: h.pop("__metadata__")),
         'not a sinter-train checkpoint (no "format" in its metadata)'),
        ("a step that is not a count", changed(meta("step", "two")),
         'metadata "step" is "two", not a count'),
        ("a step past the job's end", changed(meta("step", "99")),
         'metadata "step" is 99, outside this job\'s 0..2'),
        ("an optimizer index that overflows",
         changed(rename("optimizer.0.exp_avg", "optimizer.99999999999999999999.exp_avg")),
         "'99999999999999999999.exp_avg' is not \"<parameter index>.<name>\""),
    ]
    for i, (what, content, message) in enumerate(checkpoints):
        path = write(f"checkpoint{i}.safetensors", content)
        refused("checkpoint: " + what, ["--model", "mlp", "--steps", "2", "--batch-size", "8",
                                        "--output-dir", out("bad-files-run"), "--resume", path],
                path, message)
    refused("checkpoint: a folder", ["--model", "mlp", "--steps", "2", "--batch-size", "8",
                                     "--output-dir", out("bad-files-run"), "--resume", root],
            root, "is a folder, not a file")

    # IDX datasets: a small valid one, with one file changed at a time.
    rng = random.Random(5)
    pixels = lambda n, h=28, w=28: bytes(rng.randrange(256) for _ in range(n * h * w))
    labels = lambda n: bytes(rng.randrange(10) for _ in range(n))
    valid = {"train-images-idx3-ubyte.gz": idx_file([64, 28, 28], pixels(64)),
             "train-labels-idx1-ubyte.gz": idx_file([64], labels(64)),
             "t10k-images-idx3-ubyte.gz": idx_file([16, 28, 28], pixels(16)),
             "t10k-labels-idx1-ubyte.gz": idx_file([16], labels(16))}
    images, labels_file = "train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"
    datasets = [
        ("empty images", images, b"", None, "is truncated or corrupt (reading the header)"),
        ("truncated images", images, gzip.compress(valid[images])[:3000], "raw",
         "is truncated or corrupt"),
        ("not an IDX file", images, b"\x00\x00\x09\x03" + valid[images][4:], None,
         "is not an IDX file of unsigned bytes (magic 0 0 9 3)"),
        ("a header that promises 12 GiB", images, idx_file([65536, 65536, 3], b"x" * 10), None,
         "its header promises [65536, 65536, 3], 12884901888 bytes of data; it holds 10"),
        ("images of another size", images, idx_file([64, 32, 32], pixels(64, 32, 32)), None,
         "holds images of 32x32 pixels; Fashion-MNIST's are 28x28"),
        ("a label out of range", labels_file, idx_file([64], b"\xc8" + labels(63)), None,
         "label 200 of example 0 in"),
        ("labels of another count", labels_file, idx_file([60], labels(60)), None,
         "holds [64, 28, 28] and"),
    ]
    # A checkpoint of one dataset resumed with another of the same shapes.
    # idx-b: other pixels, the same labels and shapes.
    other = dict(valid, **{images: idx_file([64, 28, 28], pixels(64))})
    for name, files in (("idx-a", valid), ("idx-b", other)):
        for n, d in files.items():
            write(os.path.join(name, n), gzip.compress(d))
    first = out("bad-files-idx-a")
    code, text = run(["--model", "mlp", "--steps", "2", "--batch-size", "8", "--dataset",
                      os.path.join(root, "idx-a"), "--output-dir", first])
    check(code == 0, f"the run on idx-a failed:\n{text}")
    refused("checkpoint: resumed with another dataset of the same shapes",
            ["--model", "mlp", "--steps", "2", "--batch-size", "8", "--dataset",
             os.path.join(root, "idx-b"), "--output-dir", first, "--resume"],
            os.path.join(first, "checkpoint.safetensors"), "was trained on other data than this "
            "job's " + os.path.join(root, "idx-b"))
    for i, (what, name, content, raw, message) in enumerate(datasets):
        folder = os.path.join(root, f"idx{i}")
        for n, d in valid.items():
            write(os.path.join(f"idx{i}", n), gzip.compress(d))
        path = write(os.path.join(f"idx{i}", name), content if raw else gzip.compress(content))
        refused("IDX: " + what, ["--model", "mlp", "--steps", "2", "--batch-size", "8",
                                 "--dataset", folder, "--output-dir", out("bad-files-run")],
                path, message)

    # Token files and text for language models.
    magic = (20240520).to_bytes(4, "little", signed=True)
    llmc = lambda version, count, tokens: (magic + version.to_bytes(4, "little") +
                                           count.to_bytes(4, "little") + bytes(1012) + tokens)
    texts = [
        ("tokens.bin", b"\x01\x00\x02", "holds 3 bytes, not a whole number of uint16 tokens"),
        ("empty.bin", b"", "holds 0 bytes, not a whole number of uint16 tokens"),
        ("version2.bin", llmc(2, 4, bytes(16)), "has llm.c's header (version 2, 4 tokens)"),
        ("count.bin", llmc(1, 400, bytes(8)), "but 1032 bytes; expected version 1 and 1824 bytes"),
        ("cut.bin", llmc(1, 4, bytes(8))[:600], "starts with llm.c's magic number but holds 600"),
        ("few.bin", bytes(20), 'has 10 tokens; a context of 128 needs at least'),
        ("empty.txt", b"", "is empty"),
    ]
    # A token id past the vocabulary the job names.
    stray = write("stray.bin",
                  b"".join(t.to_bytes(2, "little") for t in list(range(300)) * 2 + [65535]))
    refused("text: a token past vocab_size",
            ["--model", "gpt-mini", "--steps", "1", "--batch-size", "2", "--dataset", stray,
             "--set", "vocab_size=512", "--set", "context=16", "--output-dir",
             out("bad-files-run")],
            stray, "token 65535 (at position 600) is not below hyperparameters.vocab_size 512")
    for name, content, message in texts:
        path = write(name, content)
        refused("text: " + name, ["--model", "gpt-mini", "--steps", "1", "--batch-size", "2",
                                  "--dataset", path, "--output-dir", out("bad-files-run")],
                path, message)

    # GPT-2 tokenizer files.
    alphabet = [chr(c) for c in range(33, 127)] + [chr(c) for c in range(161, 173)] + [
        chr(c) for c in range(174, 256)]
    alphabet += [chr(256 + n) for n in range(256 - len(alphabet))]
    encoder = {t: i for i, t in enumerate(alphabet)}
    tokenizers = [
        ("not JSON", "[1, 2", "#version: 0.2\n", "encoder.json",
         "is not a JSON object of tokens to ids"),
        ("a missing byte", json.dumps({t: i for i, t in enumerate(alphabet[1:])}),
         "#version: 0.2\n", "encoder.json", "has no token for byte"),
        ("a bad merge", json.dumps(encoder), "#version: 0.2\nab\n", "vocab.bpe",
         'vocab.bpe:2: "ab" is not a merge'),
        ("an empty vocab.bpe", json.dumps(encoder), "", "vocab.bpe",
         "vocab.bpe is empty (GPT-2's vocab.bpe holds a \"#version\" line and the merges)"),
    ]
    for i, (what, enc, bpe, bad, message) in enumerate(tokenizers):
        folder = os.path.join(root, f"tokenizer{i}")
        write(os.path.join(f"tokenizer{i}", "encoder.json"), enc.encode())
        write(os.path.join(f"tokenizer{i}", "vocab.bpe"), bpe.encode())
        refused("tokenizer: " + what,
                ["--model", "gpt-mini", "--steps", "1", "--batch-size", "2", "--dataset",
                 "/usr/share/common-licenses/GPL-3", "--set", f"tokenizer={folder}",
                 "--output-dir", out("bad-files-run")],
                os.path.join(folder, bad), message)

    # Job files and output folders.
    file = write("a-file", b"not a folder")
    refused("output_dir: a file", ["--model", "mlp", "--output-dir", file], file,
            "is a file, not a folder")
    refused("output_dir: under a file", ["--model", "mlp", "--output-dir", file + "/run"], file,
            "cannot be made: " + file + " is a file, not a folder")
    empty_job = write("empty.json", b"")
    refused("job file: empty", ["--config", empty_job], empty_job, "not valid JSON")
    twice = write("twice.json", b'{"entry_point": "mlp", "hyperparameters": {"steps": 2, '
                  b'"steps": 3}}')
    refused("job file: a key given twice", ["--config", twice], twice,
            'the key "steps" is given twice in one object')
    strange = write("strange.json", b'{"entry_point": "mlp", "compiler_config": "on"}')
    refused("job file: compiler_config not an object", ["--config", strange, "--compiler", "off"],
            strange, "must be a JSON object, got \"on\"", names="compiler_config")

def out_keep(name):
    return os.path.join(SCRATCH, name)


CASES = {name[5:]: f for name, f in globals().items() if name.startswith("case_")}
if CASE not in CASES:
    sys.exit(f"unknown case {CASE}; one of {sorted(CASES)}")
CASES[CASE]()
for failure in failures:
    print("FAILED:", failure)
sys.exit(1 if failures else 0)
