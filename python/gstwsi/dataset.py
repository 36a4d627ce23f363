"""A torch IterableDataset over BatchStream, sharded across DDP ranks and
DataLoader workers.

Each DataLoader worker builds its own BatchStream (GStreamer cannot be
carried over fork(): use multiprocessing_context="spawn" or "forkserver").
wsislidesrc's rank/world-size become

    global rank  = rank * num_workers + worker_id
    global world = world_size * num_workers

so the slides are split disjointly across ranks, then across each rank's
workers.  See docs/python.md, "Epochs, workers and fork safety".
"""
import os

import torch
import torch.utils.data

from ._utils.elements import elements_of
from .pipeline import standard_pipeline
from .stream import BatchStream

__all__ = ["WsiIterableDataset", "shard"]

_INT_COLUMNS = ("slide_index", "x", "y", "level", "cycle", "sequence")
_FLOAT_COLUMNS = (("mpp", "out_mpp"), ("tissue_fraction", "tissue_fraction"))


def shard(rank, world_size, worker_id, num_workers):
    """(wsislidesrc rank, world-size) of one worker of one DDP rank."""
    rank, world_size = int(rank), int(world_size)
    worker_id, num_workers = int(worker_id), int(num_workers)
    if not (0 <= rank < world_size and 0 <= worker_id < num_workers):
        raise ValueError(f"rank {rank}/{world_size}, worker {worker_id}/{num_workers} "
                         f"out of range")
    return rank * num_workers + worker_id, world_size * num_workers


def _ddp_rank():
    """(rank, world size): torch.distributed when initialised, else RANK/WORLD_SIZE."""
    dist = torch.distributed
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1))


class WsiIterableDataset(torch.utils.data.IterableDataset):
    """Batches of a gst-wsi pipeline, one BatchStream per DataLoader worker.

    ```python
    ds = gstwsi.WsiIterableDataset(location="slides/", batch_size=64, cycle=False)
    loader = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=4,
                                         multiprocessing_context="spawn")
    for epoch in range(epochs):
        ds.set_epoch(epoch)
        for batch in loader:
            train(batch["images"], batch["slide_index"])
    ```

    `description`: a pipeline description (its wsislidesrc gets rank and
    world-size overridden), or None and `**pipeline` keyword arguments of
    `standard_pipeline` (`location=` required).  `rank`/`world_size`: the DDP
    rank (None: torch.distributed when initialised, else RANK/WORLD_SIZE, else
    0/1).  `worker_id`/`num_workers`: None reads torch's worker info (0/1 in
    the main process); pass them to shard by hand.  Yields one dict per batch
    (`DataLoader(batch_size=None)`): "images" (uint8 N,H,W,C tensor), int64
    tensors "slide_index", "x", "y", "level", "cycle", "sequence", float
    tensors "mpp", "tissue_fraction", float64 tensor "slide_mpp" (the slide's
    level-0 um/px, 0 = unknown), lists "paths", "labels", "uris", ints "index",
    "epoch"; "views" ({view name: tensor}) for multi-view pipelines and
    "columns" ({name: tensor, or list of str}) when slides have columns;
    float32 N,C,H,W "images" with patchbatch normalize=true.  Batches are copied (copy=True by default): they leave the
    worker through shared memory anyway.
    """

    def __init__(self, description=None, *, rank=None, world_size=None, worker_id=None,
                 num_workers=None, epoch=0, start_batch=0, copy=True, timeout=120.0,
                 **pipeline):
        super().__init__()
        if (description is None) == (not pipeline):
            if description is None:
                raise TypeError("pass a pipeline description or standard_pipeline "
                                "keyword arguments (location=...)")
            raise TypeError("pass a description or keyword arguments, not both")
        self.description = description
        self.pipeline_kwargs = pipeline
        self.rank = rank
        self.world_size = world_size
        self.worker_id = worker_id
        self.num_workers = num_workers
        self.epoch = int(epoch)
        self.start_batch = int(start_batch)
        self.copy = copy
        self.timeout = timeout

    def set_epoch(self, epoch):
        """The epoch the next iteration plays (workers see it when the
        DataLoader starts them, i.e. at each `iter(loader)` without
        persistent_workers)."""
        self.epoch = int(epoch)

    def shard(self):
        """(wsislidesrc rank, world-size) of the calling worker."""
        rank, world = self.rank, self.world_size
        if rank is None or world is None:
            env_rank, env_world = _ddp_rank()
            rank = env_rank if rank is None else rank
            world = env_world if world is None else world
        worker_id, num_workers = self.worker_id, self.num_workers
        if worker_id is None or num_workers is None:
            info = torch.utils.data.get_worker_info()
            worker_id = (info.id if info else 0) if worker_id is None else worker_id
            num_workers = (info.num_workers if info else 1) if num_workers is None else num_workers
        return shard(rank, world, worker_id, num_workers)

    def make_stream(self):
        """This worker's BatchStream (not started)."""
        global_rank, global_world = self.shard()
        if self.description is None:
            kwargs = dict(self.pipeline_kwargs)
            kwargs["rank"], kwargs["world_size"] = global_rank, global_world
            description = standard_pipeline(**kwargs)
        else:
            description = self.description
        stream = BatchStream(description, torch=True, copy=self.copy,
                             start_batch=self.start_batch, start_epoch=self.epoch,
                             timeout=self.timeout)
        sources = elements_of(stream.pipeline, "wsislidesrc")
        if len(sources) != 1:
            stream.close()
            raise ValueError("the pipeline must have exactly one wsislidesrc")
        sources[0].set_property("world-size", global_world)
        sources[0].set_property("rank", global_rank)
        return stream

    def __iter__(self):
        stream = self.make_stream()
        try:
            for batch in stream:
                out = {"images": batch.images}
                for name in _INT_COLUMNS:
                    out[name] = torch.from_numpy(batch.records[name].astype("int64"))
                for name, column in _FLOAT_COLUMNS:
                    out[name] = torch.from_numpy(batch.records[column].astype("float32"))
                out["paths"] = batch.paths
                out["labels"] = batch.labels
                out["uris"] = batch.uris
                out["slide_mpp"] = torch.from_numpy(batch.slide_mpp)
                out["index"] = batch.index
                out["epoch"] = batch.epoch
                if batch.views is not None:
                    out["views"] = batch.views
                if batch.columns:
                    out["columns"] = {name: torch.from_numpy(values)
                                      if values.dtype.kind in "if" else values.tolist()
                                      for name, values in batch.columns.items()}
                yield out
        finally:
            stream.close()
