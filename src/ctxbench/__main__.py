"""``python -m ctxbench`` runs the command line."""

from ctxbench.cli.main import main

if __name__ == "__main__":
    main()
