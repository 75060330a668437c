"""The compile evaluation's report (``ctxbench.compile-evaluation.v1``): its typed model.

The compiler writes it (:func:`ctxbench.compiler.evaluation.evaluate`); the model sits in
the protocols layer beside the other reports' models, so reading a report back
(:func:`ctxbench.protocols.reports.read_report`) names nothing of the compiler.
"""
