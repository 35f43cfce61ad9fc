"""pytest setup: the GPU tests need a CUDA device and the installed fusedmoe package
(`pip install --no-build-isolation .`); elsewhere they are skipped with the reason."""
import json
import os

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _load_fusedmoe():
    if not torch.cuda.is_available():
        return None, "no CUDA device"
    try:
        import fusedmoe  # noqa: F401
    except ImportError as e:
        return None, f"fusedmoe is not installed ({e})"
    return fusedmoe, ""


FUSEDMOE, SKIP_REASON = _load_fusedmoe()


def pytest_collection_modifyitems(config, items):
    if FUSEDMOE is None:
        skip = pytest.mark.skip(reason=SKIP_REASON)
        for item in items:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def bench_shapes():
    with open(os.path.join(REPO, "shapes", "models.json")) as f:
        return json.load(f)["bench_shapes"]
