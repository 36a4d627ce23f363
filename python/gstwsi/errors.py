"""The exceptions of gstwsi, in one place so that every module can raise them.

`PipelineError` is an ERROR of a running pipeline (or a batch it cannot
hand out), `SettingsError` a description or keyword GStreamer would not run
as written (raised before anything plays), `ForkError` GStreamer used in a
process that fork() made unusable for it.  No GStreamer import here.
"""

__all__ = ["ForkError", "PipelineError", "SettingsError"]


class ForkError(RuntimeError):
    """GStreamer used in a process fork()ed after a pipeline ran in its parent."""


class PipelineError(RuntimeError):
    """An ERROR message from the pipeline's bus, as a Python exception.

    `message` is the element's human sentence, `debug` GStreamer's debug
    string and `source` the name of the element that posted it.
    """

    def __init__(self, message, debug=None, source=None):
        self.message = message
        self.debug = debug
        self.source = source
        text = message if source is None else f"{source}: {message}"
        if debug:
            text += f"\n{debug}"
        super().__init__(text)


class SettingsError(ValueError):
    """A pipeline description GStreamer would not run as written.

    An unknown element or property, a value out of its ParamSpec's range, an
    enum value the element does not know, a read-only property.  `element`
    (factory name), `property`, `value` (as written) and `allowed` (the range
    or the values, as text) are None where they do not apply.
    """

    def __init__(self, message, element=None, property=None, value=None, allowed=None):
        self.element = element
        self.property = property
        self.value = value
        self.allowed = allowed
        super().__init__(message)
