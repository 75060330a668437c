"""ctxbench: does a context-control system send the model less context without losing quality?"""

__version__ = "0.1.0"
