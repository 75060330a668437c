"""ctxbench.cli: thin click commands; each parses, calls one library function, prints, exits."""
