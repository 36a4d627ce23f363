# gst-wsi
# Copyright (C) 2026 gst-wsi developers
# SPDX-License-Identifier: LGPL-2.1-or-later
"""ViT-B/16- and ViT-L/16-sized encoders from plain torch, randomly
initialised (fixed seed), for timing feature extraction where no weights,
timm or torchvision may be available (the GPU machines carry only torch):

    wsi-extract SLIDES OUT --patch-size 224 --model vit_sized:vit_b16 ...

The shapes are ViT's (Dosovitskiy et al. 2021, table 1): a 16x16 patch
embedding (a strided convolution), a class token and learned position
embeddings, pre-norm encoder blocks (nn.TransformerEncoderLayer, GELU MLP),
a final LayerNorm, and the class token's output as the feature.
ViT-B/16: 768 wide, 12 blocks, 12 heads, MLP 3072, 85,798,656 parameters
without a head (timm's vit_base_patch16_224 with num_classes=0 has the
same); ViT-L/16: 1024 wide, 24 blocks, 16 heads, MLP 4096, 303,301,632;
ViT-Ti/16 (192 wide, 12 blocks, 3 heads, MLP 768) for quick runs on a CPU.
The compute per patch is therefore a real ViT's; the features mean nothing.
Works with torch 1.13 to 2.x.
"""
import torch
from torch import nn

__all__ = ["SizedViT", "vit_b16", "vit_l16", "vit_ti16"]


class SizedViT(nn.Module):
    def __init__(self, width, depth, heads, mlp, image=224, patch=16, name="vit",
                 device=None):
        super().__init__()
        self.enc_name = name
        self.patch = patch
        self.embed = nn.Conv2d(3, width, kernel_size=patch, stride=patch, device=device)
        self.cls = nn.Parameter(torch.zeros(1, 1, width, device=device))
        self.pos = nn.Parameter(torch.zeros(1, 1 + (image // patch) ** 2, width, device=device))
        layer = nn.TransformerEncoderLayer(width, heads, dim_feedforward=mlp, dropout=0.0,
                                           activation="gelu", batch_first=True,
                                           norm_first=True, layer_norm_eps=1e-6, device=device)
        # nested tensors only pay off with padding masks, and a pre-norm
        # layer cannot use them (torch warns otherwise)
        self.blocks = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(width, eps=1e-6, device=device)
        nn.init.trunc_normal_(self.pos, std=0.02)
        nn.init.trunc_normal_(self.cls, std=0.02)

    def forward(self, x):
        """x: N x 3 x 224 x 224 -> N x width (the class token)."""
        x = self.embed(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1).to(x.dtype), x], dim=1)
        x = self.blocks(x + self.pos.to(x.dtype))
        return self.norm(x[:, 0])


def _made(width, depth, heads, mlp, name, seed, device=None):
    # the same weights in every process: fp16 and bf16 runs, CPU and GPU
    # runs embed with one model
    state = torch.random.get_rng_state()
    torch.manual_seed(seed)
    try:
        return SizedViT(width, depth, heads, mlp, name=name, device=device)
    finally:
        torch.random.set_rng_state(state)


def vit_b16(device=None):
    """ViT-B/16-sized: 768 wide, 12 blocks, 12 heads, MLP 3072; features 768.
    `device` "meta" builds the shapes only (no memory, no init cost)."""
    return _made(768, 12, 12, 3072, "vit_b16_random", 16, device)


def vit_l16(device=None):
    """ViT-L/16-sized: 1024 wide, 24 blocks, 16 heads, MLP 4096; features 1024."""
    return _made(1024, 24, 16, 4096, "vit_l16_random", 24, device)


def vit_ti16(device=None):
    """ViT-Ti/16-sized: 192 wide, 12 blocks, 3 heads, MLP 768; features 192."""
    return _made(192, 12, 3, 768, "vit_ti16_random", 3, device)
