"""A local sweep's worker process (``python -m nearflash._worker``): the Rust engine writes
one point per line on its standard input and reads one answer per line from its standard
output, until end of input. Started by ``nearflash.sweep(..., backend="local")``."""

from ._native import serve_worker

if __name__ == "__main__":
    serve_worker()
