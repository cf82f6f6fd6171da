"""One torch CPU thread (or $OMP_NUM_THREADS) for the project's training and tagging commands.

Two uses:

* ``python -m spacy train CONFIG ... --code scripts/project/torch_threads.py``: spaCy imports
  this file before training;
* ``python scripts/project/torch_threads.py -m MODULE ARGS...``: set the threads, then run
  ``python -m MODULE ARGS...`` in this process (e.g. ``-m spacy_mimick train ...``).

Why: the project's models are small LSTMs, which run as fast on one thread as on two, but
torch's default of one thread per core makes them crawl when the cores are also busy with
other work: on two shared cores, a BiLSTM training step took 1,475 ms with 2 threads and
6.5 ms with 1, and the ``all`` workflow 51 minutes instead of 4. ``OMP_NUM_THREADS=N`` in the
environment asks for N threads instead.

The count is also put in this process's ``OMP_NUM_THREADS``, which the components' default
thread count (``n_threads`` -1) follows, so that their predictions inside training and
evaluation run on the same count as the updates, whatever the cores left free: with the free
cores, the same ``all`` printed other Both numbers on one usable core than on two
(docs/project.md).
"""
import logging
import os
import re
import runpy
import sys

import torch

from spacy_mimick.threads import requested_threads

# A treebank without a vectors table trains on the empty vectors pipeline that init-vectors
# writes for it on purpose (corpus/<treebank>/vectors); spaCy's W112 ("has no vectors. This is
# almost certainly a mistake.") is then no mistake and nothing a user can act on. Any other path
# still warns.
W112_OF_THE_PROJECT = r"\[W112\] The model specified to use for initial vectors \(corpus/[^/)]+/vectors\) has no vectors"


class _NoW112OfTheProject(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not re.match(W112_OF_THE_PROJECT, record.getMessage())


logging.getLogger("spacy").addFilter(_NoW112OfTheProject())  # spaCy logs W112, it does not warn

THREADS = requested_threads() or 1
os.environ["OMP_NUM_THREADS"] = str(THREADS)
torch.set_num_threads(THREADS)


def main(argv) -> None:
    if argv[:1] in (["-h"], ["--help"]) or len(argv) < 2 or argv[0] != "-m":
        print(__doc__)
        raise SystemExit(0 if argv[:1] in (["-h"], ["--help"]) else 2)
    module = argv[1]
    sys.argv = [module] + list(argv[2:])
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
