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


if __name__ == "__main__":
    {
        "parse_config": parse_config,
        "healthy": healthy,
        "long_running": long_running,
        "memory_hog": memory_hog,
        "segfault": segfault,
    }[sys.argv[1]]()
