"""What a feature-extraction job draws of a slide besides its H5 files:
the tissue contours as GeoJSON (`contours_geojson/<name>.geojson`, level-0
pixel coordinates, one Polygon a tissue region with its holes, as TRIDENT
writes them and QuPath imports them) and the overview with the patch grid
drawn on it (`visualization/<name>.jpg`).  Both from the slide's overview
and tissue mask as tissuemask attached them (no extra read of the slide);
written to a temporary name and renamed.  Needs OpenCV's Python module
for the contours (python3-opencv) and PIL for the picture (python3-pil).
"""
import json
import os
import socket

import numpy as np

__all__ = ["write_contours", "write_visualization"]


def _replace(path, write):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.tmp-{socket.gethostname()}-{os.getpid()}"
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _ring(contour, sx, sy):
    pts = contour.reshape(-1, 2).astype(np.float64) * (sx, sy)
    ring = [[round(float(x), 2), round(float(y), 2)] for x, y in pts]
    return ring + [ring[0]]


def write_contours(path, mask, width, height):
    """The tissue regions of `mask` (overview-sized, nonzero = tissue) as a
    GeoJSON FeatureCollection in level-0 pixels of a width x height slide."""
    import cv2
    binary = (np.asarray(mask) > 0).astype(np.uint8)
    sx, sy = width / binary.shape[1], height / binary.shape[0]
    found = cv2.findContours(binary, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_SIMPLE)
    contours, hierarchy = found[-2], found[-1]
    features = []
    if hierarchy is not None:
        hierarchy = hierarchy.reshape(-1, 4)
        for i, (nxt, prev, child, parent) in enumerate(hierarchy):
            if parent != -1 or len(contours[i]) < 3:
                continue
            rings = [_ring(contours[i], sx, sy)]
            c = child
            while c != -1:
                if len(contours[c]) >= 3:
                    rings.append(_ring(contours[c], sx, sy))
                c = hierarchy[c][0]
            features.append({"type": "Feature", "id": len(features),
                             "geometry": {"type": "Polygon", "coordinates": rings},
                             "properties": {"tissue_id": len(features),
                                            "objectType": "annotation",
                                            "classification": {"name": "Tissue"}}})

    def write(tmp):
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump({"type": "FeatureCollection", "features": features}, f)
    _replace(path, write)
    return len(features)


def write_visualization(path, overview, coords, footprint, width, height, caption=""):
    """The overview (RGB) with a rectangle per patch (level-0 top-left
    `coords`, side `footprint`), as JPEG."""
    from PIL import Image, ImageDraw
    img = Image.fromarray(np.ascontiguousarray(overview[..., :3])).convert("RGB")
    if max(img.size) < 1000:            # big enough to see a patch's outline
        k = 1000 / max(img.size)
        img = img.resize((max(1, round(img.width * k)), max(1, round(img.height * k))),
                         Image.BILINEAR)
    sx, sy = img.width / width, img.height / height
    draw = ImageDraw.Draw(img)
    for x, y in np.asarray(coords).reshape(-1, 2):
        draw.rectangle([x * sx, y * sy, (x + footprint) * sx - 1, (y + footprint) * sy - 1],
                       outline=(255, 0, 0))
    if caption:
        draw.rectangle([0, 0, 8 + 6 * len(caption), 16], fill=(0, 0, 0))
        draw.text((4, 3), caption, fill=(255, 255, 255))
    _replace(path, lambda tmp: img.save(tmp, format="JPEG", quality=90))
