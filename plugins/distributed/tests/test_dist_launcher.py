"""torchplugrun: torchrun's environment per rank, several hosts, -m, and its argument checks."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from _dist_launch import torchplugrun
from torchplug_distributed.distributed import run as launcher


def _envs(proc) -> list[dict]:
    assert proc.returncode == 0, proc.stderr
    envs = [json.loads(line[4:]) for line in proc.stdout.splitlines() if line.startswith("ENV ")]
    return sorted(envs, key=lambda e: int(e["RANK"]))


def test_torchrun_environment():
    envs = _envs(torchplugrun("--nproc-per-node", "2", "--master-port", "29123", "env.py", "--lr", "0.1"))
    assert [e["RANK"] for e in envs] == ["0", "1"]
    assert [e["LOCAL_RANK"] for e in envs] == ["0", "1"]
    assert {e["WORLD_SIZE"] for e in envs} == {"2"} and {e["LOCAL_WORLD_SIZE"] for e in envs} == {"2"}
    assert {e["MASTER_ADDR"] for e in envs} == {"127.0.0.1"} and {e["MASTER_PORT"] for e in envs} == {"29123"}
    assert len({e["TORCHELASTIC_RUN_ID"] for e in envs}) == 1
    assert all(e["argv"] == ["--lr", "0.1"] and e["name"] == "__main__" for e in envs)


def test_two_hosts_on_one_machine():
    # two names of this machine stand for two hosts: MPI places 2 ranks on each
    envs = _envs(torchplugrun("--nnodes", "2", "--nproc-per-node", "2", "--hosts", "localhost,127.0.0.1", "env.py"))
    assert [e["RANK"] for e in envs] == ["0", "1", "2", "3"]
    assert [e["LOCAL_RANK"] for e in envs] == ["0", "1", "0", "1"]
    assert [e["GROUP_RANK"] for e in envs] == ["0", "0", "1", "1"]
    assert {e["WORLD_SIZE"] for e in envs} == {"4"} and {e["LOCAL_WORLD_SIZE"] for e in envs} == {"2"}


def test_module_target(tmp_path, monkeypatch):
    envs = _envs(torchplugrun("--nproc-per-node", "2", "-m", "env", "x"))
    assert len(envs) == 2 and all(e["argv"] == ["x"] and e["name"] == "__main__" for e in envs)


def test_argument_errors(capsys):
    with pytest.raises(SystemExit):
        launcher.parse_args(["--nnodes", "2", "train.py"])
    assert "--nnodes 2 needs the hosts" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        launcher.parse_args(["--nnodes", "2", "--hosts", "a,b,c", "train.py"])
    assert "--nnodes 2 but 3 hosts were given" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        launcher.parse_args(["--max-restarts", "3", "train.py"])
    assert "--max-restarts is not supported" in capsys.readouterr().err


def test_mpiexec_command():
    args = launcher.parse_args(["--nnodes", "1:2", "--nproc-per-node", "3", "--hosts", "h1,h2", "-m", "pkg.train",
                                "--epochs", "2"])
    cmd = launcher.mpiexec_command(args, "mpiexec")
    assert cmd[:5] == ["mpiexec", "-n", "6", "-hosts", "h1:3,h2:3"]
    assert cmd[5:] == [sys.executable, "-m", "torchplug_distributed.distributed._worker", "-m", "pkg.train",
                       "--epochs", "2"]


def test_launcher_stops_ranks_the_process_manager_left_running(tmp_path, monkeypatch):
    """A rank reported its failure but the process manager keeps the job alive: the launcher ends it."""
    import os
    import subprocess
    import time

    fake_job = tmp_path / "job.py"
    fake_job.write_text(
        "import json, os, subprocess, sys, time\n"
        "d = sys.argv[1]\n"
        "rank1 = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "json.dump({'rank': 1, 'local_rank': 1, 'hostname': os.uname().nodename, 'pid': rank1.pid},\n"
        "          open(os.path.join(d, 'pid-rank1.json'), 'w'))\n"
        "json.dump({'rank': 0}, open(os.path.join(d, 'error-rank0.json'), 'w'))\n"
        "print(rank1.pid, flush=True)\n"
        "time.sleep(60)\n")
    monkeypatch.setattr(launcher, "STOP_GRACE_S", 0.5)
    start = time.monotonic()
    code, _ = launcher._run_forwarding([sys.executable, str(fake_job), str(tmp_path)], dict(os.environ),
                                       str(tmp_path))
    assert time.monotonic() - start < 20
    assert code != 0
    with open(tmp_path / "pid-rank1.json") as f:
        rank1 = json.load(f)["pid"]
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:  # killed; reaped by init once the fake mpiexec is gone
        try:
            os.kill(rank1, 0)
        except ProcessLookupError:
            break
        if Path(f"/proc/{rank1}/stat").read_text().split()[2] == "Z":
            break
        time.sleep(0.1)
    else:
        subprocess.run(["kill", "-9", str(rank1)])
        raise AssertionError("the rank left running was not stopped")
