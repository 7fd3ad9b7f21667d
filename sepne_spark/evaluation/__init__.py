"""Evaluating embeddings: node classification, reconstruction and link prediction.

Node classification follows the protocol of the SepNE paper (and of DeepWalk and
OpenNE): the embeddings of the labelled nodes are L2-normalised, a random fraction of
them trains a one-vs-rest L2-regularised logistic regression (scikit-learn's
``LogisticRegression`` per class, ``C = 1``, unpenalised intercept; the ``eval``
extra), and micro- and macro-F1 on the remaining nodes are averaged over several
random splits. With one label per node the prediction is the best-scoring class; with
several labels per node each test node gets as many top-scoring labels as it has.

Reconstruction measures how well ``W C^T`` reproduces the proximity matrix ``M``:
``R^2 = 1 - SS_res / SS_tot`` over all entries and over the non-zero entries, exactly
(dense or sparse ``M`` on the driver, :func:`reconstruction_r2`; M's entries in Spark,
:func:`reconstruction_r2_spark`) or from a sample of entries
(:func:`reconstruction_r2_sampled`).

Link prediction holds out edges with :func:`split_edges`, samples as many non-edges with
:func:`sample_non_edges`, embeds the training graph and reports the AUC of dot-product
scores (:func:`link_prediction`). These helpers are Spark DataFrame code and collect
nothing of the size of the graph.

The classification and the NumPy reconstruction functions work on arrays held by the
driver; :func:`node_classification` is meant for the labelled nodes only (thousands to
a few hundred thousand rows).

The functions live in one module per task: :mod:`.classification`,
:mod:`.reconstruction`, :mod:`.link_prediction` (and :mod:`.pairs`, the Spark sampling
helpers they share); every public name is importable from the package itself.
"""
from __future__ import annotations

from sepne_spark.errors import LabelsError
from sepne_spark.evaluation.classification import (
    OneVsRestLogisticRegression,
    _binarize,
    _predict_labels,
    check_labels,
    classifier_available,
    f1_scores,
    node_classification,
    require_classifier,
)
from sepne_spark.evaluation.link_prediction import (
    auc,
    auc_spark,
    link_prediction,
    sample_non_edges,
    score_pairs,
    split_edges,
)
from sepne_spark.evaluation.pairs import dot_column
from sepne_spark.evaluation.reconstruction import (
    r2_from_sums,
    reconstruction_r2,
    reconstruction_r2_sampled,
    reconstruction_r2_spark,
    sample_zero_entries,
)
from sepne_spark.spectral import l2_normalize

__all__ = [
    "l2_normalize",
    "LabelsError",
    "OneVsRestLogisticRegression",
    "check_labels",
    "classifier_available",
    "require_classifier",
    "f1_scores",
    "node_classification",
    "reconstruction_r2",
    "reconstruction_r2_sampled",
    "r2_from_sums",
    "sample_zero_entries",
    "reconstruction_r2_spark",
    "split_edges",
    "sample_non_edges",
    "auc",
    "auc_spark",
    "dot_column",
    "score_pairs",
    "link_prediction",
]
