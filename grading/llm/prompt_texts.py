"""The text of every prompt version this software knows, as the judge sends it, inputs in
braces: judgments store only versions, so the results archive writes these beside them."""

from __future__ import annotations

from campaign.vocabulary import ANSWER_CHECKS, PromptTarget
from grading.llm import prompts, subtasks


def _rendered(messages: list[prompts.ChatMessage]) -> str:
    return "".join(f"## {message['role']}\n{message['content']}\n\n" for message in messages)


def prompt_texts() -> dict[str, str]:
    """Every prompt version this software knows, as the judge sends it: the fixed
    instructions and the user message with its inputs in braces."""
    ask = {"passage": "{passage}", "nugget": "{nugget}"}
    question = {"question": "{question}", "answer": "{answer}"}
    texts = {
        prompts.ENTAILMENT_PROMPT_VERSION: _rendered(prompts.entailment_messages(**ask)),
        prompts.ANSWER_PROMPT_VERSION: "".join(
            f"# answer_check: {check}\n" + _rendered(prompts.answer_messages(
                **question, nuggets={1: "{nugget 1}"}, answer_check=check,
                gold_answers=["{gold answer}"])) for check in ANSWER_CHECKS),
        prompts.RUBRIC_PROMPT_VERSION: "".join(
            f"# target: {target}\n" + _rendered(prompts.rubric_messages(
                passage="{passage}", item="{item}", target=target))
            for target in PromptTarget),
        prompts.TESTBANK_PROMPT_VERSION: "".join(
            f"# target: {target}, n = 10\n" + _rendered(prompts.bank_items_messages(
                query="{query}", target=target, n=10)) for target in PromptTarget),
        prompts.ANSWER_KEY_PROMPT_VERSION: _rendered(prompts.answer_key_messages(
            **question, key_answers=["{key answer}"])),
    }
    v2 = {
        "entailment": subtasks.entailment_v2(**ask),
        "gold": subtasks.gold_v2(**question, gold_answers=["{gold answer}"]),
        "nuggets": subtasks.nuggets_v2(**question, nuggets=["{nugget}"]),
        "relevance": subtasks.relevance_v2(**question, nugget="{nugget}"),
    }
    for name, request in v2.items():
        texts[subtasks.SUBTASKS[name].version] = _rendered(request.messages)  # type: ignore[index]
    texts[subtasks.EXPLAIN_VERSION] = _rendered(
        subtasks.explain_request(v2["entailment"], True).messages)
    texts[subtasks.ENTAILMENT_V2] = texts["entailment-v2"]
    texts[subtasks.ANSWER_V2] = "".join(f"# subtask {name}\n" + texts[f"{name}-v2"]
                                        for name in ("gold", "nuggets", "relevance"))
    return texts


def prompt_text(version: str, known: dict[str, str]) -> str | None:
    """The text of a stored prompt version: "a+b" is two wordings in turn (a reason
    asked after a verdict), "x@0.8" a wording with its decision threshold."""
    parts = [part.split("@", 1)[0] for part in version.split("+")]
    if not all(part in known for part in parts):
        return None
    return "".join(f"# {part}\n{known[part]}" for part in parts)
