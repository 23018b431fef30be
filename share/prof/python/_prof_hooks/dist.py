"""The rank of a process whose launcher set no RANK: a program that starts
its ranks itself (torch.multiprocessing.spawn, as PyTorch's DDP tutorial
does) names each one's rank only in init_process_group. After that call
returns, the rank goes to the agent (prof_fw_rank), so the run is parsed
per rank as under torchrun. A rank the environment named stands; the
agent says so in its log when the program names another.
"""
import functools
import os
import sys


def install(torch, agent, guard):
    """Wraps init_process_group where programs find it; returns whether it
    was wrapped (False without torch.distributed or an agent that takes
    no rank)."""
    dist = getattr(torch, "distributed", None)
    c10d = sys.modules.get("torch.distributed.distributed_c10d")
    if agent.set_rank is None or dist is None or c10d is None or \
            not dist.is_available():
        return False
    orig = getattr(c10d, "init_process_group", None)
    if orig is None or getattr(orig, "_prof_wrapped", False):
        return False

    @functools.wraps(orig)
    def init_process_group(*args, **kwargs):
        out = orig(*args, **kwargs)
        if guard.on:
            guard.call(_tell, dist, agent)
        return out

    init_process_group._prof_wrapped = True
    c10d.init_process_group = init_process_group
    if getattr(dist, "init_process_group", None) is orig:
        dist.init_process_group = init_process_group
    return True


# lib/common/agent_env.h: what the processes this one starts read as its rank
RANK_VAR = "PROF_AGENT_RANK"


def _tell(dist, agent):
    rank = dist.get_rank()
    if agent.set_rank(rank) == 0:
        # the processes it starts from now on (DataLoader workers, which
        # under torch.multiprocessing.spawn are spawned too) are its own
        os.environ[RANK_VAR] = str(rank)
    agent.log("init_process_group: rank %d of %d" % (rank, dist.get_world_size()))
