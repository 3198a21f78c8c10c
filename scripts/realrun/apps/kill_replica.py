"""Kill one live Serve replica's process with SIGKILL (Serve should replace it)."""

import os
import signal

import ray
from ray.util.state import list_actors

ray.init(address="auto")
for actor in list_actors(filters=[("state", "=", "ALIVE")]):
    if actor.class_name.startswith("ServeReplica"):
        print(f"killing {actor.class_name} pid {actor.pid}")
        os.kill(actor.pid, signal.SIGKILL)
        break
