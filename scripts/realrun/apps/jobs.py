"""Job entrypoints of the real-run scenarios: `python jobs.py <name>`."""

import sys
import time

import ray


def parse_config():
    import json

    json.loads("{bad")


def healthy():
    ray.init()

    @ray.remote
    def square(x):
        return x * x

    print("sum of squares:", sum(ray.get([square.remote(i) for i in range(10)])))


def healthy_actors():
    ray.init()

    @ray.remote
    def square(x):
        return x * x

    @ray.remote
    class Counter:
        def __init__(self):
            self.n = 0

        def add(self, k):
            self.n += k
            return self.n

    counter = Counter.remote()
    for v in ray.get([square.remote(i) for i in range(10)]):
        ray.get(counter.add.remote(v))
    print("sum of squares:", ray.get(counter.add.remote(0)))


def long_running():
    ray.init()
    for i in range(600):
        print(f"step {i}", flush=True)
        time.sleep(1)


def memory_hog():
    ray.init()

    @ray.remote(max_retries=0)
    def load_embeddings():
        chunks = []
        for _ in range(64):
            chunks.append(bytearray(256 * 1024 * 1024))
            time.sleep(0.2)
        return len(chunks)

    print(ray.get(load_embeddings.remote()))


def segfault():
    ray.init()

    @ray.remote(max_retries=0)
    def decode_frame():
        import ctypes

        return ctypes.string_at(0)

    print(ray.get(decode_frame.remote()))


def actor_failures():
    """An actor whose constructor raises, a task that raises, a worker that exits, an actor
    killed with SIGKILL; the driver then fails on the first actor's death."""
    import os
    import signal

    ray.init()

    @ray.remote(max_restarts=0)
    class FeatureStore:
        def __init__(self):
            raise ValueError("feature table 'users_v2' not found")

        def lookup(self, key):
            return key

    @ray.remote(max_restarts=0)
    class Cache:
        def ping(self):
            return os.getpid()

        def crash(self):
            os.kill(os.getpid(), signal.SIGKILL)

    @ray.remote(max_retries=0)
    def score_batch(n):
        raise RuntimeError(f"batch {n} has no rows")

    @ray.remote(max_retries=0)
    def write_shard():
        os._exit(3)

    for ref in (score_batch.remote(17), write_shard.remote()):
        try:
            ray.get(ref)
        except Exception as e:  # noqa: BLE001
            print("task failed:", type(e).__name__, flush=True)
    cache = Cache.remote()
    ray.get(cache.ping.remote())
    try:
        ray.get(cache.crash.remote())
    except Exception as e:  # noqa: BLE001
        print("cache failed:", type(e).__name__, flush=True)
    time.sleep(2)
    store = FeatureStore.remote()
    print(ray.get(store.lookup.remote("user-1")))


def scale_down():
    """A task that needs a worker node's resource: the autoscaler launches one, the task
    ends, the node stays idle past `idle_timeout_minutes` and the autoscaler removes it. The
    driver waits, printing what the autoscaler tells it, until the node is gone."""
    ray.init(address="auto")

    @ray.remote(num_cpus=1, resources={"batch": 1})
    def crunch(n):
        time.sleep(5)
        return sum(i * i for i in range(n))

    print("result:", ray.get(crunch.remote(100_000)), flush=True)
    deadline = time.time() + 150
    while time.time() < deadline:
        alive = [n for n in ray.nodes() if n["Alive"]]
        if len(alive) == 1:
            break
        time.sleep(2)
    print("alive nodes:", len([n for n in ray.nodes() if n["Alive"]]), flush=True)
    time.sleep(5)


if __name__ == "__main__":
    {
        "parse_config": parse_config,
        "healthy": healthy,
        "healthy_actors": healthy_actors,
        "long_running": long_running,
        "memory_hog": memory_hog,
        "segfault": segfault,
        "actor_failures": actor_failures,
        "scale_down": scale_down,
    }[sys.argv[1]]()
