"""A local sweep's worker process (``python -m nearflash._worker``): the Rust engine writes
one point per line on its standard input and reads one answer per line from its standard
output, until end of input. Started by ``nearflash.sweep(..., backend="local")``."""

import sys

from ._native import serve_worker

if __name__ == "__main__":
    try:
        serve_worker()
    except KeyboardInterrupt:  # Ctrl-C: the sweep's process raises it
        sys.exit(130)
