"""``ctxbench compile``: build a budgeted, policy-checked context packet; ``compile verify``."""

from __future__ import annotations

import click

from ctxbench.compiler.api import (
    compile_benchmark_task,
    compile_directory,
    verify_any_commit_file,
)
from ctxbench.compiler.policy import Policy
from ctxbench.compiler.strategies import STRATEGIES, CompiledContext
from ctxbench.core import InputError, SettingError


def _summary(packet: CompiledContext, tokenizer: str) -> str:
    budget = "budget none" if packet.budget is None else f"packet budget {packet.budget}"
    if packet.budget is not None:
        # The same packet in a run: there a budget is the whole prompt's (docs/runner.md).
        from ctxbench.compiler import get_tokenizer
        from ctxbench.runner.contexts import prompt_overhead

        overhead = prompt_overhead(str(packet.commit["query"]), get_tokenizer(tokenizer).count)
        budget += (f" (a run's prompt budget {packet.budget + overhead} = this packet's room "
                   f"+ the prompt's overhead of {overhead} tokens for this query)")
    line = (
        f"{packet.strategy}: {packet.token_count} tokens (local count, {packet.tokenizer_id}) "
        f"of {budget}; {len(packet.selected)} excerpt(s): "
        f"{', '.join(packet.artifact_ids) or '-'}; commit {packet.commit_id}"
    )
    if packet.empty_reason:
        line += f"\nempty packet: {packet.empty_reason}"
    for violation in packet.violations:
        line += f"\nviolation: {violation}"
    return line


@click.group("compile", invoke_without_command=True)
@click.option("--benchmark", "benchmark", type=click.Path(dir_okay=False),
              help="ECEB benchmark JSON (its registry, tasks and policies).")
@click.option("--corpus", "corpus", type=click.Path(file_okay=False),
              help="Corpus directory (the benchmark's files, or any plain directory).")
@click.option("--task", "task", help="Task id in the benchmark.")
@click.option("--query", "query", help="Query, for a plain directory (no --benchmark).")
@click.option("--allow", "allow", multiple=True,
              help="Allowed classification, for a plain directory (default: internal); "
                   "an unknown name is an error.")
@click.option("--deny", "deny", multiple=True,
              help="Denied file or directory of a plain directory: its path (corpus-relative, "
                   "./-relative or absolute inside it) or unique file name; an unknown name "
                   "is an error.")
@click.option("--budget", type=int, help="Token budget (omit for full_permitted_context).")
@click.option("--strategy", default="compiled", show_default=True,
              help=f"{', '.join(STRATEGIES)}, or any installed strategy (ctxbench strategies) "
                   "or module:attr.")
@click.option("--tokenizer", default="cl100k_base", show_default=True,
              help="cl100k_base, hf:PATH/tokenizer.json, gguf:PATH or smollm2.")
@click.option("--external", "external", metavar="SPEC",
              help="Benchmark another system: module:function or a command line.")
@click.option("--output", type=click.Path(dir_okay=False), help="Write the commit JSON here.")
@click.option("--print", "print_text", is_flag=True, help="Print the packet text to stdout.")
@click.pass_context
def compile_group(
    ctx: click.Context, benchmark: str | None, corpus: str | None, task: str | None,
    query: str | None, allow: tuple[str, ...], deny: tuple[str, ...], budget: int | None,
    strategy: str, tokenizer: str, external: str | None, output: str | None,
    print_text: bool,
) -> None:
    """Compile the context packet for a task within a token budget.

    \b
    Examples:
      ctxbench compile --benchmark B.json --corpus corpus/ --task T1 --budget 800 --print
      ctxbench compile verify commit.json --corpus corpus/
    """
    if ctx.invoked_subcommand is not None:
        return
    if corpus is None:
        raise InputError("compile: --corpus DIR is required")
    if benchmark is not None:
        if allow or deny:
            raise InputError("compile: --allow and --deny apply to a plain directory; with "
                             "--benchmark the task's own policy is used")
        if task is None:
            raise InputError("compile: --task ID is required with --benchmark")
        packet = compile_benchmark_task(
            benchmark, corpus, task, budget=budget, strategy=strategy, tokenizer=tokenizer,
            external=external,
        )
    else:
        if external is not None:
            raise InputError("compile: --external needs --benchmark B.json --task ID")
        if query is None:
            raise InputError("compile: --benchmark B.json --task ID, or --query TEXT, is required")
        policy = Policy(allow or ("internal",), deny)
        packet = compile_directory(
            corpus, query=query, budget=budget, policy=policy, strategy=strategy,
            tokenizer=tokenizer,
        )
    if output:
        from ctxbench.core import atomic_write_json  # tempfile and shutil: only to write

        atomic_write_json(output, packet.commit)
    if print_text:
        click.echo(packet.text, nl=False)
        click.echo(_summary(packet, tokenizer), err=True)
    else:
        click.echo(_summary(packet, tokenizer))


@compile_group.command("verify")
@click.argument("commit", type=click.Path(dir_okay=False))
@click.option("--corpus", "corpus", type=click.Path(file_okay=False),
              help="Corpus directory the packet was compiled from (optional for Entroly).")
@click.option("--tokenizer", default=None,
              help="Tokenizer to recount with when the commit's id is not a built-in name.")
@click.option("--context", "context", type=click.Path(dir_okay=False),
              help="Packet text, for commits of external systems.")
def verify(commit: str, corpus: str | None, tokenizer: str | None, context: str | None) -> None:
    """Check every digest of a ctxbench or Entroly context commit (fails closed).

    \b
    Examples:
      ctxbench compile verify commit.json --corpus corpus/
      ctxbench compile verify trials_context_commits/t1.json
    """
    try:
        checked = verify_any_commit_file(commit, corpus, tokenizer=tokenizer,
                                         context_path=context)
    except SettingError as exc:  # the library names its argument; here it is an option
        option = {"corpus": "--corpus", "tokenizer": "--tokenizer", "context": "--context"}
        raise InputError(f"{option[exc.setting]}: {exc.detail}") from None
    click.echo(checked.line())


@compile_group.command("verify-trials")
@click.argument("trials", type=click.Path(dir_okay=False))
@click.option("--commits", "commits", type=click.Path(file_okay=False),
              help="Commit folder (default: <trials stem>_context_commits beside the file).")
def verify_trials(trials: str, commits: str | None) -> None:
    """Check an Entroly trial file against the context commits its runner wrote.

    \b
    Example:
      ctxbench compile verify-trials trials.jsonl
    """
    from ctxbench.compiler.entroly_run import verify_entroly_trials

    click.echo(verify_entroly_trials(trials, commits).line())


@compile_group.command("evaluate")
@click.argument("benchmark", type=click.Path(dir_okay=False))
@click.option("--corpus", "corpus", required=True, type=click.Path(file_okay=False),
              help="Corpus directory of the benchmark.")
@click.option("--strategy", "strategies", multiple=True,
              help="Any installed strategy (ctxbench strategies: compiled, naive_top_k, "
                   "full_permitted_context, truncate-head, truncate-tail, middle-out, "
                   "chunk-bm25, entroly, plugins), the langchain-bm25 peer or external:SPEC "
                   "(repeat; default: compiled, naive_top_k, full_permitted_context).")
@click.option("--tokenizer", default="cl100k_base", show_default=True)
@click.option("--output", type=click.Path(dir_okay=False), help="Write the JSON report here.")
def evaluate_command(benchmark: str, corpus: str, strategies: tuple[str, ...], tokenizer: str,
                     output: str | None) -> None:
    """Check whether each strategy's packet holds each task's evidence, at every budget.

    \b
    Example:
      ctxbench compile evaluate B.json --corpus corpus/ --strategy compiled \\
          --strategy entroly --strategy naive_top_k --strategy chunk-bm25 --output eval.json
    """
    from ctxbench.compiler.evaluation import evaluate, render_evaluation
    from ctxbench.core import atomic_write_json

    report = evaluate(benchmark, corpus, tokenizer=tokenizer,
                      strategies=strategies or ("compiled", "naive_top_k",
                                                "full_permitted_context"))
    if output:
        atomic_write_json(output, report.to_json())
    click.echo(render_evaluation(report), nl=False)


@compile_group.command("batch")
@click.argument("benchmark", type=click.Path(dir_okay=False))
@click.option("--corpus", "corpus", required=True, type=click.Path(file_okay=False),
              help="Corpus directory of the benchmark.")
@click.option("--task", "tasks", multiple=True, help="Task id (repeat; default: every task).")
@click.option("--budget", "budgets", multiple=True, type=int,
              help="Token budget (repeat; default: each task's ladder).")
@click.option("--strategy", type=click.Choice(STRATEGIES[:2]), default="compiled",
              show_default=True)
@click.option("--tokenizer", default="cl100k_base", show_default=True)
@click.option("--output-dir", "output_dir", required=True, type=click.Path(file_okay=False),
              help="Directory for <task>-<budget>.commit.json and .txt files.")
def batch_command(benchmark: str, corpus: str, tasks: tuple[str, ...], budgets: tuple[int, ...],
                  strategy: str, tokenizer: str, output_dir: str) -> None:
    """Compile several tasks and budgets in one call (one index, built or loaded once).

    \b
    Example:
      ctxbench compile batch B.json --corpus corpus/ --task T1 --task T2 \\
          --budget 256 --budget 1024 --output-dir packets/
    """
    from ctxbench.compiler.api import compile_batch

    for packet, path in compile_batch(benchmark, corpus, tasks=tasks, budgets=budgets,
                                      strategy=strategy, tokenizer=tokenizer,
                                      output_dir=output_dir):
        click.echo(f"{path}: {_summary(packet, tokenizer)}")
