"""Batches in CUDA memory: the stream's side of `wsicudaupload` (docs/cuda.md).

Contract: a pipeline whose appsink receives `video/x-raw(memory:CUDAMemory)`
batches (standard_pipeline(..., cuda_upload=True) puts `wsicudaupload`
before it) yields `batch.images` as a torch uint8 NHWC tensor on the GPU
that shares the batch buffer (gstwsi_cuda maps it with GST_MAP_CUDA; the
tensor keeps the buffer alive): no host round trip.  `share_torch_context`
must run before such a pipeline leaves NULL, so that wsicudaupload copies
into PyTorch's CUDA context instead of making a second one.  Cost: one map
per batch, no copy (`copy=True` adds one device-to-device copy).  Needs
torch with CUDA and the `gstwsi_cuda` module of ext/cuda/tensor (PYTHONPATH,
and its library in GSTWSI_CUDA_LIBRARY or on the linker path); without them
the stream raises PipelineError saying which is missing.  Called from the
thread that iterates the stream.
"""
from ..errors import PipelineError

__all__ = ["is_cuda_sample", "cuda_images", "share_torch_context", "CUDA_FEATURE"]

CUDA_FEATURE = "memory:CUDAMemory"


def is_cuda_sample(sample):
    """True when the sample's caps carry CUDA memory (wsicudaupload's output)."""
    caps = sample.get_caps()
    features = caps.get_features(0) if caps is not None and caps.get_size() else None
    return features is not None and features.contains(CUDA_FEATURE)


def _gstwsi_cuda():
    try:
        import gstwsi_cuda
    except ImportError as exc:
        raise PipelineError(
            "the pipeline uploads batches to CUDA memory but the gstwsi_cuda module "
            f"is not importable ({exc}): put ext/cuda/tensor on PYTHONPATH "
            "(docs/cuda.md)") from None
    return gstwsi_cuda


def _cuda_torch():
    try:
        import torch
    except ImportError:
        raise PipelineError("the pipeline uploads batches to CUDA memory (wsicudaupload), "
                            "which needs torch with CUDA: torch is not installed") from None
    if not torch.cuda.is_available():
        raise PipelineError("the pipeline uploads batches to CUDA memory (wsicudaupload), "
                            "but torch sees no CUDA device (torch.cuda.is_available() "
                            "is False): leave cuda_upload off on this machine")
    return torch


def share_torch_context(pipeline):
    """Make the pipeline's CUDA elements use PyTorch's context (made here if
    torch has none yet); raises PipelineError when there is no CUDA."""
    torch = _cuda_torch()
    torch.empty(1, device="cuda")          # torch makes its primary context
    try:
        _gstwsi_cuda().share_torch_context(pipeline)
    except (OSError, RuntimeError) as exc:
        raise PipelineError(f"cannot share PyTorch's CUDA context with the pipeline: {exc}",
                            None, None) from None


def cuda_images(sample, copy=False):
    """The batch's pixels as a torch uint8 (N, H, W, C) CUDA tensor over the
    buffer (a device copy with `copy`)."""
    try:
        images = _gstwsi_cuda().as_tensor(sample)
    except (OSError, ValueError) as exc:
        raise PipelineError(f"cannot map a CUDA batch: {exc}", None, None) from None
    return images.clone() if copy else images
