"""How the library-side scripts (torch_*.py) time PyTorch: calls captured in one CUDA graph and timed
by replaying it, as roofline's own runner times its kernels."""
import statistics

import torch


def time_graph(fn, launches, samples, warmups=None):
    """fn(i) makes call i (a script rotating through copies of its inputs uses i). `warmups` calls
    (all `launches` by default) run first outside the graph, for workspace allocation and
    autotuning; then one graph of `launches` calls is replayed `samples` times. Returns the median,
    minimum and maximum of the time per call, in us."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for i in range(launches if warmups is None else warmups):
            fn(i % launches)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for i in range(launches):
            fn(i)
    graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(samples):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1000.0 / launches)
    return statistics.median(times), min(times), max(times)
