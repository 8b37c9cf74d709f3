#!/usr/bin/env python3
"""Runs weft programs under Open MPI's mpirun, two ranks, each bound to a core.

  mpirun_check.py ranks MPIRUN WEFT_CLI PROBE
      checks that each rank's `weft topo --json` sees only the CPUs of the
      one core mpirun bound it to, that the two ranks got different cores,
      and that weft's default pool in each rank has one worker per such CPU
      (one worker on a machine without SMT).
  mpirun_check.py run MPIRUN PROGRAM [ARGS...]
      runs PROGRAM on the two ranks (the MPI example); its status is ours.
      With fewer than two allowed cores it adds --oversubscribe and binds
      nothing (--bind-to none), since Open MPI refuses to bind two ranks to
      one core: the example checks the reduction, not the binding.

The flags given to mpirun, and why each:
  -np 2                two ranks, the fewest that can show them apart.
  --bind-to core       each rank bound to its own core, as a cluster job
                       binds; Open MPI already binds to cores for two ranks,
                       but the test must not rest on a default.
  --allow-run-as-root  mpirun refuses to start as root without it (CI
                       containers run as root); it changes nothing otherwise.
Not given to `ranks`: --oversubscribe. Open MPI counts one slot per allowed
core, so it is needed only with fewer than two cores, and there the ranks
cannot be bound apart and the check would prove nothing: the test is skipped
instead (exit 77) and says so. Nor --mca options: the shared-memory
transport works in containers here (no ptrace restriction on the single-copy
path was met); if it fails, the rank's error is in the output.

Every mpirun has a time limit; when it expires mpirun is sent SIGTERM (it
kills its ranks), then its whole process group SIGKILL, so a stuck rank
fails the test instead of hanging it.
"""
import json
import os
import pathlib
import signal
import subprocess
import sys
import tempfile

SKIP = 77
RANKS = 2
TIME_LIMIT_S = 60
MPIRUN_FLAGS = ["-np", str(RANKS), "--bind-to", "core", "--allow-run-as-root"]


def run(cmd, **kwargs):
    """Runs cmd in its own process group; kills the group if it overruns."""
    proc = subprocess.Popen(cmd, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, **kwargs)
    try:
        out, _ = proc.communicate(timeout=TIME_LIMIT_S)
    except subprocess.TimeoutExpired:
        proc.terminate()
        try:
            out, _ = proc.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
        sys.exit(f"timed out after {TIME_LIMIT_S} s: {' '.join(cmd)}\n{out}")
    return proc.returncode, out


def allowed_cores():
    """The cores (package, core id) this process may run on, as Open MPI counts slots."""
    cores = set()
    for cpu in os.sched_getaffinity(0):
        topology = pathlib.Path(f"/sys/devices/system/cpu/cpu{cpu}/topology")
        try:
            cores.add(((topology / "physical_package_id").read_text(), (topology / "core_id").read_text()))
        except OSError:  # no sysfs topology: count the CPU as a core
            cores.add(("cpu", cpu))
    return len(cores)


def mpirun(mpirun_path, program, flags=MPIRUN_FLAGS):
    code, out = run([mpirun_path, *flags, *program])
    if code != 0:
        sys.exit(f"mpirun exited {code}: {' '.join(program)}\n{out}")
    return out


def topo(weft_cli):
    code, out = run([weft_cli, "topo", "--json"])
    if code != 0:
        sys.exit(f"weft topo --json exited {code}\n{out}")
    return json.loads(out)


def check_ranks(mpirun_path, weft_cli, probe):
    if allowed_cores() < RANKS:
        print(f"skipped: {RANKS} ranks need {RANKS} allowed cores to be bound apart; "
              f"this process may use {allowed_cores()} (CPUs {sorted(os.sched_getaffinity(0))})")
        return SKIP
    cores = [sorted(c["cpus"]) for c in topo(weft_cli)["core_list"]]
    with tempfile.TemporaryDirectory(prefix="weft-mpi-") as d:
        out = pathlib.Path(d)
        # A file per rank: the ranks' stdout would interleave.
        mpirun(mpirun_path, ["sh", "-c", 'exec "$0" topo --json > "$1/topo.$OMPI_COMM_WORLD_RANK.json"',
                             weft_cli, d])
        mpirun(mpirun_path, [probe, d])
        seen = []
        for rank in range(RANKS):
            t = json.loads((out / f"topo.{rank}.json").read_text())
            p = json.loads((out / f"probe.{rank}.json").read_text())
            cpus = sorted(t["allowed_cpus"])
            print(f"rank {rank}: weft topo sees CPUs {cpus}; default pool has {p['default_pool_workers']} workers")
            if cpus not in cores:
                sys.exit(f"rank {rank} sees CPUs {cpus}, which are not exactly one core's (cores: {cores})")
            if cpus in seen:
                sys.exit(f"rank {rank} was given the same core as another rank: {cpus}")
            seen.append(cpus)
            if sorted(p["allowed_cpus"]) != cpus:
                sys.exit(f"rank {rank}: the library sees CPUs {p['allowed_cpus']}, weft topo {cpus}")
            if p["default_pool_workers"] != t["available_parallelism"] or t["available_parallelism"] > len(cpus):
                sys.exit(f"rank {rank}: default pool has {p['default_pool_workers']} workers on CPUs {cpus} "
                         f"(available_parallelism {t['available_parallelism']})")
    print("each rank keeps to its own core")
    return 0


def main(argv):
    if len(argv) == 5 and argv[1] == "ranks":
        return check_ranks(argv[2], argv[3], argv[4])
    if len(argv) >= 4 and argv[1] == "run":
        flags = MPIRUN_FLAGS
        if allowed_cores() < RANKS:
            flags = ["-np", str(RANKS), "--oversubscribe", "--bind-to", "none", "--allow-run-as-root"]
        print(mpirun(argv[2], argv[3:], flags), end="")
        return 0
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
