"""standard_pipeline(cuda_upload=True) and BatchStream over CUDA batches
(gstwsi/_utils/cuda.py).  The CUDA tensors themselves need a GPU: they are
checked on one by tests/gpu/run.sh (examples/train_single_gpu.py
--cuda-upload); here, what holds on any machine."""
import pytest

import gstwsi
from gstwsi._utils.gst import Gst
from gstwsi._utils.cuda import is_cuda_sample
from gstwsi.settings import class_specs


def _needs_wsicudaupload():
    if class_specs("wsicudaupload") is None:
        pytest.skip("this build has no wsicudaupload (ext/cuda needs the CUDA toolkit headers)")


def _torch_sees_cuda():
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def test_cuda_upload_puts_wsicudaupload_before_the_appsink(slides):
    _needs_wsicudaupload()
    description = gstwsi.standard_pipeline(slides, batch_size=4, patch_size=32,
                                           cuda_upload=True)
    tail = description.split(" ! ")[-4:]
    assert tail[0].startswith("patchbatch ")
    assert tail[1].startswith("queue ")
    assert tail[2] == "wsicudaupload"
    assert tail[3].startswith("appsink ")
    plain = gstwsi.standard_pipeline(slides, batch_size=4, patch_size=32)
    assert "wsicudaupload" not in plain


def test_cuda_upload_without_a_gpu_raises_a_clear_error(slides):
    _needs_wsicudaupload()
    if _torch_sees_cuda():
        pytest.skip("torch sees a CUDA device here: the GPU path is run by tests/gpu/run.sh")
    description = gstwsi.standard_pipeline(slides, batch_size=4, patch_size=32,
                                           patches_per_slide=8, cuda_upload=True)
    stream = gstwsi.BatchStream(description, timeout=60)
    with pytest.raises(gstwsi.PipelineError, match="CUDA"):
        next(iter(stream))
    assert stream.next_batch() is None          # closed, not hanging


def test_system_memory_samples_are_not_cuda():
    caps = Gst.Caps.from_string("video/x-raw,format=RGB,width=8,height=8")
    sample = Gst.Sample.new(Gst.Buffer.new_allocate(None, 192, None), caps, None, None)
    assert not is_cuda_sample(sample)
    cuda_caps = Gst.Caps.from_string("video/x-raw(memory:CUDAMemory),format=RGB,width=8,height=8")
    assert is_cuda_sample(Gst.Sample.new(Gst.Buffer.new_allocate(None, 192, None),
                                         cuda_caps, None, None))
