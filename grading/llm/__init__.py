"""The LLM judge, pure part: prompts, JSON schemas, reply parsing and the protocol client.

Nothing here imports Django, so the judge can be tested, benchmarked and
reused on its own. `inputs` builds a judge request from campaign data; `client` sends
it to any OpenAI-compatible server (vLLM, or the embedded llama.cpp judge) through one
HTTP seam (`transport`); `loop` runs it on an event loop of its own for synchronous
callers.
"""
