"""The pinned CPU numerics: a training run gives the same bytes whatever the outer environment asks
for, and would not without the pin, so the pin is what makes results portable across x86-64 CPUs."""

import os
import subprocess
import sys

import pytest

from pipeline.infra import numerics

# A few training steps of a tiny model, in a fresh process; prints the SHA-256 of its weights and
# the capability ATen ran with.
TRAIN_AND_HASH = """
import hashlib, io
import pipeline  # first, as every entry point: it pins the numerics before torch loads
import torch
from pipeline.core.data import make_datasets
from pipeline.core.training import train_model
from tests.conftest import tiny_params

torch.set_num_threads(1)
params = tiny_params(train={"steps": 8})
model, _ = train_model(params, 0, make_datasets(params.data)[0])
buffer = io.BytesIO()
torch.save(model.state_dict(), buffer)
print(hashlib.sha256(buffer.getvalue()).hexdigest(), torch.backends.cpu.get_cpu_capability())
"""

OUTER = {"unset": None, "default": "default", "avx2": "avx2", "avx512": "avx512"}


def run_training(outer_capability, unpinned=False):
    env = {k: v for k, v in os.environ.items() if k not in numerics.PINNED and k != numerics.UNPINNED_ENV}
    if outer_capability is not None:
        env["ATEN_CPU_CAPABILITY"] = outer_capability
    if unpinned:
        env[numerics.UNPINNED_ENV] = "1"
    out = subprocess.run([sys.executable, "-c", TRAIN_AND_HASH], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    digest, capability = out.stdout.split()
    return digest, capability


needs_avx2 = pytest.mark.skipif(not numerics.has_avx2(), reason="the pin applies to x86-64 CPUs with AVX2")


@pytest.mark.slow
@needs_avx2
def test_pinned_training_gives_the_same_bytes_whatever_the_environment_asks():
    runs = {name: run_training(value) for name, value in OUTER.items()}
    assert {capability for _, capability in runs.values()} == {"AVX2"}
    assert len({digest for digest, _ in runs.values()}) == 1, runs


@pytest.mark.slow
@needs_avx2
def test_without_the_pin_the_kernels_and_the_bytes_differ():
    scalar, avx2 = run_training("default", unpinned=True), run_training("avx2", unpinned=True)
    assert (scalar[1], avx2[1]) == ("DEFAULT", "AVX2")
    assert scalar[0] != avx2[0]  # other kernels round differently: what the pin guards against


def test_the_pin_applies_only_where_avx2_exists():
    assert numerics.has_avx2({"avx2", "fma", "sse4_2"}, "x86_64")
    assert not numerics.has_avx2({"sse4_2", "avx"}, "x86_64")
    assert not numerics.has_avx2({"avx2", "fma"}, "aarch64")  # the flags of another architecture


def test_cpu_flags_of_an_unreadable_file_are_empty(tmp_path):
    assert numerics.cpu_flags(tmp_path / "missing") == set()
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nflags\t\t: fpu avx2 fma\n")
    assert numerics.cpu_flags(info) == {"fpu", "avx2", "fma"}
