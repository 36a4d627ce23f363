"""Pictures of what a pipeline sampled: slide overviews with boxes, contact sheets.

Contract: pure drawing over numpy arrays and PIL, no GStreamer.  Input is
what `gstwsi.preview` collected from a real pipeline: the overview (RGB,
H x W x 3 uint8) and tissue mask (H x W uint8, 255 = tissue) of a slide
buffer, the level-0 size of the slide, and the patch records (level-0 x, y,
footprint, out_mpp).  Output is PIL images; where each thing was drawn is
returned with them (`layout` dicts) so that tests and users can find it.

Colours: one `MppColours` per run, made from every out_mpp of the run, so a
colour means the same resolution on every slide and on the contact sheet.
Resolutions within 2.5 % of each other are one group (patchreader reads
0.499 µm/px for a 0.5 target on a 0.499 µm/px scan: the same magnification).
Up to 8 groups get categorical colours (multi-magnification); more get a
continuous log-scale colour map with a colour bar (continuous-magnification).
The mask is shown as a cyan outline and a light cyan tint over the
background, a colour that neither scheme uses.  With annotation regions
(patchsampler annotation-mode), the region outlines are drawn in one colour
per class (`ClassColours`) and each box in the colour of its patch's label,
so a box of the wrong colour inside an outline shows a labelling error.

Cost: O(overview pixels + patches); a 1024 px overview with a few thousand
boxes draws in well under a second.  Not thread-safe per image (PIL).
"""
import math
import os
import re

import numpy as np
from PIL import Image, ImageDraw, ImageFont

__all__ = ["ClassColours", "MppColours", "OUTLINE", "draw_slide", "draw_contact_sheet",
           "mask_outline"]

# ColorBrewer Set1 without its yellow (invisible on glass): categorical mpps.
PALETTE = [(228, 26, 28), (55, 126, 184), (77, 175, 74), (152, 78, 163),
           (255, 127, 0), (166, 86, 40), (247, 129, 191), (90, 90, 90)]
# viridis at 0, 1/4, 1/2, 3/4, 1: continuous mpps.
_VIRIDIS = np.array([(68, 1, 84), (59, 82, 139), (33, 145, 140), (94, 201, 98),
                     (253, 231, 37)], dtype=np.float64)
OUTLINE = (0, 255, 255)
VEIL = 0.15          # share of OUTLINE blended into background pixels
OUTLINE_BLEND = 0.7  # share of OUTLINE in outline pixels (the slide shows through)
SAME_MPP = 0.025     # relative width of one resolution group
DARK = 100           # mean overview brightness under which boxes get a white halo
BACKGROUND = (255, 255, 255)
TEXT = (0, 0, 0)
MARGIN = 8

_FONT_PATHS = ["/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"]


def font(size):
    """DejaVu Sans at `size` px (fonts-dejavu-core), else PIL's bitmap font."""
    for path in _FONT_PATHS:
        if os.path.exists(path):
            return ImageFont.truetype(path, size)
    return ImageFont.load_default()


def _text_width(draw, text, fnt):
    left, _, right, _ = draw.textbbox((0, 0), text, font=fnt)
    return right - left


def mpp_text(mpp, digits=3):
    return "mpp unknown" if mpp <= 0 else f"{mpp:.{digits}g} µm/px"


def _groups(values):
    """Sorted values cut into groups [first, last] no wider than SAME_MPP
    (relative to the first); 0 (unknown) is a group of its own."""
    groups = []
    for v in values:
        if groups and groups[-1][0] > 0 and v <= groups[-1][0] * (1 + SAME_MPP):
            groups[-1][1] = v
        else:
            groups.append([v, v])
    return groups


class MppColours:
    """Colour of each output resolution (out_mpp) of one run."""

    def __init__(self, mpps):
        mpps = np.asarray(mpps, dtype=np.float64).ravel()
        self.values = np.unique(mpps)
        self.groups = _groups(self.values)
        self.continuous = len(self.groups) > len(PALETTE)
        positive = self.values[self.values > 0]
        self.lo = float(positive.min()) if positive.size else 0.0
        self.hi = float(positive.max()) if positive.size else 0.0

    def group(self, mpp):
        """Index of the group holding `mpp` (a value of the run)."""
        mpp = float(mpp)
        for i, (first, last) in enumerate(self.groups):
            if first <= mpp <= last:
                return i
        # not a value of the run: the nearest group
        return int(np.argmin([min(abs(mpp - a), abs(mpp - b)) for a, b in self.groups]))

    def label(self, index):
        first, last = self.groups[index]
        if first == last or f"{first:.3g}" == f"{last:.3g}":
            return mpp_text(first)
        return f"{first:.3g}–{last:.3g} µm/px"

    def colour(self, mpp):
        if not self.continuous:
            return PALETTE[self.group(mpp) % len(PALETTE)]
        return self.ramp(self.position(float(mpp)))

    def position(self, mpp):
        """0..1 along the colour bar (log scale: mpp is a zoom factor)."""
        if mpp <= 0 or self.hi <= self.lo:
            return 0.0
        return min(1.0, max(0.0, math.log(mpp / self.lo) / math.log(self.hi / self.lo)))

    @staticmethod
    def ramp(t):
        f = t * (len(_VIRIDIS) - 1)
        i = min(int(f), len(_VIRIDIS) - 2)
        c = _VIRIDIS[i] + (f - i) * (_VIRIDIS[i + 1] - _VIRIDIS[i])
        return tuple(int(round(v)) for v in c)


class ClassColours:
    """One colour per annotation class, in the order classes are first met
    (the stream's class list first, so ids keep their colours); excluded and
    other classes a patch never gets are grey."""

    def __init__(self, sampled=()):
        self.names = []
        for name in sampled:
            self.index(name)

    def index(self, name):
        if name not in self.names:
            self.names.append(name)
        return self.names.index(name)

    def colour(self, name, sampled=True):
        if not sampled:
            return (150, 150, 150)
        return PALETTE[self.index(name) % len(PALETTE)]


def draw_regions(draw, regions, scale_x, scale_y, classes, sampled):
    """Outlines every region ring (level-0 points) at overview scale, holes
    dashed by a thinner line; `sampled`: the class names patches may get."""
    for name, rings in regions:
        classes.index(name)           # listed in the legend, even if grey
        colour = classes.colour(name, name in sampled)
        for k, ring in enumerate(rings):
            points = [(float(x) * scale_x, float(y) * scale_y) for x, y in ring]
            draw.line(points + points[:1], fill=colour, width=3 if k == 0 else 2)


def mask_outline(mask):
    """Boolean image of the tissue pixels that touch background (4-neighbours)."""
    tissue = mask > 127
    padded = np.pad(tissue, 1, constant_values=False)
    inner = (padded[:-2, 1:-1] & padded[2:, 1:-1] & padded[1:-1, :-2] & padded[1:-1, 2:])
    return tissue & ~inner


def box_of(record, scale_x, scale_y):
    """Overview-pixel rectangle (x0, y0, x1, y1), inclusive, of a record."""
    x0 = int(math.floor(record["x"] * scale_x))
    y0 = int(math.floor(record["y"] * scale_y))
    x1 = int(math.floor((record["x"] + record["footprint"]) * scale_x)) - 1
    y1 = int(math.floor((record["y"] + record["footprint"]) * scale_y)) - 1
    return x0, y0, max(x0, x1), max(y0, y1)


def _blend(colour, share, base=BACKGROUND):
    return tuple(int(round(share * c + (1 - share) * b)) for c, b in zip(colour, base))


def _legend(draw, x, y, colours, counts, show_outline):
    """Draws the legend at (x, y); `counts`: patches per group index.
    Returns its bottom."""
    small = font(12)
    if show_outline:
        draw.rectangle([x, y + 2, x + 14, y + 14], outline=OUTLINE, width=2)
        draw.text((x + 22, y), "tissue mask outline", fill=TEXT, font=small)
        y += 18
        draw.rectangle([x, y + 2, x + 14, y + 14], fill=_blend(OUTLINE, VEIL))
        draw.text((x + 22, y), "not tissue (tinted)", fill=TEXT, font=small)
        y += 22
    draw.text((x, y), "patch boxes, by output mpp:", fill=TEXT, font=small)
    y += 18
    if colours.continuous:
        height = 120
        for i in range(height):
            draw.line([x, y + i, x + 14, y + i], fill=colours.ramp(1 - i / (height - 1)))
        draw.text((x + 22, y - 2), mpp_text(colours.hi), fill=TEXT, font=small)
        draw.text((x + 22, y + height - 14), mpp_text(colours.lo), fill=TEXT, font=small)
        total = int(sum(counts.values()))
        draw.text((x + 22, y + height // 2 - 7), f"{total} patches", fill=TEXT, font=small)
        return y + height + 6
    for index in sorted(counts):
        draw.rectangle([x, y + 2, x + 14, y + 14], outline=PALETTE[index % len(PALETTE)],
                       width=2)
        draw.text((x + 22, y), f"{colours.label(index)}  ({counts[index]})", fill=TEXT,
                  font=small)
        y += 18
    if not counts:
        draw.text((x + 22, y), "(none)", fill=TEXT, font=small)
        y += 18
    return y


def _wrap(draw, text, fnt, width):
    """`text` cut into lines no wider than `width` pixels, preferably after
    a space, '-', '_' or '/' (file names), else anywhere."""
    lines = []
    for paragraph in text.split("\n"):
        line = ""
        for token in re.findall(r"[^\s_/-]*[\s_/-]?", paragraph):
            if _text_width(draw, (line + token).rstrip(), fnt) <= width:
                line += token
                continue
            if line.strip():
                lines.append(line.rstrip())
            line = token
            while _text_width(draw, line.rstrip(), fnt) > width and len(line) > 1:
                cut = len(line) - 1        # a token wider than the line
                while cut > 1 and _text_width(draw, line[:cut], fnt) > width:
                    cut -= 1
                lines.append(line[:cut])
                line = line[cut:]
        lines.append(line.rstrip())
    return lines


def _class_legend(draw, x, y, classes, counts, sampled):
    """Legend of the annotation classes: outline colour, patches per class."""
    small = font(12)
    draw.text((x, y), "regions and boxes, by class:", fill=TEXT, font=small)
    y += 18
    for name in classes.names:
        colour = classes.colour(name, name in sampled)
        draw.rectangle([x, y + 2, x + 14, y + 14], outline=colour, width=3)
        shown = name or "(no class)"
        suffix = f"  ({counts.get(name, 0)})" if name in sampled else "  (not sampled)"
        draw.text((x + 22, y), shown + suffix, fill=TEXT, font=small)
        y += 18
    return y


def draw_slide(slide, records, colours, note="", labels=None, classes=None):
    """One slide's picture: title, overview, mask outline, boxes, legend.

    `slide`: dict with name, width, height (level 0), overview (H x W x 3 or
    None), mask (H x W or None), overview_width, overview_height and a
    `caption` line, and optionally `regions` (list of (class name, rings of
    level-0 points)) and `sampled_classes`.  `labels`: each record's label,
    used with `classes` (a ClassColours) to colour boxes by class.  Returns
    (PIL image, layout) where layout gives the overview's origin in the
    image and the level-0 -> overview scale.
    """
    ow, oh = slide["overview_width"], slide["overview_height"]
    if slide.get("overview") is not None:
        canvas = np.array(slide["overview"], dtype=np.uint8, copy=True)
    else:
        canvas = np.full((oh, ow, 3), 200, np.uint8)      # grey: no overview sent
    if slide.get("mask") is not None:
        # tint the background and blend the outline: the slide stays visible
        # under fragmented masks
        cyan = np.array(OUTLINE, np.float32)
        background = slide["mask"] <= 127
        canvas[background] = (canvas[background] * (1 - VEIL) + cyan * VEIL).round()
        edge = mask_outline(slide["mask"])
        canvas[edge] = (canvas[edge] * (1 - OUTLINE_BLEND) + cyan * OUTLINE_BLEND).round()
    scale_x = ow / float(slide["width"])
    scale_y = oh / float(slide["height"])
    overview = Image.fromarray(canvas)
    draw = ImageDraw.Draw(overview)
    boxes = [box_of(record, scale_x, scale_y) for record in records]
    if canvas.mean() < DARK:
        # dark (fluorescence) overviews: a white halo first, under every
        # box, so that boxes stand out from a signal of their own colour
        for x0, y0, x1, y1 in boxes:
            draw.rectangle([x0 - 1, y0 - 1, x1 + 1, y1 + 1], outline=BACKGROUND,
                           width=(2 if x1 - x0 >= 8 else 1) + 2)
    regions = slide.get("regions") or []
    sampled = set(slide.get("sampled_classes") or [])
    by_class = classes is not None and labels is not None and bool(regions)
    if by_class:
        draw_regions(draw, regions, scale_x, scale_y, classes, sampled)
    counts = {}
    for i, (record, box) in enumerate(zip(records, boxes)):
        width = 2 if box[2] - box[0] >= 8 else 1
        if by_class:
            colour = classes.colour(labels[i])
            key = labels[i]
        else:
            colour = colours.colour(record["out_mpp"])
            key = colours.group(record["out_mpp"])
        draw.rectangle(box, outline=colour, width=width)
        counts[key] = counts.get(key, 0) + 1

    title_font, small = font(15), font(12)
    title_h = 44
    legend_w = 230
    image = Image.new("RGB", (MARGIN * 3 + ow + legend_w,
                              MARGIN * 2 + title_h + max(oh, 200)), BACKGROUND)
    draw = ImageDraw.Draw(image)
    draw.text((MARGIN, MARGIN), slide["name"], fill=TEXT, font=title_font)
    draw.text((MARGIN, MARGIN + 20), slide.get("caption", ""), fill=TEXT, font=small)
    origin = (MARGIN, MARGIN + title_h)
    image.paste(overview, origin)
    legend_x = MARGIN * 2 + ow
    if by_class:
        bottom = _class_legend(draw, legend_x, origin[1], classes, counts, sampled)
    else:
        bottom = _legend(draw, legend_x, origin[1], colours, counts,
                         slide.get("mask") is not None)
    if note:
        for i, line in enumerate(_wrap(draw, note, small, legend_w - 4)[:12]):
            draw.text((legend_x, bottom + 8 + 16 * i), line, fill=(160, 0, 0), font=small)
    layout = {"origin": origin, "scale": (scale_x, scale_y),
              "overview_size": (ow, oh), "size": image.size}
    return image, layout


def draw_stain(name, before, after, reference, method):
    """The slide's overview before and after stain normalisation, next to
    the target (the reference image, or the built-in target's two stains
    drawn as swatches of rising concentration). Returns a PIL image."""
    h, w = before.shape[:2]
    if reference is None:
        # built-in Macenko target: H, E and their mix at concentrations 0..2
        from ._utils.stain import HE_REF, IO
        c = np.linspace(0, 2, max(w // 3, 8))
        rows = []
        for mix in ((1, 0), (0, 1), (0.5, 0.5)):
            od = np.outer(c, HE_REF @ np.array(mix, float))
            rows.append(np.repeat((IO * np.exp(-od))[None], max(h // 3, 8), axis=0))
        reference = np.clip(np.concatenate(rows), 0, 255).astype(np.uint8)
    ref = Image.fromarray(reference)
    ref = ref.resize((max(1, round(ref.width * h / ref.height)), h))
    fnt = font(14)
    top = 2 * MARGIN + 16
    width = w * 2 + ref.width + 4 * MARGIN
    image = Image.new("RGB", (width, top + h + MARGIN), BACKGROUND)
    draw = ImageDraw.Draw(image)
    x = MARGIN
    for title, panel in ((f"{name}: before", Image.fromarray(before)),
                         (f"after ({method})", Image.fromarray(after)),
                         ("target", ref)):
        draw.text((x, MARGIN), title, fill=TEXT, font=fnt)
        image.paste(panel, (x, top))
        x += panel.width + MARGIN
    return image


def _thumbnail(pixels, size):
    image = Image.fromarray(np.ascontiguousarray(pixels[..., :3]))
    if image.size != (size, size):
        image = image.resize((size, size), Image.BOX)
    return image


def draw_contact_sheet(rows, colours, columns, thumb):
    """A grid of decoded patches: one row per slide (name on the left), one
    cell per patch in stream order, framed in its mpp colour and labelled
    with its mpp.  `rows`: list of (slide name, [(pixels H x W x C, record)]).
    Returns (PIL image, layout) with each cell's position."""
    small = font(11)
    border, label_h, gap, header_w = 3, 16, 6, 170
    cell_w = thumb + 2 * border
    cell_h = thumb + 2 * border + label_h
    width = MARGIN * 2 + header_w + columns * (cell_w + gap)
    height = MARGIN * 2 + 22 + max(1, len(rows)) * (cell_h + gap)
    image = Image.new("RGB", (width, height), BACKGROUND)
    draw = ImageDraw.Draw(image)
    draw.text((MARGIN, MARGIN), f"sampled patches (first {columns} per slide, stream order), "
              f"framed by output mpp", fill=TEXT, font=font(13))
    cells = []
    for r, (name, patches) in enumerate(rows):
        y = MARGIN + 22 + r * (cell_h + gap)
        lines = _wrap(draw, name, small, header_w - 8)[:4]
        top = y + cell_h // 2 - 7 * len(lines)
        for i, line in enumerate(lines):
            draw.text((MARGIN, top + 14 * i), line, fill=TEXT, font=small)
        for c, (pixels, record) in enumerate(patches[:columns]):
            x = MARGIN + header_w + c * (cell_w + gap)
            colour = colours.colour(record["out_mpp"])
            draw.rectangle([x, y, x + cell_w - 1, y + thumb + 2 * border - 1], fill=colour)
            image.paste(_thumbnail(pixels, thumb), (x + border, y + border))
            draw.text((x + border, y + thumb + 2 * border + 1),
                      mpp_text(float(record["out_mpp"]), 4), fill=TEXT, font=small)
            cells.append({"row": r, "column": c, "x": x + border, "y": y + border,
                          "size": thumb, "slide_index": int(record["slide_index"]),
                          "record_x": int(record["x"]), "record_y": int(record["y"]),
                          "out_mpp": float(record["out_mpp"])})
    return image, {"cells": cells, "size": image.size, "columns": columns, "rows": len(rows)}
