"""Computational storage the standard way: NVMe Computational Programs and Subsystem Local
Memory (docs/cs.md), one command at a time on a modelled drive.

    >>> from nearflash import cs
    >>> dev = cs.Device(preset="ssd-970evo")
    >>> dev.write_nvm(open("lines.txt", "rb").read())          # host block writes, µs
    >>> dev.load_program("examples/cs/build/filter.o")          # type from the name
    >>> dev.activate()
    >>> rsid = dev.create_range_set([(0, n), (1 << 20, 4096)])
    >>> dev.memory_copy([(0, dev.lbas(n))])                      # NVM LBAs -> SLM 0
    >>> count = dev.execute(rsid, cparam1=cs.text_param("needle"))
    >>> dev.memory_read(1 << 20, 4 * count)
    >>> dev.steps()                                              # every command, timed

Each method submits its command and runs the simulation until the command completes. A
command the device refuses raises ``CommandError`` with the NVMe status (``e.status``,
``e.code``); the device stays usable. The same seed and the same commands give the same
latencies and the same ``trace_hash``.
"""

import os

from . import _native
from ._native import NearflashError
from . import _overrides

__all__ = ["Device", "CommandError", "text_param", "STATUS_NAMES"]

# Load Program's default chunk: 64 KiB, as `nearflash cs run --chunk-kib` and scripts.
CHUNK_BYTES_DEFAULT = 64 << 10
# Program files larger than this are refused before they are read (the device refuses
# programs over its own limit with PROGRAM_TOO_BIG; this only bounds what is read).
PROGRAM_FILE_BYTES_MAX = 64 << 20
# Files written to the NVM namespace: as `nearflash cs script --file-max-mib`'s default.
WRITE_FILE_BYTES_MAX = 2048 << 20


class CommandError(NearflashError):
    """A command completed with an error status.

    ``status`` is the status's name (``"PROGRAM_NOT_ACTIVATED"``, ...), ``code`` the
    (status code type, status code) pair the completion carried.
    """

    def __init__(self, message, status, sct, sc):
        super().__init__(message)
        self.status = status
        self.code = (sct, sc)


STATUS_NAMES = (
    "INVALID_FIELD",
    "INTERNAL_ERROR",
    "INVALID_NAMESPACE",
    "LBA_OUT_OF_RANGE",
    "INVALID_PROGRAM_INDEX",
    "NO_PROGRAM",
    "PROGRAM_IN_USE",
    "INVALID_PROGRAM_DATA",
    "PROGRAM_TOO_BIG",
    "MAX_PROGRAMS_ACTIVATED",
    "PROGRAM_NOT_ACTIVATED",
    "INVALID_MEMORY_RANGE_SET_ID",
    "MAX_MEMORY_RANGES_EXCEEDED",
    "MAX_MEMORY_RANGE_SETS_EXCEEDED",
    "MEMORY_RANGE_NOT_REACHABLE",
    "PROGRAM_MEMORY_VIOLATION",
    "PROGRAM_EXECUTION_TIME_EXCEEDED",
    "PROGRAM_FAULT",
)


def text_param(text):
    """Up to 8 bytes of text as a 64-bit CPARAM, first byte lowest (``"str:TEXT"`` in
    scripts)."""
    data = text.encode() if isinstance(text, str) else bytes(text)
    if len(data) > 8:
        raise ValueError(f"text_param: {text!r} is longer than 8 bytes")
    return int.from_bytes(data.ljust(8, b"\0"), "little")


def _bytes(what, value, limit):
    """bytes-like as bytes; a str or path as the file's contents (at most `limit` bytes)."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    path = os.fspath(value)
    with open(path, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise NearflashError(f"{what} {path}: larger than {limit} bytes")
    return data


def _ptype(program, ptype):
    if ptype is not None:
        return ptype
    if isinstance(program, (bytes, bytearray, memoryview)):
        data = bytes(program[:4])
        if data == b"\x7fELF":
            return "ebpf"
        if data == b"\0asm":
            return "wasm"
        raise NearflashError("load_program: name ptype ('ebpf' or 'wasm') for these bytes")
    name = os.fspath(program)
    if name.endswith(".o"):
        return "ebpf"
    if name.endswith((".wasm", ".wat")):
        return "wasm"
    raise NearflashError(
        f"load_program: {name}: name it .o (eBPF), .wasm or .wat (WebAssembly), or pass ptype"
    )


def _command(method):
    def call(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except _native.CsCommandFailed as e:
            raise CommandError(*e.args) from None

    call.__name__ = method.__name__
    call.__doc__ = method.__doc__
    return call


class Device:
    """A freshly formatted drive of ``preset`` (``overrides`` as ``--set``) with its ``[cs]``
    compute engines and memory namespace."""

    def __init__(self, preset="ssd-970evo", overrides=None, seed=1):
        self._dev = _native.CsDevice(preset, _overrides(overrides), seed)

    @property
    def preset(self):
        return self._dev.preset

    @property
    def engines(self):
        """The compute engines' names; ``engine=`` takes a name or an index."""
        return self._dev.engines

    @property
    def now_us(self):
        """Simulated time since format, µs."""
        return self._dev.now_us

    @property
    def lba_bytes(self):
        """Bytes of an LBA of the NVM namespace (4 KiB)."""
        return self._dev.lba_bytes

    def lbas(self, n_bytes):
        """LBAs that hold ``n_bytes``."""
        return -(-n_bytes // self.lba_bytes)

    @property
    def trace_hash(self):
        return self._dev.trace_hash

    def _engine(self, engine):
        if isinstance(engine, str):
            i = self._dev.engine_index(engine)
            if i is None:
                raise NearflashError(
                    f"engine {engine!r}: preset {self.preset} has {', '.join(self.engines)}"
                )
            return i
        return engine

    def write_nvm(self, data, lba=0):
        """Host block writes of ``data`` (bytes or a file's path) to the NVM namespace from
        ``lba``, then a flush; answers the simulated µs."""
        return self._dev.write_nvm(_bytes("write_nvm", data, WRITE_FILE_BYTES_MAX), lba)

    @_command
    def load_program(self, program, pind=0, ptype=None, chunk_bytes=CHUNK_BYTES_DEFAULT):
        """Load Program (chunked) into slot ``pind``: ``program`` is bytes or a path (``.o``
        eBPF, ``.wasm``/``.wat`` WebAssembly)."""
        ptype = _ptype(program, ptype)
        data = _bytes("program", program, PROGRAM_FILE_BYTES_MAX)
        self._dev.load_program(data, ptype, pind, chunk_bytes)

    @_command
    def activate(self, pind=0):
        self._dev.activate(pind, True)

    @_command
    def deactivate(self, pind=0):
        self._dev.activate(pind, False)

    @_command
    def unload(self, pind=0):
        self._dev.unload(pind)

    @_command
    def create_range_set(self, ranges, engine=0):
        """A memory range set over SLM ``[(start_bytes, len_bytes), ...]`` on ``engine``'s
        compute namespace; answers its RSID."""
        return self._dev.create_range_set(list(ranges), self._engine(engine))

    @_command
    def delete_range_set(self, rsid):
        self._dev.delete_range_set(rsid)

    @_command
    def memory_copy(self, lbas, dest_bytes=0):
        """Memory Copy: NVM ``[(slba, nlb), ...]`` (LBAs of ``lba_bytes``) into SLM at
        ``dest_bytes``."""
        self._dev.memory_copy(list(lbas), dest_bytes)

    @_command
    def copy_within_slm(self, sources, dest_bytes):
        self._dev.copy_within_slm(list(sources), dest_bytes)

    @_command
    def memory_write(self, offset_bytes, data):
        self._dev.memory_write(offset_bytes, bytes(data))

    @_command
    def execute(self, rsid, cparam1=0, cparam2=0, pind=0, engine=0):
        """Execute Program: answers its 64-bit return."""
        return self._dev.execute(pind, rsid, cparam1, cparam2, self._engine(engine))

    @_command
    def memory_read(self, offset_bytes, len_bytes):
        """Memory Read: SLM bytes to the host."""
        return self._dev.memory_read(offset_bytes, len_bytes)

    def steps(self):
        """Every command so far: dicts of command, detail, latency_us, status."""
        return self._dev.steps()
