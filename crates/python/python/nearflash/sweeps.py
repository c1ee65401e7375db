"""Design-space sweeps: ``nearflash.sweep(spec, out=DIR, backend="local"|"ray")`` and
``python -m nearflash.sweeps SPEC.toml --out DIR [--backend ray] [--address A] [--jobs N]``
(which ``nearflash sweep --backend ray`` runs).

The engine is the Rust library (``nearflash-sweep``): it checks the spec, makes the points
and their hashes, keeps ``DIR/results.csv`` (rows appended as points finish, so a rerun
computes only the missing ones) and writes ``DIR/summary.html``. Backends only decide where
points run: ``local`` in worker processes on this machine (``python -m nearflash._worker``,
fed points over a pipe by the Rust engine, GIL released), ``ray`` as one
Ray task per point (``ray.init(address=...)`` for an existing cluster, a local Ray
otherwise). A Ray task calls the same Rust function as the local backend, so both give
byte-identical tables. Ray is optional: only ``backend="ray"`` needs it.
"""

import argparse
import json
import os
import socket
import sys
from pathlib import Path

from . import _native
from ._native import NearflashError

RAY_INSTALL = "pip install 'ray[default]'"
# How long to wait for a Ray cluster's address to answer before calling it unreachable.
CONNECT_TIMEOUT_S = 5.0


def _toml_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {_toml_value(x)}" for k, x in v.items()) + " }"
    return repr(v)


def _toml(spec):
    """A spec dict as TOML: top-level values first, then one table per dict (``fixed``,
    ``grid``, ``random``)."""
    lines = [f"{k} = {_toml_value(v)}" for k, v in spec.items() if not isinstance(v, dict)]
    for k, v in spec.items():
        if isinstance(v, dict):
            lines.append(f"[{k}]")
            lines.extend(f"{json.dumps(kk)} = {_toml_value(vv)}" for kk, vv in v.items())
    return "\n".join(lines) + "\n"


def _spec_text(spec):
    """(source name, title, TOML text) of a spec given as a path, TOML text or a dict."""
    if isinstance(spec, dict):
        return "spec", "sweep", _toml(spec)
    if not isinstance(spec, (str, os.PathLike)):
        raise TypeError(
            f"spec must be a path to a TOML file, TOML text or a dict, not {type(spec).__name__}"
        )
    if isinstance(spec, os.PathLike) or "\n" not in spec:
        path = Path(spec)
        try:
            return str(path), path.stem, path.read_text()
        except OSError as e:
            raise NearflashError(f"reading {path}: {e.strerror}") from None
    return "spec", "sweep", spec


def _check_reachable(address):
    """Fails fast, naming the address, when nothing listens there (ray.init would wait long)."""
    if address in ("auto", "local"):
        return
    hostport = address.split("://", 1)[-1]
    host, sep, port = hostport.rpartition(":")
    if not sep or not port.isdigit():
        raise NearflashError(f"Ray address '{address}' is not host:port (or ray://host:port)")
    try:
        socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as e:
        raise NearflashError(
            f"cannot reach the Ray cluster at {address}: {e} (start one with `ray start --head`, "
            "or leave the address out to run a local Ray)"
        ) from None


def _run_point(point):
    """A Ray task: one point, run by the Rust library on the worker; returns its row."""
    from nearflash import _native as native

    return native.run_point(point)


def _run_ray(s, address, jobs):
    try:
        import ray
    except ImportError:
        raise NearflashError(
            f"the ray backend needs Ray, which is not installed: {RAY_INSTALL} "
            "(or use backend='local')"
        ) from None
    if address is not None:
        _check_reachable(address)
    started = not ray.is_initialized()
    if started:
        kwargs = dict(include_dashboard=False, log_to_driver=False, logging_level="ERROR")
        if address is None:
            kwargs["num_cpus"] = jobs or os.cpu_count()
        try:
            ray.init(address=address, **kwargs)
        except Exception as e:  # Ray raises ConnectionError, RuntimeError, ValueError...
            raise NearflashError(f"cannot start or join Ray at {address or 'a local instance'}: {e}") from None
    task = ray.remote(num_cpus=1, max_retries=0)(_run_point)
    pending = [task.remote(p) for p in s.missing()]
    try:
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                try:
                    row = ray.get(ref)
                except ray.exceptions.RayTaskError as e:
                    cause = getattr(e, "cause", None)
                    raise NearflashError(str(cause) if cause is not None else str(e)) from None
                s.record(row)
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)
        if started:
            ray.shutdown()
    return json.loads(s.finish())


def run(spec, *, out, backend="local", address=None, jobs=None, progress=True):
    """Runs (or resumes) a sweep; returns {points, computed, table, summary}."""
    if jobs is not None and jobs < 1:
        raise NearflashError("jobs must be at least 1")
    if backend not in ("local", "ray"):
        raise NearflashError(f"unknown backend '{backend}' (local | ray)")
    if address is not None and backend != "ray":
        raise NearflashError("address applies to backend='ray' only")
    source, title, text = _spec_text(spec)
    s = _native.Sweep(source, title, text, str(out), progress)
    for why in s.rerun():
        print(f"warning: {Path(out) / 'results.csv'}: {why}", file=sys.stderr)
    if backend == "local":
        worker = [sys.executable, "-m", "nearflash._worker"]
        return json.loads(s.run_local(jobs or os.cpu_count() or 1, worker))
    return _run_ray(s, address, jobs)


def table(out):
    """A sweep's table (``DIR/results.csv``) as a DataFrame (hashes kept as text)."""
    import pandas

    path = Path(out) / "results.csv"
    header = path.read_text().split("\n", 1)[0].split(",")
    return pandas.read_csv(path, dtype={c: str for c in header if c == "point" or "hash" in c})


def sweep(spec, *, out, backend="local", address=None, jobs=None, progress=True):
    """Runs (or resumes) a sweep and returns its table as a DataFrame (``run`` returns the
    run's {points, computed, table, summary} instead)."""
    run(spec, out=out, backend=backend, address=address, jobs=jobs, progress=progress)
    return table(out)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m nearflash.sweeps", description=__doc__.split("\n\n")[0])
    p.add_argument("spec")
    p.add_argument("--out", required=True)
    p.add_argument("--backend", choices=["local", "ray"], default="local")
    p.add_argument("--address")
    p.add_argument("--jobs", type=int)
    p.add_argument("--quiet", action="store_true")
    a = p.parse_args(argv)
    try:
        f = run(a.spec, out=a.out, backend=a.backend, address=a.address, jobs=a.jobs, progress=not a.quiet)
    except NearflashError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if not a.quiet:
        print(
            f"{f['points']} points ({f['computed']} computed now, {f['points'] - f['computed']} "
            f"already in the table); wrote {f['table']} and {f['summary']}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
