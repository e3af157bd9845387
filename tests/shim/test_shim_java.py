"""The Java shim builds (javac --release 11, against the compile-only stubs) and its JUnit 5
tests pass, including the cross-language Algorithm 2 vectors generated here by the Python code.

Runs `make -C deploy/shim test` (what `make shim-test` runs). Skips, with the reason, where the
JDK or Debian's junit5 / Jackson / slf4j jars are missing (`.ci/run` installs the jars).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

SHIM = Path(__file__).resolve().parents[2] / "deploy" / "shim"
SHARE = Path("/usr/share/java")
JARS = {
    "junit-platform-console-standalone.jar": "junit5",
    "jackson-databind.jar": "libjackson2-databind-java",
    "jackson-core.jar": "libjackson2-core-java",
    "jackson-annotations.jar": "libjackson2-annotations-java",
    "slf4j-api.jar": "libslf4j-java",
    "slf4j-nop.jar": "libslf4j-java",
}


def _missing() -> str | None:
    if shutil.which("javac") is None or shutil.which("make") is None:
        return "javac (a JDK 11+) or make is not installed: the Java shim cannot be built here"
    absent = sorted({pkg for jar, pkg in JARS.items() if not (SHARE / jar).is_file()})
    if absent and not os.environ.get("HADOOP_HOME"):
        return f"Debian packages missing for the Java shim: apt-get install {' '.join(absent)} (.ci/run does)"
    return None


pytestmark = pytest.mark.skipif(_missing() is not None, reason=_missing() or "")


@pytest.fixture(scope="module")
def java_run(tmp_path_factory: pytest.TempPathFactory, make_vectors: ModuleType) -> subprocess.CompletedProcess[str]:
    vectors = tmp_path_factory.mktemp("shim") / "vectors.json"
    vectors.write_text(json.dumps(make_vectors.build()))
    return subprocess.run(
        ["make", "-C", str(SHIM), "test", f"VECTORS={vectors}", "JUNIT_DETAILS=tree"],
        capture_output=True, text=True, timeout=600,
    )


def test_shim_compiles_and_unit_tests_pass(java_run: subprocess.CompletedProcess[str]) -> None:
    out = java_run.stdout + java_run.stderr
    assert java_run.returncode == 0, out[-6000:]
    assert "0 tests failed" in out and "tests successful" in out, out[-3000:]


def test_cross_language_vectors_ran(java_run: subprocess.CompletedProcess[str]) -> None:
    out = java_run.stdout
    for name in ("algorithm2ChoosesWhatPythonChooses()", "replicaRulesAnswerWhatPythonAnswers()",
                 "splitmixStreamIsPythons()"):
        line = next((ln for ln in out.splitlines() if name in ln), "")
        assert "✔" in line, f"{name} did not pass:\n{out[-3000:]}"


def test_jar_holds_only_our_java_11_classes(java_run: subprocess.CompletedProcess[str]) -> None:
    assert java_run.returncode == 0
    with zipfile.ZipFile(SHIM / "target" / "harvester-shim.jar") as jar:
        classes = [n for n in jar.namelist() if n.endswith(".class")]
        assert classes and all(n.startswith("org/harvester/shim/") for n in classes), classes
        for wanted in ("org/harvester/shim/namenode/HarvesterBlockPlacementPolicy.class",
                       "org/harvester/shim/resourcemanager/HarvesterShortJobsNodeLookupPolicy.class"):
            assert wanted in classes
        major = int.from_bytes(jar.read(classes[0])[6:8], "big")
        assert major == 55, f"class file version {major}: expected Java 11 bytecode (55)"
