"""Verify targets: entmax 1.3, sparse activations. sparsemax and 1.5-entmax (full sort and partial
top-k sort that re-solves too-dense rows), and the bisection solvers (entmax with a scalar or a
per-row alpha, normmax, budget), as functions and as modules.

Left out: the Fenchel-Young losses (sparsemax_loss, entmax15_loss, entmax_bisect_loss, ...) and
sparsemax_bisect. Their autograd Functions call `super().forward(ctx, ...)`, and torch 2.13's Dynamo
fails on that with an internal error (AsPythonConstantNotImplementedError: AutogradFunctionVariable()
is not a constant) rather than breaking the graph, so verify reports those targets as errors."""

import torch


B, K = 4, 10  # rows, classes


def torchlint_targets():
    import entmax
    from entmax import activations, root_finding

    torch.manual_seed(0)
    scores = torch.randn(B, K)
    # Flat scores: the solution is dense, more than k=2 nonzeros, so the partial sort re-solves.
    flat = 0.05 * torch.randn(B, K)
    logits = torch.randn(B, K, requires_grad=True)
    alpha = torch.tensor([[1.1], [1.5], [2.0], [3.0]])
    return {
        # -- activations ---------------------------------------------------------------------
        "em_sparsemax": (activations.sparsemax, (scores,)),
        "em_sparsemax_topk": (activations.sparsemax, (flat,), {"dim": -1, "k": 2}),
        "em_entmax15_dim0": (activations.entmax15, (scores,), {"dim": 0}),
        "em_entmax15_topk": (activations.entmax15, (flat,), {"k": 2}),
        "em_entmax_bisect": (root_finding.entmax_bisect, (scores,), {"alpha": 1.3, "n_iter": 20}),
        "em_entmax_bisect_alpha_tensor": (root_finding.entmax_bisect, (logits, alpha), {"n_iter": 20}),
        "em_normmax_bisect": (root_finding.normmax_bisect, (scores,), {"alpha": 3, "n_iter": 20}),
        "em_budget_bisect": (root_finding.budget_bisect, (scores,), {"budget": 3, "n_iter": 20}),
        "em_entmax15_module": (entmax.Entmax15(dim=-1, k=4), (logits,)),
        "em_sparsemax_module_topk_dim0": (entmax.Sparsemax(dim=0, k=2), (flat.t().contiguous(),)),
        "em_entmax_bisect_module": (entmax.EntmaxBisect(alpha=alpha, dim=-1, n_iter=15), (logits,)),
        "em_normmax_bisect_module": (entmax.NormmaxBisect(alpha=2, n_iter=15), (logits,)),
        "em_budget_bisect_module": (entmax.BudgetBisect(budget=2, n_iter=15), (logits,)),
    }


# What a user compiling each target would name in torchlint's `entry-points` setting: the
# dotted path of the function as it is defined (module path, then Class.method or function).
COMPILES = {
    "em_sparsemax": ["entmax.activations.sparsemax"],
    "em_sparsemax_topk": ["entmax.activations.sparsemax"],
    "em_entmax15_dim0": ["entmax.activations.entmax15"],
    "em_entmax15_topk": ["entmax.activations.entmax15"],
    "em_entmax_bisect": ["entmax.root_finding.entmax_bisect"],
    "em_entmax_bisect_alpha_tensor": ["entmax.root_finding.entmax_bisect"],
    "em_normmax_bisect": ["entmax.root_finding.normmax_bisect"],
    "em_budget_bisect": ["entmax.root_finding.budget_bisect"],
    "em_entmax15_module": ["entmax.activations.Entmax15.forward"],
    "em_sparsemax_module_topk_dim0": ["entmax.activations.Sparsemax.forward"],
    "em_entmax_bisect_module": ["entmax.root_finding.EntmaxBisect.forward"],
    "em_normmax_bisect_module": ["entmax.root_finding.NormmaxBisect.forward"],
    "em_budget_bisect_module": ["entmax.root_finding.BudgetBisect.forward"],
}
