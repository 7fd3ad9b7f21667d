"""Deprecated location of the test graphs: import them from :mod:`tests.helpers`."""
from tests.helpers import SmallGraph, random_graph  # noqa: F401
