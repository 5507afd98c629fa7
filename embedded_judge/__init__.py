"""The embedded judge: a packaged GGUF model served by llama.cpp on 127.0.0.1, one server per
machine, with no Django imports (docs/judging.md, "The engine", "One judge per machine")."""
