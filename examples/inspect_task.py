# SPDX-License-Identifier: MIT
"""An Inspect AI task on sandboxctl sandboxes that needs no model key: a
scripted mock model (mockllm) calls the bash tool to write a word into
answer.txt, and the scorer reads that file back from the sandbox.

    pip install ./python inspect-ai            # or scripts/deps.sh
    export PATH=$PWD/build/cmd:$PATH           # or SANDBOXCTL_BIN=build/cmd/sandboxctl
    inspect eval examples/inspect_task.py --sandbox sandboxctl

Each sample asks for one word; sample "beta" is scored against "gamma", so the
log's accuracy is 2/3 and a scorer that read nothing could not pass it. The
provider starts `sandboxctl serve` for the eval and removes every sandbox at
the end. `-T sleep=60` makes each tool call sleep first (to try a killed eval:
then `inspect sandbox cleanup sandboxctl`).
"""
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessage, ChatMessageTool, ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, scorer
from inspect_ai.solver import TaskState, generate, use_tools
from inspect_ai.tool import bash
from inspect_ai.util import sandbox


def scripted(sleep: int) -> Any:
    """The mock model: one bash call writing the word the prompt names, then a reply."""

    def model(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        if isinstance(messages[-1], ChatMessageTool):
            out = ModelOutput.from_content("mockllm/model", "written")
        else:
            word = messages[-1].text.rsplit(" ", 1)[-1]
            command = (f"sleep {sleep}; " if sleep else "") + f"printf %s {word} > answer.txt"
            out = ModelOutput.for_tool_call("mockllm/model", "bash", {"command": command})
        # usage given: mockllm would otherwise count tokens with tiktoken, which
        # downloads its tables (the task must run offline)
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    return model


@scorer(metrics=[accuracy()])
def answer_file() -> Any:
    async def score(state: TaskState, target: Target) -> Score:
        try:
            text = await sandbox().read_file("answer.txt")
        except FileNotFoundError:
            return Score(value=INCORRECT, explanation="no answer.txt")
        return Score(value=CORRECT if text == target.text else INCORRECT, answer=text)

    return score


@task
def write_answer(sleep: int = 0) -> Task:
    return Task(
        dataset=[Sample(input=f"Write the word {w}", target=t, id=w)
                 for w, t in (("alpha", "alpha"), ("beta", "gamma"), ("delta", "delta"))],
        solver=[use_tools(bash()), generate()],
        scorer=answer_file(),
        model=get_model("mockllm/model", custom_outputs=scripted(sleep)),
    )
