"""The peer model of docs/benchmarks.md: "Ansible as a controller" the way operator-sdk's Ansible operator does it,
built from kopf and ansible-runner (operator-sdk's Go module is not served here).

- kopf watches KeystoneUser (cluster-wide) and the Secrets its playbook writes (every one carries the label
  ``c5c3.io/keystoneuser-name``; operator-sdk watches the resources a role created, by owner reference, the same way);
- every event puts the order's key on a work queue with controller-runtime's semantics: a key is queued at most once,
  never reconciled by two workers at once, and an event during its run queues it once more after it;
- ``--workers`` workers (operator-sdk's ``--max-concurrent-reconciles`` default: the number of CPUs) take keys and run
  ``ansible_runner.run`` with ``reconcile.yml`` -- the first round's naive kubernetes.core playbook limited to that one
  order -- in a fresh ``ansible-playbook``;
- after every run, and for every order seen, the key is queued again after ``--period`` seconds: operator-sdk's
  Ansible operator requeues a custom resource after its reconcile period, ``reconcilePeriod`` in watches.yaml,
  which defaults to the ``--reconcile-period`` flag: 10 h (ansible-operator-plugins, internal/ansible/flags/flag.go);
- ``--adopt``: the orders and Secrets the first listing finds are taken as reconciled already (the benchmark starts
  the peer over orders our module converged, with the same objects); only their resync is scheduled.

It writes no status (operator-sdk's would write a Running/Successful condition per run), no finalizer (kopf's timers
and daemons would add one to every order: the resync is a plain thread instead) and posts no Kubernetes Events.
One JSON line per run goes to ``<state-dir>/runs.jsonl``; ``<state-dir>/state.json`` says every second what is
known, queued and running.

    python benchmarks/peer/kopf_operator.py --kubeconfig KUBECONFIG --state-dir DIR [--adopt] [--workers N]
"""
import argparse
import collections
import heapq
import json
import logging
import os
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
PLAYBOOK = HERE / "reconcile.yml"
RECONCILE_PERIOD = 10 * 3600.0
NAME_LABEL, NS_LABEL = "c5c3.io/keystoneuser-name", "c5c3.io/keystoneuser-namespace"


class WorkQueue:
    """controller-runtime's work queue, for order keys: deduplicated, one worker per key, dirty keys requeued."""

    def __init__(self):
        self.cond = threading.Condition()
        self.queue = collections.deque()
        self.queued, self.processing, self.dirty = set(), set(), {}

    def add(self, key, trigger):
        with self.cond:
            if key in self.queued:
                return
            if key in self.processing:
                self.dirty.setdefault(key, trigger)
                return
            self.queued.add(key)
            self.queue.append((key, trigger, time.time()))
            self.cond.notify()

    def get(self):
        with self.cond:
            while not self.queue:
                self.cond.wait()
            key, trigger, queued = self.queue.popleft()
            self.queued.discard(key)
            self.processing.add(key)
            return key, trigger, queued

    def done(self, key):
        with self.cond:
            self.processing.discard(key)
            trigger = self.dirty.pop(key, None)
        if trigger is not None:
            self.add(key, trigger)

    def sizes(self):
        with self.cond:
            return len(self.queue), len(self.processing)


class Peer:
    def __init__(self, args):
        self.args = args
        self.state_dir = Path(args.state_dir).resolve()
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.queue = WorkQueue()
        self.known = set()
        self.resyncs = []  # heap of (due, key)
        self.lock = threading.Lock()
        self.adopted = 0
        self.runs = 0
        self.seq = 0
        self.env = {
            "ANSIBLE_COLLECTIONS_PATH": f"{REPO / '.collections-deps'}:{REPO / '.collections'}",
            "ANSIBLE_PIPELINING": "true",
            "ANSIBLE_HOST_KEY_CHECKING": "false",
            "ANSIBLE_RETRY_FILES_ENABLED": "false",
            "ANSIBLE_NOCOLOR": "1",
            "K8S_AUTH_KUBECONFIG": args.kubeconfig,
            # ansible-playbook of this venv (ansible-runner looks it up on PATH)
            "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
            "TMPDIR": str(self.state_dir / "tmp"),
            "ANSIBLE_LOCAL_TEMP": str(self.state_dir / "tmp"),
        }
        for folder in ("tmp", "runner"):
            (self.state_dir / folder).mkdir(exist_ok=True)
        if args.request_log:  # each module process appends its request count (../baseline/counting)
            self.env.update(PYTHONPATH=str(REPO / "benchmarks" / "baseline" / "counting"),
                            C5C3_BENCH_REQUEST_LOG=args.request_log)

    # events ------------------------------------------------------------------------------------------------
    def order_event(self, event_type, body):
        key = (body["metadata"]["namespace"], body["metadata"]["name"])
        if event_type == "DELETED":
            with self.lock:
                self.known.discard(key)
            return
        with self.lock:
            new = key not in self.known
            self.known.add(key)
        if event_type is None and self.args.adopt:  # found by the first listing: reconciled already
            with self.lock:
                self.adopted += 1
            if new:
                self.resync_after(key, self.args.period)
            return
        self.queue.add(key, event_type or "listed")

    def secret_event(self, event_type, body):
        if event_type is None and self.args.adopt:
            return
        labels = body["metadata"].get("labels") or {}
        key = (labels.get(NS_LABEL) or body["metadata"]["namespace"], labels.get(NAME_LABEL))
        with self.lock:
            known = key in self.known
        if known:
            self.queue.add(key, f"secret {event_type or 'listed'}")

    # resync ------------------------------------------------------------------------------------------------
    def resync_after(self, key, delay):
        with self.lock:
            heapq.heappush(self.resyncs, (time.time() + delay, key))

    def resync_now(self):
        """The benchmark's probe (a file ``resync-now`` holding K): the first K known orders are due for their resync
        at once, so the cost of a resync run is measured on converged orders instead of assumed."""
        trigger = self.state_dir / "resync-now"
        try:
            count = int(trigger.read_text().strip() or 0)
        except (OSError, ValueError):
            return
        trigger.unlink(missing_ok=True)
        with self.lock:
            keys = sorted(self.known)[:count]
        for key in keys:
            self.queue.add(key, "resync")

    def resync_loop(self):
        while True:
            self.resync_now()
            with self.lock:
                due = [heapq.heappop(self.resyncs) for _ in range(len(self.resyncs))
                       if self.resyncs and self.resyncs[0][0] <= time.time()]
                wait = self.resyncs[0][0] - time.time() if self.resyncs else 1.0
            for _due, key in due:
                with self.lock:
                    known = key in self.known
                if known:
                    self.queue.add(key, "resync")
            time.sleep(max(0.05, min(wait, 1.0)))

    # workers -----------------------------------------------------------------------------------------------
    def worker(self):
        import ansible_runner
        while True:
            key, trigger, queued = self.queue.get()
            with self.lock:
                self.seq += 1
                ident = f"{self.seq}-{key[0]}-{key[1]}"
            started = time.time()
            try:
                run = ansible_runner.run(
                    private_data_dir=str(self.state_dir / "runner"), playbook=str(PLAYBOOK), ident=ident,
                    extravars={"order_meta": {"namespace": key[0], "name": key[1]},
                               "ansible_python_interpreter": sys.executable},
                    envvars=self.env, quiet=True, rotate_artifacts=10, suppress_env_files=True)
                rc, status = run.rc, run.status
            except Exception as exc:  # noqa: BLE001 - a failed run is requeued like operator-sdk's
                rc, status = None, f"error: {type(exc).__name__}: {str(exc)[:200]}"
            ended = time.time()
            with self.lock:
                self.runs += 1
                with open(self.state_dir / "runs.jsonl", "a") as fh:
                    fh.write(json.dumps({"key": f"{key[0]}/{key[1]}", "trigger": trigger, "queued": round(queued, 3),
                                         "started": round(started, 3), "ended": round(ended, 3), "rc": rc,
                                         "status": status}) + "\n")
            self.resync_after(key, self.args.period if rc == 0 else 5.0)
            self.queue.done(key)

    def state_loop(self):
        path = self.state_dir / "state.json"
        while True:
            queued, processing = self.queue.sizes()
            with self.lock:
                state = {"time": time.time(), "known": len(self.known), "adopted": self.adopted, "runs": self.runs,
                         "queued": queued, "processing": processing, "resyncs": len(self.resyncs)}
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(state))
            tmp.replace(path)
            time.sleep(0.5)

    def start_threads(self):
        for target in [self.worker] * self.args.workers + [self.resync_loop, self.state_loop]:
            threading.Thread(target=target, daemon=True).start()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--state-dir", required=True)
    parser.add_argument("--adopt", action="store_true", help="orders and Secrets of the first listing are converged")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                        help="concurrent reconciles (operator-sdk's default: the number of CPUs)")
    parser.add_argument("--period", type=float, default=RECONCILE_PERIOD,
                        help="resync period in seconds (operator-sdk's Ansible operator default: 10 h)")
    parser.add_argument("--request-log", help="file the playbook's module processes append their request counts to")
    args = parser.parse_args(argv)
    os.environ["KUBECONFIG"] = os.path.abspath(args.kubeconfig)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")

    import kopf
    peer = Peer(args)

    @kopf.on.startup()
    def configure(settings: kopf.OperatorSettings, **_):
        settings.posting.enabled = False
        peer.start_threads()
        logging.getLogger("peer").info("peer: %d workers, resync every %.0f s", args.workers, args.period)

    @kopf.on.event("c5c3.io", "v1alpha1", "keystoneusers")
    def on_order(type, body, **_):  # noqa: A002 - kopf's keyword
        peer.order_event(type, body)

    @kopf.on.event("secrets", labels={NAME_LABEL: kopf.PRESENT})
    def on_secret(type, body, **_):  # noqa: A002 - kopf's keyword
        peer.secret_event(type, body)

    kopf.run(standalone=True, clusterwide=True)


if __name__ == "__main__":
    main()
