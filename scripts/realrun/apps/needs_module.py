"""A Serve app that imports a package the image does not have."""

import sentencepiece  # noqa: F401  (not installed: the scenario's failure)

from ray import serve


@serve.deployment
class Tokenizer:
    async def __call__(self, request):
        return "tokens"


app = Tokenizer.bind()
