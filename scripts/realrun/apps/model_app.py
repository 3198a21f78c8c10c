"""Serve apps the real-run scenarios deploy. Each variable is one app; the config names it."""

import os
import time

from ray import serve


@serve.deployment
class Echo:
    """A healthy deployment: answers every request."""

    async def __call__(self, request):
        return {"echo": request.query_params.get("q", "")}


@serve.deployment
class Model:
    """Opens a model file that is not there: the constructor raises."""

    def __init__(self):
        with open("/models/does-not-exist.pt", "rb") as f:
            self.weights = f.read()

    async def __call__(self, request):
        return "unreachable"


@serve.deployment(health_check_period_s=2, health_check_timeout_s=5)
class Ranker:
    """Starts fine, then its health check fails: the index it depends on goes away."""

    def __init__(self):
        self.started = time.time()

    def check_health(self):
        if time.time() - self.started > 6:
            raise RuntimeError("vector index connection lost")

    async def __call__(self, request):
        return "ranked"


@serve.deployment(ray_actor_options={"num_gpus": 1})
class GpuModel:
    """Asks for a GPU the machine does not have."""

    async def __call__(self, request):
        return "gpu"


echo = Echo.bind()
model = Model.bind()
ranker = Ranker.bind()
gpu = GpuModel.bind()
