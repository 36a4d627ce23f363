# gst-wsi: the gstwsi_cuda helper's system-memory path (runs without a GPU)
import sys

import gi
gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402
import numpy as np  # noqa: E402

import gstwsi_cuda  # noqa: E402

Gst.init(None)
P, B = 8, 4
caps = Gst.Caps.from_string(
    "video/x-raw,format=RGB,width=%d,height=%d,framerate=0/1" % (P, P * B))
pixels = np.arange(B * P * P * 3, dtype=np.uint64).astype(np.uint8)
buf = Gst.Buffer.new_wrapped(pixels.tobytes())

view = gstwsi_cuda.BatchView(buf, caps)
assert not view.is_cuda and view.shape == (B, P, P, 3), view.shape
arr = np.asarray(view)
assert arr.shape == (B, P, P, 3) and not arr.flags.writeable
assert (arr.reshape(-1) == pixels).all(), "view does not show the buffer"
assert not hasattr(view, "__cuda_array_interface__")
del buf  # the view keeps the buffer alive
assert int(arr[1, 2, 3, 1]) == int(pixels[((1 * P + 2) * P + 3) * 3 + 1])

try:
    gstwsi_cuda.BatchView(Gst.Buffer.new_wrapped(pixels.tobytes()), caps, 5)
    sys.exit("a 5-row patch height must be refused")
except ValueError as e:
    assert "patches" in str(e)

try:
    gstwsi_cuda.share_torch_context(Gst.Pipeline.new())
    print("a CUDA context was current: shared")
except RuntimeError as e:
    print("SKIP: share_torch_context: no CUDA device:", e)


# The CUDA interface, described without a GPU: PyTorch's as_tensor refuses
# one marked read-only (data=(ptr, True)); seen on an H100 (issue 25).
cuda_view = object.__new__(gstwsi_cuda.BatchView)
cuda_view.is_cuda, cuda_view.device_id = True, 0
cuda_view.shape, cuda_view.strides = (B, P, P, 3), (P * P * 4, P * 4, 3, 1)
cuda_view.data = 0x7f0000000000
iface = cuda_view.__cuda_array_interface__
assert iface["data"] == (0x7f0000000000, False), iface["data"]
assert iface["version"] == 3 and iface["stream"] is None
assert iface["shape"] == (B, P, P, 3) and iface["typestr"] == "|u1"

try:
    import torch
except ImportError:
    torch = None
if torch is not None:
    sample = Gst.Sample.new(Gst.Buffer.new_wrapped(pixels.tobytes()), caps,
                            None, None)
    t = gstwsi_cuda.as_tensor(sample)
    assert t.device.type == "cpu" and tuple(t.shape) == (B, P, P, 3)
    assert int(t[3, 7, 7, 2]) == int(pixels[-1])
    print("torch CPU path ok")
print("ok")
