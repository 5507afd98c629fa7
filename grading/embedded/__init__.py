"""The embedded judge: a packaged GGUF model served by llama.cpp on 127.0.0.1.

`models` fetches and verifies the model (DESIGN.md section 3); `server` runs it with
`xllamacpp` as an OpenAI-compatible HTTP server; `shared` keeps it to one server per
machine, found by every process through a record under VAR_DIR. No Django imports here.
"""
