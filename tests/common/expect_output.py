#!/usr/bin/env python3
"""Runs a command and checks its exit status and its output, both.

    expect_output.py [--status N] [--regex RE]... [--gtest-filter F] -- COMMAND...

ctest's PASS_REGULAR_EXPRESSION ignores the exit status, so a tool that
prints the expected text and then exits 1 would pass; this runs COMMAND,
prints its output, and exits 1 unless the status is N (default 0) and every
RE (Python syntax, searched in stdout and stderr together, `.` matching
newlines as in CMake's regular expressions) is found.

With --gtest-filter F, COMMAND is a GoogleTest binary: every positive
pattern of F must select at least one test (so that a renamed test cannot
leave a filtered run testing nothing), and F is passed on to the run.
"""
import argparse
import re
import subprocess
import sys


def listed(binary, pattern):
    result = subprocess.run(binary + ["--gtest_list_tests", "--gtest_filter=" + pattern],
                            capture_output=True, text=True, timeout=120)
    return [line for line in result.stdout.splitlines() if line.startswith("  ")]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--status", type=int, default=0)
    parser.add_argument("--regex", action="append", default=[])
    parser.add_argument("--gtest-filter")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        sys.exit("expect_output.py: no command")
    failures = []
    if args.gtest_filter is not None:
        positive = args.gtest_filter.split("-", 1)[0]
        for pattern in filter(None, positive.split(":")):
            if not listed(command, pattern):
                failures.append(f"--gtest_filter pattern {pattern!r} selects no test")
        command = command + ["--gtest_filter=" + args.gtest_filter]
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            errors="replace")
    sys.stdout.write(result.stdout)
    if result.returncode != args.status:
        failures.append(f"exit status {result.returncode}, expected {args.status}")
    for expression in args.regex:
        if not re.search(expression, result.stdout, re.DOTALL):
            failures.append(f"no match for {expression!r} in the output")
    for failure in failures:
        print("expect_output.py: FAILED:", failure)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
