# gst-wsi
# Copyright (C) 2026 gst-wsi developers
# SPDX-License-Identifier: LGPL-2.1-or-later
"""tests/gpu/vit_sized.py, the ViT-sized models the GPU extraction proof
times (tests/gpu/run.sh, part extract): their parameter counts are those
timm publishes for vit_tiny/base/large_patch16_224 without a head (so
the work per patch is a real ViT's), the weights are the same in every
process, and each feature row depends on its own patch only."""
import os
import sys

import pytest

torch = pytest.importorskip("torch", reason="python3-torch not installed")

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "gpu"))
import vit_sized  # noqa: E402


def _params(width, depth, mlp, tokens=197, patch=16):
    # ViT's parameters counted by hand: patch embedding, class token,
    # positions, per block qkv + projection + MLP + 2 LayerNorms, final norm
    block = (width * 3 * width + 3 * width) + (width * width + width) \
        + (width * mlp + mlp) + (mlp * width + width) + 4 * width
    return 3 * patch * patch * width + width + width + tokens * width + depth * block \
        + 2 * width


def test_parameter_counts_are_vits():
    # timm: vit_tiny_patch16_224 5,717,416 with its 1000-class head
    # (192*1000+1000), vit_base_patch16_224 86,567,656 with its head
    # (768*1000+1000), vit_large_patch16_224 304,326,632 (1024*1000+1000)
    assert _params(192, 12, 768) + 193_000 == 5_717_416
    assert _params(768, 12, 3072) + 769_000 == 86_567_656
    assert _params(1024, 24, 4096) + 1_025_000 == 304_326_632
    # shapes only ("meta": no memory, no init cost)
    for make, want, depth, heads in ((vit_sized.vit_ti16, 5_524_416, 12, 3),
                                     (vit_sized.vit_b16, 85_798_656, 12, 12),
                                     (vit_sized.vit_l16, 303_301_632, 24, 16)):
        m = make(device="meta")
        assert sum(p.numel() for p in m.parameters()) == want, make.__name__
        assert len(m.blocks.layers) == depth, make.__name__
        assert m.blocks.layers[0].self_attn.num_heads == heads, make.__name__


def test_same_weights_and_rows_independent():
    a, b = vit_sized.vit_ti16().eval(), vit_sized.vit_ti16().eval()
    for (ka, va), (kb, vb) in zip(a.state_dict().items(), b.state_dict().items()):
        assert ka == kb and torch.equal(va, vb), ka
    assert a.enc_name == "vit_ti16_random"
    g = torch.Generator().manual_seed(5)
    x = torch.rand(3, 3, 224, 224, generator=g)
    with torch.inference_mode():
        y = a(x)
        y1 = a(x[1:2])
    assert y.shape == (3, 192) and torch.isfinite(y).all()
    assert torch.allclose(y[1:2], y1, atol=1e-4)
    assert not torch.allclose(y[0], y[1], atol=1e-3)
