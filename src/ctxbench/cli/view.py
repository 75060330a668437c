"""``ctxbench view DIR``: serve the run pages under a directory on 127.0.0.1, read-only."""

from __future__ import annotations

from pathlib import Path

import click

__all__ = ["view"]


@click.command("view")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True,
              help="Port on 127.0.0.1 (0: any free port).")
def view(directory: Path, port: int) -> int:
    """Serve the run pages under DIRECTORY on 127.0.0.1 (read-only; Ctrl-C stops).

    \b
    A run page reloads itself while its run is going on.
    Example:
      ctxbench view ctxbench-demo     # then open http://127.0.0.1:8765/
    """
    from ctxbench.core import InputError
    from ctxbench.render.html.viewer import make_server

    try:
        server = make_server(directory, port)
    except OSError as exc:
        raise InputError(f"127.0.0.1:{port}: cannot listen ({exc.strerror or exc}); "
                         "choose another --port") from None
    click.echo(f"serving the runs under {directory} at "
               f"http://127.0.0.1:{server.server_address[1]}/ (read-only; Ctrl-C stops)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
