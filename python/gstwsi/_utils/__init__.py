"""Internals of gstwsi shared by its public modules (as torch.utils.data._utils
is for torch.utils.data): GStreamer start-up and the fork guard (`gst`), the
lifetime of mapped batch buffers (`buffers`) and looking elements up in a
parsed pipeline (`elements`).  Not a public API: import from `gstwsi`.
"""
