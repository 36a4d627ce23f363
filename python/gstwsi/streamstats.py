"""The `wsi-stream-stats` bus message of patchbatch (`stats-interval`), as Python.

patchbatch posts it every `stats-interval` ms and at EOS (docs/design.md,
"Stream statistics"); `BatchStream` keeps the latest one as
`stream.stream_stats` (this module's dict) and `Monitor` flattens it into
`pipeline/...` keys.
"""

__all__ = ["MESSAGE_NAME", "COUNTERS", "stats_dict", "flat_keys"]

MESSAGE_NAME = "wsi-stream-stats"

# Upstream counters the message may carry (absent: no element counts it).
COUNTERS = ("slides-opened", "slides-failed", "slides-damaged", "slides-rejected", "slides-blank",
            "slides-without-regions", "patches-planned", "patches-read", "patches-dropped", "patches-rejected")


def _list(structure, field):
    return list(structure.get_value(field) or []) if structure.has_field(field) else []


def _counts(structure, names_field, counts_field):
    return dict(zip(_list(structure, names_field), (int(c) for c in _list(structure, counts_field))))


def stats_dict(structure):
    """The message's structure as a dict: `patches`, `batches`,
    `tissue_fraction_mean`, `mpp_bin_edges` (list), `mpp_counts` (list, one
    per bin), `mpp_unknown`, `labels` ({label: patches}), `columns` ({column:
    {value: patches}}) and the upstream counters present (`slides_opened`,
    ..., `patches_rejected`)."""
    out = {
        "patches": int(structure.get_value("patches")),
        "batches": int(structure.get_value("batches")),
        "tissue_fraction_mean": float(structure.get_value("tissue-fraction-mean")),
        "mpp_bin_edges": [float(e) for e in _list(structure, "mpp-bin-edges")],
        "mpp_counts": [int(c) for c in _list(structure, "mpp-counts")],
        "mpp_unknown": int(structure.get_value("mpp-unknown")),
        "labels": _counts(structure, "label-names", "label-counts"),
        "columns": {c.get_string("name"): _counts(c, "values", "counts")
                    for c in _list(structure, "columns")},
    }
    for name in COUNTERS:
        if structure.has_field(name):
            out[name.replace("-", "_")] = int(structure.get_value(name))
    return out


def flat_keys(stats, prefix):
    """`stats` (a stats_dict) as flat scalar keys under `prefix`: counters,
    `tissue_fraction_mean`, `mpp/<bin centre>` for non-empty bins,
    `label/<label>` and `column/<column>/<value>`."""
    out = {}
    for key in ("patches", "batches", "tissue_fraction_mean", "mpp_unknown") + tuple(
            c.replace("-", "_") for c in COUNTERS):
        if key in stats:
            out[prefix + key] = stats[key]
    edges = stats["mpp_bin_edges"]
    for i, count in enumerate(stats["mpp_counts"]):
        if count:
            centre = (edges[i] * edges[i + 1]) ** 0.5
            out[f"{prefix}mpp/{centre:.3g}"] = count
    for label, count in stats["labels"].items():
        out[f"{prefix}label/{label}"] = count
    for column, counts in stats["columns"].items():
        for value, count in counts.items():
            out[f"{prefix}column/{column}/{value}"] = count
    return out
