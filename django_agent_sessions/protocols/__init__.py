"""Adapters of other projects' chat protocols over the same runs."""
