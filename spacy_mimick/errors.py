"""The base of every error that bad input or options cause.

Each part of the package raises its own subclass (``VectorsFormatError``, ``MimickModelError``,
``ConlluFormatError``, ``TrainingError``, ``DeviceError``), with a message that names the file,
line or word and what was expected. They are ``ValueError``s, so callers that catch those keep
working; the CLI prints any of them as one line (``cli/user_errors.py``).
"""


class UserError(ValueError):
    """Bad input or options that the user can fix; the CLI prints the message alone."""
