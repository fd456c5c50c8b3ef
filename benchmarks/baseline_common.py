"""What benchmarks/torch_baseline.py and jax_baseline.py share: their command
line (the model, batch and weights sinter-bench used) and the peak-memory
bound both report."""
import argparse
import resource


def parse_args(doc, models=None, devices=("cpu",)):
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--device", default="cpu", choices=devices)
    parser.add_argument("--model", default="gpt-mini", choices=models)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--length", type=int, default=128)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--weights", required=True,
                        help="folder written by sinter-bench --dump-weights")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.steps <= 0 or args.warmup < 0 or args.threads <= 0 or args.batch_size <= 0:
        parser.error("--steps, --threads and --batch-size must be positive, --warmup not negative")
    return args


def peak_rss_bytes():
    """The process's peak resident set so far (the frameworks' CPU allocators
    keep no counter of their own)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
