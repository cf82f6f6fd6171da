"""glibc heap settings for CPU training: bounded growth for the tagger, a padded top for Mimick.

``fix_mmap_threshold`` (the tagger):

Training the tagger on UD_Russian-Taiga (15k training words, 300-d navec vectors) grew the
process by 60-130 MB a second until it was killed at 23 GB; EWT (50-d) and Sequoia did not.
It is not a leak in Python or torch objects: with fine-tuning off, or with glibc's mmap
threshold fixed, the same run stays at about 0.7 GB (``benchmarks/tagger_memory.py``).

The trigger is the fine-tuned word table: each update allocates and frees a dense gradient of
``n_words x width`` floats (18 MB for Taiga). glibc serves blocks above its mmap threshold
(128 KiB at start) with ``mmap``, but every time such a block is freed it raises the threshold
to the block's size (up to 32 MiB), after which these blocks and the batch-sized activations
come from the heap, which fragments and is never returned. Setting the threshold with
``mallopt`` turns that adjustment off, so large blocks keep going back to the system.
"""
import ctypes
import os
import sys

# mallopt's parameter numbers (malloc.h).
M_TOP_PAD = -2
M_MMAP_THRESHOLD = -3
# Blocks from 1 MiB up are mmapped: the per-update gradients and large activations, not the
# many small tensors. The Taiga benchmark ran faster with it (0.65x the wall time).
DEFAULT_MMAP_THRESHOLD = 1 << 20
# Set to a byte count to choose the threshold, or to 0 to leave glibc's behaviour alone.
ENV_VAR = "SPACY_MIMICK_MMAP_THRESHOLD"

_applied = None


def fix_mmap_threshold() -> bool:
    """Fix glibc's mmap threshold once per process; return whether it is fixed.

    Does nothing (and returns False) off Linux/glibc, when ``SPACY_MIMICK_MMAP_THRESHOLD`` is
    0, or when the user already set glibc's own ``MALLOC_MMAP_THRESHOLD_``.
    """
    global _applied
    if _applied is not None:
        return _applied
    _applied = False
    threshold = os.environ.get(ENV_VAR, str(DEFAULT_MMAP_THRESHOLD))
    try:
        threshold_bytes = int(threshold)
    except ValueError:
        raise ValueError(f"{ENV_VAR} must be a number of bytes (0 = off), got {threshold!r}")
    if threshold_bytes <= 0 or "MALLOC_MMAP_THRESHOLD_" in os.environ:
        return False
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc (musl, ...)
        return False
    _applied = bool(mallopt(M_MMAP_THRESHOLD, threshold_bytes))
    return _applied


# ``pad_heap_top`` (Mimick's trainer): each batch of the paper model allocates and frees a few
# blocks of 0.2-2 MB (the BiLSTM's gates and states, fast_bilstm.py). glibc gives freed memory at
# the top of the heap back to the system and takes it again for the next batch, and every page
# taken again is a page fault the kernel zero-fills: 300k faults and about a second of system CPU
# in a 5-epoch `train --paper`. Keeping 64 MiB of padding at the top (``M_TOP_PAD``) stops that
# (86k faults, 0.4 s; benchmarks/train_throughput.py); glibc's own ``MALLOC_TOP_PAD_`` wins.
TOP_PAD = 64 << 20
_padded = None


def pad_heap_top() -> bool:
    """Keep ``TOP_PAD`` bytes at the top of glibc's heap (once per process); whether it is set."""
    global _padded
    if _padded is not None:
        return _padded
    _padded = False
    if "MALLOC_TOP_PAD_" in os.environ or not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):  # not glibc (musl, ...)
        return False
    _padded = bool(mallopt(M_TOP_PAD, TOP_PAD))
    return _padded
