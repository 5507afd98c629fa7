"""The LLM judge, pure part: prompts, JSON schemas, reply parsing and the protocol client, with
no Django imports, so that the judge can be tested, benchmarked and reused on its own."""
