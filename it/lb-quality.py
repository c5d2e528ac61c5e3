#!/usr/bin/env python3
"""The LB-quality table: six balancers, five scenarios, several loads, against embedded or Java providers.

Four providers, one misbehaving, serve the same load through each strategy in turn, retries off
(`cluster=failfast`), a fresh reference per strategy. The table prints as markdown, the same text
docs/performance.md holds, with each cell "round 1 / round 2 / ..." (the strategies of a round run
one after another, then the next round: the spread between rounds is the noise of the machine).

    cargo build --release -p rudder-cli
    python3 it/lb-quality.py --providers embedded     # rudder demo --scenario S --concurrency C
    python3 it/lb-quality.py --providers java         # rudder bench against 4 Java Dubbo providers

| scenario | provider 0 | the others | cell |
|---|---|---|---|
| slow | answers in 10 x the base time | base time (2 ms) | p99 ms |
| failing | fails at once | base time | error share |
| stall | stalls 500 ms every 2 s | base time | p99.9 ms |
| capacity | 0 and 1 serve 8 calls at once, 2 and 3 serve 4 (2:1), equal weights | base time | p99 ms |
| equal | all alike | base time | QPS |

`--providers embedded` runs `rudder demo --scenario S --calls N --concurrency C` (rudder's own
providers inside the demo process, N = max(3000, 100 x C)) and reads its table.

`--providers java` starts a ZooKeeper (the local `rudder/zookeeper:3.8` image, see scripts/it-setup.sh)
and, per scenario, four Java Dubbo 3.3.6 providers of `it/java-provider` on loopback
(scripts/peers/start-java-provider.sh, warmup off, every `whoAmI` delayed `RUDDER_DELAY_MS`), then runs
`rudder bench --registry zookeeper://... org.rudder.it.GreetingService --method whoAmI
--loadbalance X --param cluster=failfast --concurrency C --warmup W --duration D --format json`
per strategy. The misbehaving provider: slow with `RUDDER_DELAY_MS` 10 x the base; failing with
`RUDDER_FAILING_FILE` (an `IllegalStateException`, a provider exception); stall by SIGSTOP and
SIGCONT of its JVM (stopped the first 500 ms of every 2 s, as a long GC pause would); capacity by
Dubbo's own thread pool (`-Ddubbo.protocol.threads=8` or `4`, with a queue, so extra calls wait).

Everything it starts (ZooKeeper's container, the providers) it stops, also on Ctrl-C.
"""

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PEERS = os.path.join(ROOT, "scripts", "peers")

STRATEGIES = ["random", "leastactive", "shortestresponse", "p2c", "peakewma", "prequal"]
SCENARIOS = ["slow", "failing", "stall", "capacity", "equal"]
# What each scenario's row shows: (label, key of a result, format).
METRIC = {
    "slow": ("slow: p99 ms", "p99", "{:.1f}"),
    "failing": ("failing: error share", "errors", "{:.1f} %"),
    "stall": ("stall: p99.9 ms", "p999", "{:.0f}"),
    "capacity": ("capacity 2:1: p99 ms", "p99", "{:.1f}"),
    "equal": ("equal: QPS", "qps", "{:,.0f}"),
}
SERVICE = "org.rudder.it.GreetingService"
BASE_MS = 2
READY_WITHIN_S = 120


def log(message):
    print(message, file=sys.stderr, flush=True)


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# ---------------------------------------------------------------- embedded providers


def parse_demo(text):
    """The rows of one `rudder demo --scenario S` table: {strategy: {qps, p50, p99, p999, errors}}.

    >>> parse_demo('── slow ── 4 providers, 3000 calls per strategy, 8 in flight, retries off\\n'
    ...            '  strategy                QPS    p50 ms    p99 ms  p99.9 ms   errors\\n'
    ...            '  random                2106      3.80     22.90     24.10     0.0%\\n'
    ...            '  random+outlier        1970      3.81     26.80     27.00     0.4%\\n')['random']
    {'qps': 2106.0, 'p50': 3.8, 'p99': 22.9, 'p999': 24.1, 'errors': 0.0}
    """
    rows = {}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) != 6 or not fields[5].endswith("%"):
            continue
        try:
            numbers = [float(f) for f in fields[1:5]] + [float(fields[5][:-1])]
        except ValueError:
            continue
        rows[fields[0]] = dict(zip(["qps", "p50", "p99", "p999", "errors"], numbers))
    return rows


def run_embedded(args, scenario, concurrency):
    calls = max(3000, 100 * concurrency)
    command = [args.rudder, "demo", "--scenario", scenario, "--calls", str(calls),
               "--concurrency", str(concurrency)]
    out = subprocess.run(command, capture_output=True, text=True, timeout=1800, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed: {out.stderr.strip()}")
    rows = parse_demo(out.stdout)
    missing = [s for s in args.strategies if s not in rows]
    if missing:
        raise RuntimeError(f"{' '.join(command)} printed no row for {missing}:\n{out.stdout}")
    return {s: rows[s] for s in args.strategies}


def embedded(args):
    results = {}
    for scenario in args.scenarios:
        for concurrency in args.concurrency:
            for round_ in range(args.rounds):
                log(f"embedded {scenario} at {concurrency} in flight, round {round_ + 1}")
                for strategy, row in run_embedded(args, scenario, concurrency).items():
                    results.setdefault((scenario, concurrency, strategy), []).append(row)
    return results


# ---------------------------------------------------------------- Java providers


class Processes:
    """Whatever this run started, stopped in reverse order at the end."""

    def __init__(self):
        self.children = []
        self.containers = []

    def stop_children(self):
        for child in reversed(self.children):
            if child.poll() is None:
                os.kill(child.pid, signal.SIGCONT)
                child.terminate()
        for child in self.children:
            try:
                child.wait(timeout=15)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait(timeout=15)
        self.children = []

    def stop_all(self):
        self.stop_children()
        for name in self.containers:
            subprocess.run(["docker", "rm", "-f", name], capture_output=True, check=False)
        self.containers = []


def start_zookeeper(processes):
    image = os.environ.get("RUDDER_ZK_IMAGE", "rudder/zookeeper:3.8")
    port = free_port()
    name = f"rudder-lb-quality-{port}"
    subprocess.run(["docker", "run", "-d", "--rm", "--network", "host", "--name", name,
                    "-e", f"ZK_PORT={port}", image], check=True, capture_output=True)
    processes.containers.append(name)
    subprocess.run([sys.executable, os.path.join(PEERS, "wait-zookeeper.py"), str(port), "60"],
                   check=True)
    return f"127.0.0.1:{port}"


def provider_settings(scenario, index, failing_file):
    """Environment and JVM flags of Java provider `index` in `scenario`."""
    odd = index == 0
    env = {"RUDDER_DELAY_MS": str(BASE_MS * 10 if scenario == "slow" and odd else BASE_MS)}
    if scenario == "failing" and odd:
        env["RUDDER_FAILING_FILE"] = failing_file
    # Dubbo's own pool: so many calls served at once, the rest queued (not rejected).
    threads = (8 if index < 2 else 4) if scenario == "capacity" else 200
    opts = os.environ.get("RUDDER_JAVA_OPTS", "-Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1")
    env["RUDDER_JAVA_OPTS"] = (f"{opts} -Ddubbo.protocol.threads={threads}"
                               " -Ddubbo.protocol.queues=100000")
    return env


def start_provider(processes, zookeeper, scenario, index, failing_file):
    port = free_port()
    env = dict(os.environ, RUDDER_ZK_ADDRESS=zookeeper, RUDDER_DUBBO_PORT=str(port),
               RUDDER_INSTANCE=f"java-{index}", RUDDER_WARMUP="0",
               **provider_settings(scenario, index, failing_file))
    child = subprocess.Popen(["bash", os.path.join(PEERS, "start-java-provider.sh")], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    processes.children.append(child)
    deadline = time.monotonic() + READY_WITHIN_S
    ready = threading.Event()

    def watch():
        for line in child.stdout:
            if line.startswith("READY "):
                ready.set()
        # Keep reading so the pipe never fills.

    threading.Thread(target=watch, daemon=True).start()
    if not ready.wait(max(0.0, deadline - time.monotonic())):
        raise RuntimeError(f"Java provider {index} not ready within {READY_WITHIN_S} s")
    return child


def stall_loop(pid, stop):
    """SIGSTOP for the first 500 ms of every 2 s, SIGCONT for the rest, until `stop` is set."""
    started = time.monotonic()
    while not stop.is_set():
        phase = (time.monotonic() - started) % 2.0
        if phase < 0.5:
            os.kill(pid, signal.SIGSTOP)
            stop.wait(0.5 - phase)
            os.kill(pid, signal.SIGCONT)
        else:
            stop.wait(2.0 - phase)
    os.kill(pid, signal.SIGCONT)


def bench(args, zookeeper, strategy, concurrency):
    command = [args.rudder, "bench", "--registry", f"zookeeper://{zookeeper}", SERVICE,
               "--method", "whoAmI", "--loadbalance", strategy, "--param", "cluster=failfast",
               "--concurrency", str(concurrency), "--warmup", str(args.warmup),
               "--duration", args.duration, "--timeout", "2000", "--max-error-rate", "1",
               "--format", "json"]
    out = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    if out.returncode != 0 or not out.stdout.strip():
        raise RuntimeError(f"{' '.join(command)} failed ({out.returncode}): {out.stderr.strip()}")
    report = json.loads(out.stdout.strip().splitlines()[-1])
    latency = report["latency_ms"]
    return {"qps": report["qps"], "p50": latency["p50"], "p99": latency["p99"],
            "p999": latency["p999"], "errors": 100.0 * report["errors"] / max(1, report["calls"])}


def java(args):
    processes = Processes()
    results = {}
    failing = tempfile.NamedTemporaryFile(prefix="rudder-lb-quality-failing-")
    try:
        zookeeper = start_zookeeper(processes)
        for scenario in args.scenarios:
            log(f"java {scenario}: starting 4 providers")
            children = [start_provider(processes, zookeeper, scenario, i, failing.name)
                        for i in range(4)]
            stop = threading.Event()
            staller = None
            if scenario == "stall":
                staller = threading.Thread(target=stall_loop, args=(children[0].pid, stop))
                staller.start()
            try:
                for concurrency in args.concurrency:
                    for round_ in range(args.rounds):
                        log(f"java {scenario} at {concurrency} in flight, round {round_ + 1}")
                        for strategy in args.strategies:
                            row = bench(args, zookeeper, strategy, concurrency)
                            results.setdefault((scenario, concurrency, strategy), []).append(row)
            finally:
                stop.set()
                if staller:
                    staller.join()
                processes.stop_children()
    finally:
        processes.stop_all()
        failing.close()
    return results


# ---------------------------------------------------------------- the table


def cell(rows, key, fmt):
    """ "a / b": one figure per round.

    >>> cell([{'p99': 4.04}, {'p99': 12.96}], 'p99', '{:.1f}')
    '4.0 / 13.0'
    """
    return " / ".join(fmt.format(r[key]) for r in rows)


def table(args, results):
    head = "| scenario | in flight | " + " | ".join(args.strategies) + " |"
    lines = [head, "|" + "---|" * (len(args.strategies) + 2)]
    for scenario in args.scenarios:
        label, key, fmt = METRIC[scenario]
        for concurrency in args.concurrency:
            cells = [cell(results[(scenario, concurrency, s)], key, fmt) for s in args.strategies]
            lines.append(f"| {label} | {concurrency} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def goals(args, results):
    """The goals as ratios per round: slow p99 ÷ random's (≤ 0.50), equal QPS ÷ the best (≥ 0.90)."""
    lines = ["| goal | in flight | " + " | ".join(args.strategies) + " |",
             "|" + "---|" * (len(args.strategies) + 2)]
    if "slow" in args.scenarios and "random" in args.strategies:
        for c in args.concurrency:
            base = results[("slow", c, "random")]
            cells = [" / ".join(f"{r['p99'] / b['p99']:.2f}"
                                for r, b in zip(results[("slow", c, s)], base))
                     for s in args.strategies]
            lines.append(f"| slow p99 ÷ random's (≤ 0.50) | {c} | " + " | ".join(cells) + " |")
    if "equal" in args.scenarios:
        for c in args.concurrency:
            best = [max(results[("equal", c, s)][i]["qps"] for s in args.strategies)
                    for i in range(args.rounds)]
            cells = [" / ".join(f"{r['qps'] / b:.2f}"
                                for r, b in zip(results[("equal", c, s)], best))
                     for s in args.strategies]
            lines.append(f"| equal QPS ÷ the best (≥ 0.90) | {c} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--providers", choices=["embedded", "java"], required=True)
    parser.add_argument("--rudder", default=os.path.join(ROOT, "target", "release", "rudder"),
                        help="the rudder binary (default: the workspace's release build)")
    parser.add_argument("--concurrency", default="8,32,128", help="calls in flight, comma-separated")
    parser.add_argument("--rounds", type=int, default=2, help="runs of every cell (default 2)")
    parser.add_argument("--scenarios", default=",".join(SCENARIOS))
    parser.add_argument("--strategies", default=",".join(STRATEGIES))
    parser.add_argument("--duration", default="3s", help="java: measured time per strategy")
    parser.add_argument("--warmup", type=int, default=200, help="java: calls before measuring")
    parser.add_argument("--raw", help="also write every result as JSON to this file")
    args = parser.parse_args()
    args.concurrency = [int(c) for c in args.concurrency.split(",")]
    args.scenarios = args.scenarios.split(",")
    args.strategies = args.strategies.split(",")
    if not (set(args.scenarios) <= set(SCENARIOS)) or args.rounds < 1:
        parser.error(f"scenarios are {SCENARIOS}; rounds at least 1")
    if not os.path.exists(args.rudder):
        parser.error(f"{args.rudder} is missing: cargo build --release -p rudder-cli")
    # Ctrl-C and SIGTERM unwind through the `finally` blocks that stop what was started.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    started = time.monotonic()
    results = embedded(args) if args.providers == "embedded" else java(args)
    if args.raw:
        with open(args.raw, "w", encoding="utf-8") as raw:
            json.dump([{"scenario": k[0], "concurrency": k[1], "strategy": k[2], "rounds": v}
                       for k, v in results.items()], raw, indent=1)
    print(table(args, results))
    print()
    print(goals(args, results))
    log(f"done in {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
