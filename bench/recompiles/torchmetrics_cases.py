"""Recompile cases from torchmetrics 1.9.0: a metric's own `update` (and `compute`), compiled and
called once per batch of an evaluation loop, as a validation step calls it.

Between calls the batch changes (values, and for some cases its size); the metric's own state
(its update count, list states) changes as it accumulates.
"""

import torch

BATCHES = 10
CLASSES = 5


def _resolve_lazy_imports():
    """torchmetrics asks importlib.metadata whether torch_xla is installed the first time a
    bincount runs; Dynamo cannot trace that, and an eager first batch would have asked already."""
    from torchmetrics.utilities.imports import _XLA_AVAILABLE

    bool(_XLA_AVAILABLE)


def _batches(metric, make, sizes=None):
    _resolve_lazy_imports()
    update = metric.update
    for index in range(BATCHES):
        yield update, make(sizes[index] if sizes else 8)


def _multiclass(n):
    return (torch.randn(n, CLASSES).softmax(-1), torch.randint(0, CLASSES, (n,)))


def _regression(n):
    return (torch.randn(n), torch.randn(n))


def _binary(n):
    return (torch.rand(n), torch.randint(0, 2, (n,)))


GROWING = list(range(4, 4 + BATCHES))


def multiclass_accuracy_update():
    """MulticlassAccuracy.update per batch of 8: the metric's `_update_count` goes up by one per call."""
    from torchmetrics.classification import MulticlassAccuracy

    yield from _batches(MulticlassAccuracy(num_classes=CLASSES), _multiclass)


def multiclass_accuracy_growing_batches():
    """MulticlassAccuracy.update on batches of 4..13 samples."""
    from torchmetrics.classification import MulticlassAccuracy

    yield from _batches(MulticlassAccuracy(num_classes=CLASSES), _multiclass, GROWING)


def mean_squared_error_update():
    """MeanSquaredError.update per batch of 8 regression targets."""
    from torchmetrics.regression import MeanSquaredError

    yield from _batches(MeanSquaredError(), _regression)


def pearson_update():
    """PearsonCorrCoef.update per batch of 4..13 pairs."""
    from torchmetrics.regression import PearsonCorrCoef

    yield from _batches(PearsonCorrCoef(), _regression, GROWING)


def mean_metric_weighted_update():
    """MeanMetric.update(value, weight) with a batch loss and the batch size as a float weight."""
    from torchmetrics.aggregation import MeanMetric

    metric = MeanMetric()
    update = metric.update
    for index in range(BATCHES):
        yield update, (torch.rand(()), float(8 + index))


def cat_metric_update():
    """CatMetric.update per batch: the list state holds one more tensor after each call."""
    from torchmetrics.aggregation import CatMetric

    yield from _batches(CatMetric(), lambda n: (torch.randn(n),))


def binary_auroc_unbinned_update():
    """BinaryAUROC(thresholds=None).update: the preds and target list states grow by one tensor per call."""
    from torchmetrics.classification import BinaryAUROC

    yield from _batches(BinaryAUROC(thresholds=None), _binary)


def binary_auroc_binned_update():
    """BinaryAUROC(thresholds=20).update: a fixed-size confusion-matrix state, new batches."""
    from torchmetrics.classification import BinaryAUROC

    yield from _batches(BinaryAUROC(thresholds=20), _binary)


def multiclass_accuracy_compute_per_batch():
    """MulticlassAccuracy.compute after each eager update, as logged every step."""
    from torchmetrics.classification import MulticlassAccuracy

    metric = MulticlassAccuracy(num_classes=CLASSES, compute_with_cache=False)
    compute = metric.compute
    for _ in range(BATCHES):
        metric.update(*_multiclass(8))
        yield compute, ()


def cat_metric_compute_per_batch():
    """CatMetric.compute after each eager update: one more tensor in the list state each call."""
    from torchmetrics.aggregation import CatMetric

    metric = CatMetric(compute_with_cache=False)
    compute = metric.compute
    for _ in range(BATCHES):
        metric.update(torch.randn(8))
        yield compute, ()


def metric_forward_per_batch():
    """MulticlassF1Score's forward (batch value and accumulation) per batch of 8."""
    from torchmetrics.classification import MulticlassF1Score

    _resolve_lazy_imports()
    metric = MulticlassF1Score(num_classes=CLASSES)
    for _ in range(BATCHES):
        yield metric, _multiclass(8)


def functional_accuracy_changing_top_k():
    """`multiclass_accuracy(preds, target, num_classes, top_k=k)` with k cycling 1..3."""
    from torchmetrics.functional.classification import multiclass_accuracy

    _resolve_lazy_imports()
    for index in range(BATCHES):
        yield multiclass_accuracy, _multiclass(8), {"num_classes": CLASSES, "top_k": 1 + index % 3}


def functional_accuracy_changing_classes():
    """`multiclass_accuracy` on tasks of 3..12 classes, `num_classes` passed as an int."""
    from torchmetrics.functional.classification import multiclass_accuracy

    _resolve_lazy_imports()
    for classes in range(3, 3 + BATCHES):
        preds = torch.randn(8, classes).softmax(-1)
        yield multiclass_accuracy, (preds, torch.randint(0, classes, (8,))), {"num_classes": classes}


def torchlint_targets():
    return {
        "multiclass_accuracy_update": multiclass_accuracy_update(),
        "multiclass_accuracy_growing_batches": multiclass_accuracy_growing_batches(),
        "mean_squared_error_update": mean_squared_error_update(),
        "pearson_update": pearson_update(),
        "mean_metric_weighted_update": mean_metric_weighted_update(),
        "cat_metric_update": cat_metric_update(),
        "binary_auroc_unbinned_update": binary_auroc_unbinned_update(),
        "binary_auroc_binned_update": binary_auroc_binned_update(),
        "multiclass_accuracy_compute_per_batch": multiclass_accuracy_compute_per_batch(),
        "cat_metric_compute_per_batch": cat_metric_compute_per_batch(),
        "metric_forward_per_batch": metric_forward_per_batch(),
        "functional_accuracy_changing_top_k": functional_accuracy_changing_top_k(),
        "functional_accuracy_changing_classes": functional_accuracy_changing_classes(),
    }
