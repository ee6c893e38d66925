"""schemaguard on a real Spark cluster: a standalone master and one worker started from pyspark's
own distribution on loopback, then `sg.scan(engine="spark")`, `sg.check` with a data proof and
`spark-submit jobs/lake_audit.py` against `spark://127.0.0.1:PORT`. The tasks must run on the
worker (its work folder holds the application's executor), and every result must equal the local
engine's: versions, files, findings, proofs."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pyspark
import pytest

from schemaguard.demo import build_demo_lake
from schemaguard.spark import delta_jars
from tests.helpers import SCHEMAGUARD

pytestmark = [pytest.mark.spark, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[1]
SPARK_HOME = Path(pyspark.__file__).parent
CLASS = str(SPARK_HOME / "bin" / "spark-class")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def master_status(ui: int) -> dict[str, object] | None:
    """The master's status from its JSON endpoint, or None while nothing (or something else) answers."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=5) as answer:
            status = json.load(answer)
    except (OSError, ValueError):
        return None
    return status if isinstance(status, dict) else None


def start_master(env: dict[str, str], seconds: float = 120) -> tuple[subprocess.Popen[bytes], str, int]:
    """A master on two free ports that it really holds.

    Under xdist another worker's Spark may take a port between `free_port()` and the master's bind;
    Spark would then quietly move to the next port, so the master is started with no retries and the
    whole start is tried again on fresh ports when it cannot bind.
    """
    for _ in range(5):
        port, ui = free_port(), free_port()
        url = f"spark://127.0.0.1:{port}"
        master = subprocess.Popen([CLASS, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                                   "--port", str(port), "--webui-port", str(ui)],
                                  env={**env, "SPARK_MASTER_OPTS": "-Dspark.port.maxRetries=0"},
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + seconds
        while master.poll() is None and time.monotonic() < deadline:
            status = master_status(ui)
            if status is not None and status.get("url") == url:
                return master, url, ui
            time.sleep(0.3)
        master.kill()
        master.wait(timeout=60)
    raise TimeoutError("no standalone master could hold its ports")


def registered(ui: int, seconds: float = 120) -> None:
    """Wait until the master's status lists an alive worker."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        status = master_status(ui)
        if status is not None and int(str(status.get("aliveworkers", 0))) >= 1:
            return
        time.sleep(0.5)
    raise TimeoutError("no worker registered with the master")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    work = tmp_path_factory.mktemp("cluster")
    env = {**os.environ, "SPARK_HOME": str(SPARK_HOME), "SPARK_LOCAL_IP": "127.0.0.1",
           "PYSPARK_PYTHON": sys.executable}
    master, url, ui = start_master(env)
    worker = None
    try:
        worker = subprocess.Popen([CLASS, "org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1",
                                   "--cores", "2", "--memory", "2g", "--work-dir", str(work / "worker"),
                                   "--webui-port", str(free_port())], env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        registered(ui)
        yield url, work
    finally:
        for p in (worker, master):
            if p is not None:
                p.terminate()
                p.wait(timeout=60)


ON_CLUSTER = """
import json, sys
from pyspark.sql import SparkSession
import schemaguard as sg
spark = (SparkSession.builder.master(sys.argv[1]).appName("schemaguard-on-a-cluster")
         .config("spark.jars", sys.argv[3]).config("spark.ui.enabled", "false")
         .config("spark.driver.host", "127.0.0.1").config("spark.executor.memory", "1g").getOrCreate())
orders = sys.argv[2]
out = {}
for engine in ("spark", "local"):
    scan = sg.scan(orders, engine=engine, spark=spark).to_dict()
    out[engine] = {k: scan[k] for k in ("versions", "counts", "findings")}
checked = sg.check(orders, agree=["amount_cents = amount * 100"], spark=spark)
out["check"] = [(p.verdict, p.count, p.decided_by, list(p.partitions)) for p in checked.proofs]
out["executors"] = [e for e in spark.sparkContext._jsc.sc().getExecutorMemoryStatus().keySet().toSeq()
                    .toList().mkString(",").split(",")]
print(json.dumps(out))
"""


def test_scan_check_and_the_audit_job_on_a_standalone_cluster(cluster: tuple[str, Path],
                                                              tmp_path: Path) -> None:
    url, work = cluster
    lake = tmp_path / "lake"
    build_demo_lake(lake)
    orders = str(lake / "orders")
    jars = ",".join(str(j) for j in delta_jars())
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable,
           "SCHEMAGUARD_HOME": str(tmp_path / "home")}
    done = subprocess.run([sys.executable, "-c", ON_CLUSTER, url, orders, jars], env=env, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.splitlines()[-1])
    assert out["spark"] == out["local"]
    assert len(out["spark"]["versions"]) == 4
    local = subprocess.run([str(SCHEMAGUARD), "check", orders, "--agree",
                            "amount_cents = amount * 100", "--format", "json"], env=env, capture_output=True,
                           text=True, timeout=900)
    expected = [(p["verdict"], p["count"], p["decided_by"], p["partitions"])
                for p in json.loads(local.stdout)["proofs"]]
    assert [tuple(x) for x in out["check"]] == [tuple(x) for x in expected]
    ran = list((work / "worker").glob("app-*/*/stderr"))
    assert ran, "no executor of the application ran on the worker"

    conf = tmp_path / "audit.toml"
    conf.write_text(f'[audit]\nreport_dir = "{tmp_path / "reports"}"\nformats = ["json"]\n'
                    '[catalog]\nenabled = false\n'
                    f'[[tables]]\nname = "orders"\npath = "{orders}"\nnot_null = ["id"]\n')
    submit = subprocess.run([str(SPARK_HOME / "bin" / "spark-submit"), "--master", url, "--jars", jars,
                             "--conf", "spark.driver.host=127.0.0.1", "--conf", "spark.executor.memory=1g",
                             str(ROOT / "jobs" / "lake_audit.py"), "--conf", str(conf), "--format", "json"],
                            env=env, capture_output=True, text=True, timeout=900)
    assert submit.returncode == 1, submit.stderr[-3000:]  # the demo lake's findings
    on_cluster = json.loads(submit.stdout)
    here = subprocess.run([str(SCHEMAGUARD), "audit", "--conf", str(conf), "--no-catalog",
                           "--format", "json"], env=env, capture_output=True, text=True, timeout=900)
    assert here.returncode == 1, here.stderr[-3000:]
    alone = json.loads(here.stdout)
    for key in ("findings", "proofs"):
        assert [t[key] for t in on_cluster["tables"]] == [t[key] for t in alone["tables"]], key
    versions = [[t["scan"]["versions"] for t in doc["tables"]] for doc in (on_cluster, alone)]
    assert versions[0] == versions[1]
