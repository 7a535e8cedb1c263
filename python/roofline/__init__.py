"""roofline: the roofline CLI's commands, called in process.

Each function takes the command's flags as keyword arguments (``--kv-heads 8`` is ``kv_heads=8``),
with the CLI's defaults and checks, and returns its JSON report (``--format json``) as dicts and
lists. A flag error or bad input raises :class:`InputError` with the CLI's message. See
docs/python.md.

    >>> import roofline
    >>> r = roofline.op("gemm", m=4096, n=4096, k=4096, gpu="h100")
    >>> r["results"]["op"][0]["intensity_flop_per_byte"]
"""

from ._roofline import Error, InputError, tool_version
from . import _roofline

__all__ = [
    "Error",
    "InputError",
    "attainable",
    "hardware",
    "llm",
    "models",
    "op",
    "plan",
    "ridge",
    "serve",
    "to_frame",
    "tool_version",
    "train",
]


def ridge(**flags):
    """``roofline ridge``: ridge points (peak / HBM bandwidth); ``gpu="all"`` is the memory wall."""
    return _roofline.run(["ridge"], [], flags)


def attainable(**flags):
    """``roofline attainable``: attainable FLOP/s at an arithmetic intensity (``ai=``)."""
    return _roofline.run(["attainable"], [], flags)


def op(kind, **flags):
    """``roofline op KIND``: one operation (gemm, gemv, elementwise, norm, softmax, attention, fuse)."""
    return _roofline.run(["op", kind], [], flags)


def llm(**flags):
    """``roofline llm``: one LLM deployment: memory, max batch, decode and prefill op by op."""
    return _roofline.run(["llm"], [], flags)


def train(**flags):
    """``roofline train``: training memory and step time."""
    return _roofline.run(["train"], [], flags)


def serve(**flags):
    """``roofline serve``: the serving engine simulated over a workload."""
    return _roofline.run(["serve"], [], flags)


def plan(**flags):
    """``roofline plan``: deployments searched against SLOs, best first."""
    return _roofline.run(["plan"], [], flags)


def hardware(gpu=None, **flags):
    """``roofline hw list`` (no ``gpu``), or ``roofline hw show GPU``."""
    if gpu is None:
        return _roofline.run(["hw", "list"], [], flags)
    return _roofline.run(["hw", "show"], [gpu], flags)


def models(models_dir=None):
    """Every model preset (and each ``models_dir`` file), as a report's ``inputs.model`` describes it."""
    if models_dir is None:
        directories = []
    elif isinstance(models_dir, (list, tuple)):
        directories = [str(d) for d in models_dir]
    else:
        directories = [str(models_dir)]
    return _roofline.models(directories)


def to_frame(result, table):
    """One table of a report (``result["results"][table]``) as a pandas DataFrame.

    ``result`` may be a list of reports (a sweep): their rows, in order, in one frame.
    """
    try:
        import pandas
    except ImportError as e:
        raise ImportError("roofline.to_frame needs pandas (Debian: apt install python3-pandas)") from e
    reports = result if isinstance(result, (list, tuple)) else [result]
    rows = []
    for report in reports:
        results = report["results"]
        if table not in results or not isinstance(results[table], list):
            tables = sorted(k for k, v in results.items() if isinstance(v, list))
            raise KeyError(f"{report['schema']} has no table '{table}' (tables: {', '.join(tables)})")
        rows.extend(results[table])
    return pandas.DataFrame(rows)
