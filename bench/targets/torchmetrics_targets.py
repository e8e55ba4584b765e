"""Verify targets: torchmetrics 1.9.0, metrics. Each metric's `update` and `compute` are compiled
as separate targets (classification, regression, retrieval), next to the functional forms
(`torchmetrics.functional.*`) a user calls inside a compiled evaluation step."""

import torch


N, C, L = 16, 4, 3  # samples, classes, labels


def _filled(metric, *batches):
    """A metric that has seen a few batches eagerly, ready for `compute`."""
    for batch in batches:
        metric.update(*batch)
    return metric


def torchlint_targets():
    from torchmetrics import aggregation as agg
    from torchmetrics import classification as cls
    from torchmetrics.collections import MetricCollection
    from torchmetrics import regression as reg
    from torchmetrics import retrieval as ret
    from torchmetrics.functional import classification as fcls
    from torchmetrics.functional import regression as freg
    from torchmetrics.functional import retrieval as fret

    torch.manual_seed(0)
    mc_probs = torch.randn(N, C).softmax(-1)
    mc_target = torch.randint(0, C, (N,))
    mc_labels = torch.randint(0, C, (N,))
    ml_probs = torch.rand(N, L)
    ml_target = torch.randint(0, 2, (N, L))
    bin_probs = torch.rand(N)
    bin_target = torch.randint(0, 2, (N,))
    reg_preds = torch.randn(N)
    reg_target = reg_preds + 0.3 * torch.randn(N)
    reg2_preds = torch.randn(N, 2)
    reg2_target = reg2_preds + 0.3 * torch.randn(N, 2)
    ret_preds = torch.rand(N)
    ret_target = torch.randint(0, 2, (N,))
    ret_indexes = torch.arange(4).repeat_interleave(4)

    # compute_with_cache=False: otherwise a second `compute` returns the cached value and
    # never reaches the metric's own compute code.
    once = dict(compute_with_cache=False)
    mc = (mc_probs, mc_target)
    ml = (ml_probs, ml_target)
    bn = (bin_probs, bin_target)
    rg = (reg_preds, reg_target)
    rt = (ret_preds, ret_target)
    return {
        # -- classification, update ------------------------------------------------------
        "tm_acc_mc_update": (cls.MulticlassAccuracy(num_classes=C).update, mc),
        "tm_acc_ml_update": (cls.MultilabelAccuracy(num_labels=L, average="micro").update, ml),
        "tm_f1_ml_update": (cls.MultilabelF1Score(num_labels=L, validate_args=False).update, ml),
        "tm_auroc_mc_update": (cls.MulticlassAUROC(num_classes=C).update, mc),
        "tm_auroc_ml_binned_update": (cls.MultilabelAUROC(num_labels=L, thresholds=8).update, ml),
        "tm_ap_bin_update": (cls.BinaryAveragePrecision().update, bn),
        "tm_cm_mc_update": (cls.MulticlassConfusionMatrix(num_classes=C).update, (mc_labels, mc_target)),
        # -- classification, compute ------------------------------------------------------
        "tm_acc_mc_compute": (_filled(cls.MulticlassAccuracy(num_classes=C, average="weighted", **once), mc).compute, ()),
        "tm_f1_ml_compute": (_filled(cls.MultilabelF1Score(num_labels=L, average="macro", **once), ml).compute, ()),
        "tm_auroc_mc_compute": (_filled(cls.MulticlassAUROC(num_classes=C, **once), mc).compute, ()),
        "tm_auroc_ml_binned_compute": (
            _filled(cls.MultilabelAUROC(num_labels=L, thresholds=8, **once), ml).compute, ()),
        "tm_ap_bin_compute": (_filled(cls.BinaryAveragePrecision(**once), bn).compute, ()),
        "tm_ap_mc_binned_compute": (
            _filled(cls.MulticlassAveragePrecision(num_classes=C, thresholds=5, **once), mc).compute, ()),
        "tm_cm_ml_compute": (
            _filled(cls.MultilabelConfusionMatrix(num_labels=L, normalize="true", **once), ml).compute, ()),
        # -- regression ---------------------------------------------------------------------
        "tm_mse_update": (reg.MeanSquaredError(squared=False).update, rg),
        "tm_mse_compute": (_filled(reg.MeanSquaredError(squared=False, **once), rg).compute, ()),
        "tm_pearson_update": (reg.PearsonCorrCoef(num_outputs=2).update, (reg2_preds, reg2_target)),
        "tm_pearson_compute": (_filled(reg.PearsonCorrCoef(**once), rg).compute, ()),
        "tm_r2_update": (reg.R2Score().update, rg),
        "tm_r2_compute": (_filled(reg.R2Score(adjusted=2, **once), rg).compute, ()),
        "tm_spearman_update": (reg.SpearmanCorrCoef().update, rg),
        "tm_spearman_compute": (_filled(reg.SpearmanCorrCoef(**once), rg).compute, ()),
        # -- retrieval ------------------------------------------------------------------------
        "tm_mrr_update": (ret.RetrievalMRR().update, rt, {"indexes": ret_indexes}),
        "tm_mrr_compute": (_filled(ret.RetrievalMRR(top_k=2, **once), rt + (ret_indexes,)).compute, ()),
        # -- forward (`metric(preds, target)`: update plus the batch value), aggregation, collection
        "tm_acc_mc_forward": (cls.MulticlassAccuracy(num_classes=C, average="micro"), mc),
        "tm_mean_update": (agg.MeanMetric(nan_strategy="warn").update, (reg_preds,), {"weight": reg_target.abs()}),
        "tm_max_update": (agg.MaxMetric(nan_strategy=0.0).update, (reg_preds,)),
        "tm_cat_compute": (_filled(agg.CatMetric(**once), (reg_preds,), (reg_target,)).compute, ()),
        "tm_collection_update": (MetricCollection([
            cls.MulticlassPrecision(num_classes=C), cls.MulticlassRecall(num_classes=C),
            cls.MulticlassCohenKappa(num_classes=C)]).update, mc),
        # -- functional ---------------------------------------------------------------------
        "tm_f_accuracy": (fcls.accuracy, mc, {"task": "multiclass", "num_classes": C, "top_k": 2}),
        "tm_f_binary_auroc": (fcls.binary_auroc, bn, {"max_fpr": 0.5}),
        "tm_f_ml_average_precision": (fcls.multilabel_average_precision, ml, {"num_labels": L}),
        "tm_f_mc_calibration_error": (fcls.multiclass_calibration_error, mc, {"num_classes": C, "n_bins": 5}),
        "tm_f_mc_roc": (fcls.multiclass_roc, mc, {"num_classes": C}),
        "tm_f_mc_matthews": (fcls.multiclass_matthews_corrcoef, mc, {"num_classes": C}),
        "tm_f_bin_cohen_kappa": (fcls.binary_cohen_kappa, bn, {"weights": "quadratic"}),
        "tm_f_mc_hinge": (fcls.multiclass_hinge_loss, mc, {"num_classes": C, "multiclass_mode": "one-vs-all"}),
        "tm_f_ml_ranking_ap": (fcls.multilabel_ranking_average_precision, ml, {"num_labels": L}),
        "tm_f_spearman": (freg.spearman_corrcoef, rg),
        "tm_f_kendall": (freg.kendall_rank_corrcoef, rg, {"variant": "b"}),
        "tm_f_explained_variance": (freg.explained_variance, (reg2_preds, reg2_target), {"multioutput": "variance_weighted"}),
        "tm_f_tweedie": (freg.tweedie_deviance_score, (reg_preds.exp(), reg_target.exp()), {"power": 1.5}),
        "tm_f_retrieval_ndcg": (fret.retrieval_normalized_dcg, rt, {"top_k": 3}),
        "tm_f_retrieval_rr": (fret.retrieval_reciprocal_rank, rt),
    }


# What a user compiling each target would name in torchlint's `entry-points` setting: the
# dotted path of the function as it is defined (module path, then Class.method or function).
COMPILES = {
    "tm_acc_mc_update": ["torchmetrics.classification.stat_scores.MulticlassStatScores.update"],
    "tm_acc_ml_update": ["torchmetrics.classification.stat_scores.MultilabelStatScores.update"],
    "tm_f1_ml_update": ["torchmetrics.classification.stat_scores.MultilabelStatScores.update"],
    "tm_auroc_mc_update": ["torchmetrics.classification.precision_recall_curve.MulticlassPrecisionRecallCurve.update"],
    "tm_auroc_ml_binned_update": ["torchmetrics.classification.precision_recall_curve.MultilabelPrecisionRecallCurve.update"],
    "tm_ap_bin_update": ["torchmetrics.classification.precision_recall_curve.BinaryPrecisionRecallCurve.update"],
    "tm_cm_mc_update": ["torchmetrics.classification.confusion_matrix.MulticlassConfusionMatrix.update"],
    "tm_acc_mc_compute": ["torchmetrics.classification.accuracy.MulticlassAccuracy.compute"],
    "tm_f1_ml_compute": ["torchmetrics.classification.f_beta.MultilabelFBetaScore.compute"],
    "tm_auroc_mc_compute": ["torchmetrics.classification.auroc.MulticlassAUROC.compute"],
    "tm_auroc_ml_binned_compute": ["torchmetrics.classification.auroc.MultilabelAUROC.compute"],
    "tm_ap_bin_compute": ["torchmetrics.classification.average_precision.BinaryAveragePrecision.compute"],
    "tm_ap_mc_binned_compute": ["torchmetrics.classification.average_precision.MulticlassAveragePrecision.compute"],
    "tm_cm_ml_compute": ["torchmetrics.classification.confusion_matrix.MultilabelConfusionMatrix.compute"],
    "tm_mse_update": ["torchmetrics.regression.mse.MeanSquaredError.update"],
    "tm_mse_compute": ["torchmetrics.regression.mse.MeanSquaredError.compute"],
    "tm_pearson_update": ["torchmetrics.regression.pearson.PearsonCorrCoef.update"],
    "tm_pearson_compute": ["torchmetrics.regression.pearson.PearsonCorrCoef.compute"],
    "tm_r2_update": ["torchmetrics.regression.r2.R2Score.update"],
    "tm_r2_compute": ["torchmetrics.regression.r2.R2Score.compute"],
    "tm_spearman_update": ["torchmetrics.regression.spearman.SpearmanCorrCoef.update"],
    "tm_spearman_compute": ["torchmetrics.regression.spearman.SpearmanCorrCoef.compute"],
    "tm_mrr_update": ["torchmetrics.retrieval.base.RetrievalMetric.update"],
    "tm_mrr_compute": ["torchmetrics.retrieval.base.RetrievalMetric.compute"],
    "tm_acc_mc_forward": ["torchmetrics.metric.Metric.forward"],
    "tm_mean_update": ["torchmetrics.aggregation.MeanMetric.update"],
    "tm_max_update": ["torchmetrics.aggregation.MaxMetric.update"],
    "tm_cat_compute": ["torchmetrics.aggregation.CatMetric.compute"],
    "tm_collection_update": ["torchmetrics.collections.MetricCollection.update"],
    "tm_f_accuracy": ["torchmetrics.functional.classification.accuracy.accuracy"],
    "tm_f_binary_auroc": ["torchmetrics.functional.classification.auroc.binary_auroc"],
    "tm_f_ml_average_precision": ["torchmetrics.functional.classification.average_precision.multilabel_average_precision"],
    "tm_f_mc_calibration_error": ["torchmetrics.functional.classification.calibration_error.multiclass_calibration_error"],
    "tm_f_mc_roc": ["torchmetrics.functional.classification.roc.multiclass_roc"],
    "tm_f_mc_matthews": ["torchmetrics.functional.classification.matthews_corrcoef.multiclass_matthews_corrcoef"],
    "tm_f_bin_cohen_kappa": ["torchmetrics.functional.classification.cohen_kappa.binary_cohen_kappa"],
    "tm_f_mc_hinge": ["torchmetrics.functional.classification.hinge.multiclass_hinge_loss"],
    "tm_f_ml_ranking_ap": ["torchmetrics.functional.classification.ranking.multilabel_ranking_average_precision"],
    "tm_f_spearman": ["torchmetrics.functional.regression.spearman.spearman_corrcoef"],
    "tm_f_kendall": ["torchmetrics.functional.regression.kendall.kendall_rank_corrcoef"],
    "tm_f_explained_variance": ["torchmetrics.functional.regression.explained_variance.explained_variance"],
    "tm_f_tweedie": ["torchmetrics.functional.regression.tweedie_deviance.tweedie_deviance_score"],
    "tm_f_retrieval_ndcg": ["torchmetrics.functional.retrieval.ndcg.retrieval_normalized_dcg"],
    "tm_f_retrieval_rr": ["torchmetrics.functional.retrieval.reciprocal_rank.retrieval_reciprocal_rank"],
}
