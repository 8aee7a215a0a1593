"""The public API is exactly what the modules export; docstring examples run."""

from __future__ import annotations

import doctest
import importlib

import pytest

import geomem

MODULES = [
    "geomem._graphs", "geomem._tasks", "geomem._gpt", "geomem._node2vec", "geomem._probes",
    "geomem._train", "geomem._incontext", "geomem._incontext_train",
]  # fmt: skip


def test_public_api():
    assert geomem.__all__ == [
        "RECIPES", "REPRODUCE_CONFIGS", "ReproduceConfig", "TrainResult", "evaluate", "graphs",
        "incontext", "models", "plots", "probes", "tasks", "train",
    ]  # fmt: skip
    assert geomem.models.__all__ == ["GPT", "AssociativeControl", "Node2Vec"]
    for mod in (
        geomem,
        geomem.graphs,
        geomem.models,
        geomem.probes,
        geomem.tasks,
        geomem.incontext,
        geomem.plots,
    ):
        for name in mod.__all__:
            assert hasattr(mod, name)
    assert isinstance(geomem.__version__, str)


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    res = doctest.testmod(importlib.import_module(name))
    assert res.failed == 0
