"""bench/scaling.py reads a compiled step's collectives from its HLO: counts, buffer bytes, loops."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

BENCH = Path(__file__).parents[1] / "bench"
sys.path.insert(0, str(BENCH))
try:
    from scaling import collectives, wire_bytes
finally:
    sys.path.remove(str(BENCH))

COMPILED = textwrap.dedent(
    """
    import json, sys
    import jax, jax.numpy as jnp
    from jax.sharding import Mesh, NamedSharding, PartitionSpec
    sys.path.insert(0, sys.argv[1])
    from scaling import collectives

    mesh = Mesh(jax.devices(), ("data",))
    x = jax.device_put(jnp.ones((8, 16)), NamedSharding(mesh, PartitionSpec("data")))

    def f(x, n):  # rows split over 2 devices: every reduction over them is an all-reduce
        body = lambda i, c: c + jnp.sum(x * c, axis=0)
        fixed = jax.lax.fori_loop(0, 3, body, jnp.zeros(16))  # 3 trips: 3 all-reduces of f32[16]
        return fixed, jnp.sum(x), jax.lax.fori_loop(0, n, body, fixed)  # + one of f32[]; a loop of n trips

    print(json.dumps(collectives(jax.jit(f).lower(x, 2).compile().as_text(), 2)))
    """
)


def test_the_collectives_of_a_compiled_program_on_two_devices():
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "XLA_FLAGS": "--xla_force_host_platform_device_count=2"}
    done = subprocess.run(
        [sys.executable, "-c", COMPILED, str(BENCH)], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found == {"ops": {"all-reduce": 5}, "bytes": {"all-reduce": 4 * 64 + 4}, "wire": 260.0, "dynamic": True}


def test_shapes_groups_and_async_pairs_are_read_from_the_text():
    hlo = textwrap.dedent(
        """
        %body (p: (s32[], f32[4])) -> (s32[], f32[4]) {
          %ag = f32[8,4]{1,0} all-gather(%x), channel_id=1, replica_groups={{0,1},{2,3}}, dimensions={0}
        }

        ENTRY %main (a: f32[16]) -> f32[16] {
          %ar = (f32[16]{0}, bf16[2,8]{1,0}) all-reduce(%a, %b), replica_groups=mesh['axis_0'=4] {'axis_0'}
          %rs = f32[4]{0} reduce-scatter(%a), replica_groups=[1,4]<=[4], dimensions={0}
          %cp = (f32[16]{0}, f32[16]{0}) collective-permute-start(%a), source_target_pairs={{0,1},{1,0}}
          %cpd = f32[16]{0} collective-permute-done(%cp)
          %one = f32[16]{0} all-reduce(%a), replica_groups=mesh['axis_0'=1,'axis_1'=4] {'axis_0'}
          %w = (s32[], f32[4]) while(%t), condition=%cond, body=%body, backend_config={"known_trip_count":{"n":"5"}}
        }
        """
    )
    found = collectives(hlo, 4)
    assert found["ops"] == {"all-reduce": 1, "reduce-scatter": 1, "collective-permute": 1, "all-gather": 5}
    assert found["bytes"] == {"all-reduce": 64 + 32, "reduce-scatter": 16, "collective-permute": 64, "all-gather": 640}
    expected = wire_bytes("all-reduce", 96, 4) + 3 * 16 + 64 + 5 * wire_bytes("all-gather", 128, 2)
    assert found["wire"] == expected and not found["dynamic"]  # the group of 1 moves nothing
