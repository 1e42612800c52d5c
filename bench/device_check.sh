#!/usr/bin/env bash
# The accelerator check: install zoo beside the JAX a GPU machine already has, then print one table.
#
#   bash bench/device_check.sh            # on a machine with JAX for CUDA (or TPU) installed
#   bash bench/device_check.sh --smoke    # tiny data, few steps: checks the script itself (CPU, JAX_PLATFORMS=cpu)
#
# zoo goes in with --no-deps so the machine's JAX (built for its accelerator) is not replaced;
# only the pure-Python dependencies it lacks are added. Real data is read from $ZOO_DATA_DIR
# (the folder with corpus/, embeddings/ and lm/), else ../shared/data beside the checkout.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"

if [[ "${ZOO_DEVICE_CHECK_SKIP_INSTALL:-0}" != 1 ]]; then
    "$PYTHON" -m pip install --quiet --no-deps -e .
    # Each missing module's distribution, installed with --no-deps (a plain install of optax or equinox
    # could pull another jax in): zoo's pins where pyproject.toml has one, else the newest.
    missing=$("$PYTHON" - <<'PY'
import importlib.util, re, tomllib
pins = {re.split(r"[=<>!~ ]", d)[0].lower(): d for d in tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]}
wanted = {"equinox": "equinox", "jaxtyping": "jaxtyping", "wadler_lindig": "wadler-lindig",
          "typing_extensions": "typing-extensions", "optax": "optax", "chex": "chex", "absl": "absl-py",
          "toolz": "toolz", "pluggy": "pluggy", "safetensors": "safetensors", "tqdm": "tqdm", "scipy": "scipy",
          "numba": "numba", "llvmlite": "llvmlite"}
print(" ".join(pins.get(dist, dist) for module, dist in wanted.items() if importlib.util.find_spec(module) is None))
PY
)
    if [[ -n "$missing" ]]; then
        "$PYTHON" -m pip install --quiet --no-deps $missing
    fi
fi

"$PYTHON" -c "import jax; print('JAX', jax.__version__, 'on', jax.devices())"
exec "$PYTHON" bench/device_check.py "$@"
