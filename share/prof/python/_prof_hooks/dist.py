"""The rank of a process whose launcher set no RANK: a program that starts
its ranks itself (torch.multiprocessing.spawn, as PyTorch's DDP tutorial
does) names each one's rank only in init_process_group. After that call
returns, the rank goes to the agent (prof_fw_rank), so the run is parsed
per rank as under torchrun. A rank the environment named stands; the
agent says so in its log when the program names another.

Code that bound init_process_group before prof's hooks were installed
(torch.distributed.device_mesh imports it with torch) calls torch's own:
for it, the rank is asked at each step end until the default group
exists.
"""
import functools
import os
import sys

# lib/common/agent_env.h: what the processes this one starts read as its rank
RANK_VAR = "PROF_AGENT_RANK"


class RankWatch:
    def __init__(self, agent, guard):
        self.agent = agent
        self.guard = guard
        self.dist = None
        self.told = False

    def install(self, torch):
        """Wraps init_process_group where programs find it; returns whether
        it was wrapped (False without torch.distributed or an agent that
        takes no rank)."""
        dist = getattr(torch, "distributed", None)
        c10d = sys.modules.get("torch.distributed.distributed_c10d")
        if self.agent.set_rank is None or dist is None or c10d is None or \
                not dist.is_available():
            return False
        orig = getattr(c10d, "init_process_group", None)
        if orig is None or getattr(orig, "_prof_wrapped", False):
            return False
        self.dist = dist
        watch = self

        @functools.wraps(orig)
        def init_process_group(*args, **kwargs):
            out = orig(*args, **kwargs)
            if watch.guard.on:
                watch.guard.call(watch._tell)
            return out

        init_process_group._prof_wrapped = True
        c10d.init_process_group = init_process_group
        if getattr(dist, "init_process_group", None) is orig:
            dist.init_process_group = init_process_group
        return True

    def at_step(self):
        """A step ended: the rank, if the default group came to be by a
        path that was not wrapped."""
        if not self.told and self.dist is not None and self.guard.on and \
                self.dist.is_initialized():
            self.guard.call(self._tell)

    def _tell(self):
        self.told = True
        rank = self.dist.get_rank()
        if self.agent.set_rank(rank) == 0:
            # the processes it starts from now on (DataLoader workers, which
            # under torch.multiprocessing.spawn are spawned too) are its own
            os.environ[RANK_VAR] = str(rank)
        self.agent.log("the default process group: rank %d of %d" % (
            rank, self.dist.get_world_size()))
