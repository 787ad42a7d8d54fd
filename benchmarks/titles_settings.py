"""The titles benchmark's worker: the streaming benchmark's, with titles switched on and
off between rounds (``benchmarks.titles_switch``)."""

from benchmarks.streaming_settings import *  # noqa: F403

ROOT_URLCONF = "benchmarks.titles_switch"  # the floor view's URLs and the titles switch
