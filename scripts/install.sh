#!/usr/bin/env bash
# Creates the virtual environment and installs what is missing. Idempotent.
# A host whose Python already has PyTorch (a GPU host) reuses it instead of downloading another.
set -euo pipefail
PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}
# pip speaks for itself (what it collects, download progress); each step says where we are.
step() { echo "==> [$1/3] $2"; }

step 1 "Python environment in $VENV"
if [ ! -x "$VENV/bin/python" ]; then
    if "$PYTHON" -c "import torch" 2>/dev/null; then
        "$PYTHON" -m venv --system-site-packages "$VENV"
    else
        "$PYTHON" -m venv "$VENV"
    fi
fi
PIP="$VENV/bin/python -m pip --disable-pip-version-check"
if ! "$VENV/bin/python" -c "import torch" 2>/dev/null; then
    if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
        step 2 "PyTorch 2.13.0 with CUDA (a few GB: the longest step)"
        $PIP install "torch==2.13.0"  # PyPI's Linux build carries CUDA
    else
        # No GPU: the CPU build (PyPI's Linux build would pull several GB of CUDA packages).
        # No retries: where that index is unreachable, fall through at once.
        step 2 "PyTorch 2.13.0, CPU build (about 200 MB: the longest step)"
        $PIP install --retries 0 --timeout 15 "torch==2.13.0" \
            --index-url https://download.pytorch.org/whl/cpu || $PIP install "torch==2.13.0"
    fi
else
    step 2 "PyTorch: already installed"
fi
if [ "${WITH_TEST:-0}" = "1" ]; then
    step 3 "kernelweb and its test tools"
    $PIP install -e ".[test]"
    # Debian's chromium drives the browser tests (Playwright uses it through executable_path).
    if ! command -v chromium >/dev/null 2>&1; then
        SUDO=""; [ "$(id -u)" = "0" ] || SUDO="sudo"
        $SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q chromium
    fi
else
    step 3 "kernelweb and its dependencies (Django, daphne, huey, ...)"
    $PIP install -e .
fi
echo "==> installed"
