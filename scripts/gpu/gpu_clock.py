"""The GPU's current SM clock, read with nvidia-smi: what the library-side scripts (torch_*.py) record
beside each timing, as roofline's own runs record theirs."""
import subprocess


def sm_clock():
    """The first GPU's SM clock in MHz, or None where nvidia-smi is missing or says nothing."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=10).stdout.strip()
        return float(out.splitlines()[0])
    except Exception:  # noqa: BLE001 - a missing tool is "not recorded"
        return None
