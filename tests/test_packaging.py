"""The package builds without a warning. pip shows what setuptools says of pyproject.toml on every install, even
with -q: a page of it came before the demo's first line on a first run."""

import shutil
import subprocess
import sys
from pathlib import Path

from test_installed_wheel import NOT_SOURCE

ROOT = Path(__file__).resolve().parents[1]


def build_wheel(project: Path, work: Path) -> subprocess.CompletedProcess:
    """Build the wheel of a copy of ``project`` (a build leaves build/ behind) with this environment's setuptools."""
    source = work / "src"
    shutil.copytree(project, source, ignore=shutil.ignore_patterns(*NOT_SOURCE))
    return subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                           "-q", "-w", str(work / "dist"), str(source)], cwd=work, capture_output=True, text=True,
                          timeout=300)


def test_the_package_builds_without_a_warning(tmp_path):
    built = build_wheel(ROOT, tmp_path)
    assert built.returncode == 0, built.stderr
    assert built.stderr == "", built.stderr[-3000:]  # a deprecated field, a data directory setuptools calls a package
