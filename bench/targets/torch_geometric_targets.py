"""Verify targets: torch_geometric 2.8.1, graph neural networks. Message-passing layers (GCN, GAT, GIN,
SAGE, Transformer, Edge, PNA, RGCN, SuperGAT, Chebyshev, GPS, heterogeneous) and ready-made models on a
small batch of random graphs; pooling (top-k, edge, ASAP), aggregations and graph normalisations; the graph
utilities users call directly (softmax, scatter, dense/sparse conversion, self loops, isolated nodes,
edge and node dropout, subgraphs, negative sampling); autoencoder and Deep Graph Infomax losses, label
propagation with Correct & Smooth, and link-prediction metrics. Pure PyTorch paths only: no
torch_scatter, torch_sparse, torch_cluster or pyg_lib."""

import torch


FEATURES, EDGE_FEATURES, HIDDEN = 16, 4, 8


def _graph(num_nodes, num_edges):
    from torch_geometric.data import Data

    return Data(x=torch.randn(num_nodes, FEATURES),
                edge_index=torch.randint(0, num_nodes, (2, num_edges)),
                edge_attr=torch.randn(num_edges, EDGE_FEATURES),
                y=torch.randint(0, 3, (1,)))


def _summary(z, *args, **kwargs):
    return torch.sigmoid(z.mean(dim=0))


def _corruption(x, edge_index):
    return x[torch.randperm(x.size(0))], edge_index


def torchlint_targets():
    import torch_geometric.nn as gnn
    from torch_geometric import metrics, utils
    from torch_geometric.data import Batch
    from torch_geometric.nn import models

    torch.manual_seed(0)
    batch = Batch.from_data_list([_graph(10, 30), _graph(8, 20), _graph(12, 36)])
    x, edge_index, edge_attr, graph = batch.x, batch.edge_index, batch.edge_attr, batch.batch
    n = x.size(0)
    deg_hist = utils.degree(edge_index[1], n, dtype=torch.long).bincount()
    relation = torch.randint(0, 3, (edge_index.size(1),))
    node_label = torch.randint(0, 3, (n,))
    train_mask = torch.rand(n) > 0.5
    # Two node types for a heterogeneous layer: the first 15 nodes are papers, the rest authors.
    hetero_x = {"paper": x[:15], "author": x[15:]}
    hetero_edges = {
        ("paper", "cites", "author"): torch.stack([torch.randint(0, 15, (20,)), torch.randint(0, 15, (20,))]),
        ("author", "writes", "paper"): torch.stack([torch.randint(0, 15, (20,)), torch.randint(0, 15, (20,))]),
    }

    encoder = gnn.GCNConv(FEATURES, HIDDEN).eval()
    autoencoder = models.GAE(encoder).eval()
    variational = models.VGAE(encoder).eval()
    z = encoder(x, edge_index)
    infomax = models.DeepGraphInfomax(HIDDEN, encoder, summary=_summary, corruption=_corruption).eval()
    correct_and_smooth = models.CorrectAndSmooth(2, 0.5, 2, 0.5)
    soft_labels = torch.softmax(torch.randn(n, 3), dim=-1)
    # Top-3 predicted links per source node against held-out true links.
    pred_index_mat = torch.randint(0, n, (n, 3))
    edge_label_index = torch.stack([torch.arange(n), torch.randint(0, n, (n,))])
    precision = metrics.LinkPredPrecision(k=3)
    ndcg = metrics.LinkPredNDCG(k=3)
    ndcg.update(pred_index_mat, edge_label_index)
    dense_x, mask = utils.to_dense_batch(x, graph)
    dense_adj = utils.to_dense_adj(edge_index, graph)

    return {
        # Message-passing layers.
        "pyg_gcn_conv": (gnn.GCNConv(FEATURES, FEATURES).eval(), (x, edge_index)),
        "pyg_gat_conv": (gnn.GATConv(FEATURES, 8, heads=2, edge_dim=EDGE_FEATURES).eval(),
                         (x, edge_index, edge_attr)),
        "pyg_gin_conv": (gnn.GINConv(gnn.MLP([FEATURES, 32, FEATURES]), train_eps=True).eval(),
                         (x, edge_index)),
        "pyg_sage_conv": (gnn.SAGEConv(FEATURES, FEATURES, aggr="max", normalize=True).eval(),
                          (x, edge_index)),
        "pyg_transformer_conv": (gnn.TransformerConv(FEATURES, 8, heads=2, edge_dim=EDGE_FEATURES,
                                                     beta=True).eval(), (x, edge_index, edge_attr)),
        "pyg_edge_conv": (gnn.EdgeConv(gnn.MLP([2 * FEATURES, FEATURES]), aggr="max").eval(),
                          (x, edge_index)),
        "pyg_pna_conv": (gnn.PNAConv(FEATURES, FEATURES, aggregators=["mean", "min", "max", "std"],
                                     scalers=["identity", "amplification", "attenuation"],
                                     deg=deg_hist, edge_dim=EDGE_FEATURES).eval(),
                         (x, edge_index, edge_attr)),
        "pyg_rgcn_conv": (gnn.RGCNConv(FEATURES, FEATURES, 3, num_bases=2).eval(), (x, edge_index, relation)),
        # Training mode on purpose: SuperGAT samples negative edges for its attention loss.
        "pyg_supergat_conv_train": (gnn.SuperGATConv(FEATURES, 8, heads=2).train(), (x, edge_index)),
        "pyg_cheb_conv": (gnn.ChebConv(FEATURES, FEATURES, K=3).eval(), (x, edge_index), {"batch": graph}),
        "pyg_gps_conv": (gnn.GPSConv(FEATURES, gnn.GINConv(gnn.MLP([FEATURES, FEATURES])), heads=2).eval(),
                         (x, edge_index, graph)),
        "pyg_hetero_conv": (gnn.HeteroConv({
            ("paper", "cites", "author"): gnn.SAGEConv((FEATURES, FEATURES), HIDDEN),
            ("author", "writes", "paper"): gnn.GraphConv((FEATURES, FEATURES), HIDDEN),
        }).eval(), (hetero_x, hetero_edges)),
        # Models, pooling, aggregation and normalisation on a batch of graphs.
        "pyg_gin_model_jk": (gnn.GIN(FEATURES, 32, num_layers=3, out_channels=3, jk="cat").eval(),
                             (x, edge_index), {"batch": graph}),
        "pyg_attentive_fp": (gnn.AttentiveFP(FEATURES, 16, 3, edge_dim=EDGE_FEATURES, num_layers=2,
                                             num_timesteps=2).eval(), (x, edge_index, edge_attr, graph)),
        "pyg_label_propagation": (models.LabelPropagation(num_layers=3, alpha=0.9), (node_label, edge_index),
                                  {"mask": train_mask}),
        "pyg_topk_pool": (gnn.TopKPooling(FEATURES, ratio=0.5).eval(), (x, edge_index),
                          {"edge_attr": edge_attr, "batch": graph}),
        "pyg_edge_pool": (gnn.EdgePooling(FEATURES).eval(), (x, edge_index, graph)),
        "pyg_asap_pool": (gnn.ASAPooling(FEATURES, ratio=0.5).eval(), (x, edge_index), {"batch": graph}),
        "pyg_set2set": (gnn.aggr.Set2Set(FEATURES, processing_steps=2).eval(), (x, graph)),
        "pyg_graph_multiset_transformer": (gnn.aggr.GraphMultisetTransformer(FEATURES, k=4, heads=2).eval(),
                                           (x, graph)),
        "pyg_lstm_aggregation": (gnn.aggr.LSTMAggregation(FEATURES, FEATURES).eval(), (x, graph)),
        "pyg_median_aggregation": (gnn.aggr.MedianAggregation(), (x, graph)),
        "pyg_graph_norm": (gnn.GraphNorm(FEATURES).eval(), (x, graph)),
        "pyg_instance_norm": (gnn.InstanceNorm(FEATURES).eval(), (x, graph)),
        "pyg_layer_norm_graph": (gnn.LayerNorm(FEATURES, mode="graph").eval(), (x, graph)),
        "pyg_global_mean_pool": (gnn.global_mean_pool, (x, graph)),
        "pyg_dense_diff_pool": (gnn.dense_diff_pool, (dense_x, dense_adj, torch.randn(3, 12, 4), mask)),
        # Graph utilities.
        "pyg_softmax": (utils.softmax, (torch.randn(edge_index.size(1), 2), edge_index[1])),
        "pyg_scatter_max": (utils.scatter, (edge_attr, edge_index[1]), {"dim": 0, "reduce": "max"}),
        "pyg_degree": (utils.degree, (edge_index[0], n)),
        "pyg_to_dense_batch": (utils.to_dense_batch, (x, graph)),
        "pyg_to_dense_adj": (utils.to_dense_adj, (edge_index, graph, edge_attr)),
        "pyg_dense_to_sparse": (utils.dense_to_sparse, (dense_adj, mask)),
        "pyg_unbatch": (utils.unbatch, (x, graph)),
        "pyg_add_self_loops": (utils.add_self_loops, (edge_index, edge_attr),
                               {"fill_value": "mean", "num_nodes": n}),
        "pyg_remove_isolated_nodes": (utils.remove_isolated_nodes, (edge_index, edge_attr, n)),
        "pyg_contains_isolated_nodes": (utils.contains_isolated_nodes, (edge_index, n)),
        "pyg_is_undirected": (utils.is_undirected, (edge_index,), {"num_nodes": n}),
        "pyg_coalesce_mean": (utils.coalesce, (edge_index, edge_attr, n), {"reduce": "mean"}),
        "pyg_to_undirected": (utils.to_undirected, (edge_index, edge_attr)),
        "pyg_dropout_edge": (utils.dropout_edge, (edge_index,), {"p": 0.3, "training": True}),
        "pyg_dropout_node": (utils.dropout_node, (edge_index,), {"p": 0.3, "num_nodes": n}),
        "pyg_subgraph": (utils.subgraph, (torch.arange(10), edge_index, edge_attr),
                         {"relabel_nodes": True, "num_nodes": n}),
        "pyg_k_hop_subgraph": (utils.k_hop_subgraph, (torch.tensor([0, 5]), 2, edge_index),
                               {"relabel_nodes": True, "num_nodes": n}),
        "pyg_get_laplacian": (utils.get_laplacian, (edge_index,), {"normalization": "sym", "num_nodes": n}),
        "pyg_batched_negative_sampling": (utils.batched_negative_sampling, (edge_index, graph)),
        "pyg_structured_negative_sampling": (utils.structured_negative_sampling, (edge_index, n)),
        # Losses, label propagation post-processing and metrics.
        "pyg_gae_recon_loss": (autoencoder.recon_loss, (z, edge_index)),
        "pyg_vgae_kl_loss": (variational.kl_loss, (torch.randn(n, HIDDEN), 0.1 * torch.randn(n, HIDDEN))),
        "pyg_infomax_loss": (infomax.loss, (torch.randn(n, HIDDEN), torch.randn(n, HIDDEN), torch.rand(HIDDEN))),
        "pyg_correct_and_smooth_correct": (correct_and_smooth.correct, (soft_labels, node_label[train_mask],
                                                                        train_mask, edge_index)),
        "pyg_correct_and_smooth_smooth": (correct_and_smooth.smooth, (soft_labels, node_label[train_mask],
                                                                      train_mask, edge_index)),
        "pyg_linkpred_precision_update": (precision.update, (pred_index_mat, edge_label_index)),
        "pyg_linkpred_ndcg_compute": (ndcg.compute, ()),
    }


# What a user compiling each target would name in torchlint's `entry-points` setting: the
# dotted path of the function as it is defined (module path, then Class.method or function).
COMPILES = {
    "pyg_gcn_conv": ["torch_geometric.nn.conv.gcn_conv.GCNConv.forward"],
    "pyg_gat_conv": ["torch_geometric.nn.conv.gat_conv.GATConv.forward"],
    "pyg_gin_conv": ["torch_geometric.nn.conv.gin_conv.GINConv.forward"],
    "pyg_sage_conv": ["torch_geometric.nn.conv.sage_conv.SAGEConv.forward"],
    "pyg_transformer_conv": ["torch_geometric.nn.conv.transformer_conv.TransformerConv.forward"],
    "pyg_edge_conv": ["torch_geometric.nn.conv.edge_conv.EdgeConv.forward"],
    "pyg_pna_conv": ["torch_geometric.nn.conv.pna_conv.PNAConv.forward"],
    "pyg_rgcn_conv": ["torch_geometric.nn.conv.rgcn_conv.RGCNConv.forward"],
    "pyg_supergat_conv_train": ["torch_geometric.nn.conv.supergat_conv.SuperGATConv.forward"],
    "pyg_cheb_conv": ["torch_geometric.nn.conv.cheb_conv.ChebConv.forward"],
    "pyg_gps_conv": ["torch_geometric.nn.conv.gps_conv.GPSConv.forward"],
    "pyg_hetero_conv": ["torch_geometric.nn.conv.hetero_conv.HeteroConv.forward"],
    "pyg_gin_model_jk": ["torch_geometric.nn.models.basic_gnn.BasicGNN.forward"],
    "pyg_attentive_fp": ["torch_geometric.nn.models.attentive_fp.AttentiveFP.forward"],
    "pyg_label_propagation": ["torch_geometric.nn.models.label_prop.LabelPropagation.forward"],
    "pyg_topk_pool": ["torch_geometric.nn.pool.topk_pool.TopKPooling.forward"],
    "pyg_edge_pool": ["torch_geometric.nn.pool.edge_pool.EdgePooling.forward"],
    "pyg_asap_pool": ["torch_geometric.nn.pool.asap.ASAPooling.forward"],
    "pyg_set2set": ["torch_geometric.nn.aggr.set2set.Set2Set.forward"],
    "pyg_graph_multiset_transformer": ["torch_geometric.nn.aggr.gmt.GraphMultisetTransformer.forward"],
    "pyg_lstm_aggregation": ["torch_geometric.nn.aggr.lstm.LSTMAggregation.forward"],
    "pyg_median_aggregation": ["torch_geometric.nn.aggr.quantile.QuantileAggregation.forward"],
    "pyg_graph_norm": ["torch_geometric.nn.norm.graph_norm.GraphNorm.forward"],
    "pyg_instance_norm": ["torch_geometric.nn.norm.instance_norm.InstanceNorm.forward"],
    "pyg_layer_norm_graph": ["torch_geometric.nn.norm.layer_norm.LayerNorm.forward"],
    "pyg_global_mean_pool": ["torch_geometric.nn.pool.glob.global_mean_pool"],
    "pyg_dense_diff_pool": ["torch_geometric.nn.dense.diff_pool.dense_diff_pool"],
    "pyg_softmax": ["torch_geometric.utils._softmax.softmax"],
    "pyg_scatter_max": ["torch_geometric.utils._scatter.scatter"],
    "pyg_degree": ["torch_geometric.utils._degree.degree"],
    "pyg_to_dense_batch": ["torch_geometric.utils._to_dense_batch.to_dense_batch"],
    "pyg_to_dense_adj": ["torch_geometric.utils._to_dense_adj.to_dense_adj"],
    "pyg_dense_to_sparse": ["torch_geometric.utils.sparse.dense_to_sparse"],
    "pyg_unbatch": ["torch_geometric.utils._unbatch.unbatch"],
    "pyg_add_self_loops": ["torch_geometric.utils.loop.add_self_loops"],
    "pyg_remove_isolated_nodes": ["torch_geometric.utils.isolated.remove_isolated_nodes"],
    "pyg_contains_isolated_nodes": ["torch_geometric.utils.isolated.contains_isolated_nodes"],
    "pyg_is_undirected": ["torch_geometric.utils.undirected.is_undirected"],
    "pyg_coalesce_mean": ["torch_geometric.utils._coalesce.coalesce"],
    "pyg_to_undirected": ["torch_geometric.utils.undirected.to_undirected"],
    "pyg_dropout_edge": ["torch_geometric.utils.dropout.dropout_edge"],
    "pyg_dropout_node": ["torch_geometric.utils.dropout.dropout_node"],
    "pyg_subgraph": ["torch_geometric.utils._subgraph.subgraph"],
    "pyg_k_hop_subgraph": ["torch_geometric.utils._subgraph.k_hop_subgraph"],
    "pyg_get_laplacian": ["torch_geometric.utils.laplacian.get_laplacian"],
    "pyg_batched_negative_sampling": ["torch_geometric.utils._negative_sampling.batched_negative_sampling"],
    "pyg_structured_negative_sampling": ["torch_geometric.utils._negative_sampling.structured_negative_sampling"],
    "pyg_gae_recon_loss": ["torch_geometric.nn.models.autoencoder.GAE.recon_loss"],
    "pyg_vgae_kl_loss": ["torch_geometric.nn.models.autoencoder.VGAE.kl_loss"],
    "pyg_infomax_loss": ["torch_geometric.nn.models.deep_graph_infomax.DeepGraphInfomax.loss"],
    "pyg_correct_and_smooth_correct": ["torch_geometric.nn.models.correct_and_smooth.CorrectAndSmooth.correct"],
    "pyg_correct_and_smooth_smooth": ["torch_geometric.nn.models.correct_and_smooth.CorrectAndSmooth.smooth"],
    "pyg_linkpred_precision_update": ["torch_geometric.metrics.link_pred.LinkPredMetric.update"],
    "pyg_linkpred_ndcg_compute": ["torch_geometric.metrics.link_pred.LinkPredMetric.compute"],
}
