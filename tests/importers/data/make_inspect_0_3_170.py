"""Write ``inspect-0.3.170/{full,trimmed}.eval`` with the real Inspect AI 0.3.170.

Run with that version installed (not the project's): ``python -m venv /tmp/v170 &&
/tmp/v170/bin/pip install inspect-ai==0.3.170 && /tmp/v170/bin/python
tests/importers/data/make_inspect_0_3_170.py`` from the repository root. The task is the one
of ``tests/importers/test_inspect_usage.py``: 10 samples on ``mockllm/model``, graded by
``model_graded_qa()`` with no grader role (so by the model under test). The mock reports
usage as Inspect's OpenAI adapters did before 0.3.184: ``input_tokens`` is the prompt
count with the cache reads inside it, ``total_tokens`` the provider's total. The logs
differ between runs only in their ids and times.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import inspect_ai
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessage, ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import model_graded_qa
from inspect_ai.solver import generate, system_message

OUT = Path(__file__).parent / "inspect-0.3.170"
TASKS = 10
TESTED = {"full": (9990, 10), "trimmed": (2369, 10)}
GRADER = (25586, 10)


def _task(condition: str) -> Task:
    filler = "Background line.\n" * (40 if condition == "full" else 4)
    return Task(dataset=[Sample(id=f"q{i}", input=f"Code of item {i}?", target=f"K{i}")
                         for i in range(TASKS)],
                solver=[system_message(filler + "Item codes: K<i>."), generate()],
                scorer=model_graded_qa(), name="catalogue")


def _outputs(condition: str) -> Any:
    def output(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        text = messages[-1].text
        if "[BEGIN DATA]" in text:
            out = ModelOutput.from_content(model="mockllm/model", content="GRADE: C")
            prompt, completion, read = *GRADER, 0
        else:
            item = text.split("item ")[1].rstrip("?")
            out = ModelOutput.from_content(model="mockllm/model", content=f"K{item}")
            prompt, completion = TESTED[condition]
            read = prompt // 2
        out.usage = ModelUsage(input_tokens=prompt, input_tokens_cache_read=read or None,
                               output_tokens=completion, total_tokens=prompt + completion)
        return out
    return output


def main() -> None:
    if inspect_ai.__version__ != "0.3.170":
        sys.exit(f"needs inspect-ai 0.3.170, got {inspect_ai.__version__}")
    OUT.mkdir(exist_ok=True)
    for condition in ("full", "trimmed"):
        with tempfile.TemporaryDirectory() as folder:
            model = get_model("mockllm/model", custom_outputs=_outputs(condition))
            [log] = inspect_eval(_task(condition), model=model, log_dir=folder,
                                 display="none")
            assert log.status == "success", log.status
            shutil.copyfile(log.location, OUT / f"{condition}.eval")


if __name__ == "__main__":
    main()
