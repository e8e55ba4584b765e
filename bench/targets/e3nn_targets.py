"""Verify targets: e3nn 0.6.0, E(3)-equivariant networks. Irreps-typed linear maps and tensor products
(fully connected, explicit "uvu" paths, per-sample weights, the right-hand contraction), gates, norm and
SO(3) activations, batch norm, S2/SO(3) grids, spherical harmonics, radial bases, Wigner matrices, rotation
conversions and basis orthonormalisation, and the library's own point-cloud and voxel convolution networks
(plus the guide's convolution), all on a handful of random points."""

import torch


NODES, EDGES, MAX_RADIUS, NUM_BASIS = 6, 14, 2.0, 8


class PointConvolution(torch.nn.Module):
    """The equivariant convolution of e3nn's guide, with a fixed edge list instead of torch_cluster's
    radius_graph: edge spherical harmonics, a radial MLP on the embedded edge length giving the
    tensor-product weights, messages summed onto the destination nodes."""

    def __init__(self, irreps_in, irreps_out):
        super().__init__()
        from e3nn import nn, o3

        self.ls = [0, 1, 2]
        irreps_sh = o3.Irreps.spherical_harmonics(lmax=2)
        self.tp = o3.FullyConnectedTensorProduct(irreps_in, irreps_sh, irreps_out, shared_weights=False)
        self.fc = nn.FullyConnectedNet([NUM_BASIS, 16, self.tp.weight_numel], torch.relu)

    def forward(self, f_in, pos, edge_src, edge_dst):
        from e3nn import math, o3

        edge_vec = pos[edge_dst] - pos[edge_src]
        sh = o3.spherical_harmonics(self.ls, edge_vec, normalize=True, normalization="component")
        emb = math.soft_one_hot_linspace(edge_vec.norm(dim=1), 0.0, MAX_RADIUS, NUM_BASIS,
                                         basis="smooth_finite", cutoff=True).mul(NUM_BASIS**0.5)
        messages = self.tp(f_in[edge_src], sh, self.fc(emb))
        out = messages.new_zeros(f_in.shape[0], messages.shape[1])
        return out.index_add(0, edge_dst, messages) / (EDGES / NODES) ** 0.5


def torchlint_targets():
    from e3nn import math, nn, o3
    from e3nn.o3 import experimental
    from e3nn.nn.models.v2104 import voxel_convolution
    from e3nn.nn.models.v2106 import gate_points_message_passing, gate_points_networks

    torch.manual_seed(0)
    irreps_in = o3.Irreps("4x0e + 2x1o + 1x2e")
    x = irreps_in.randn(5, -1)
    pos = torch.randn(NODES, 3)
    edge_src = torch.randint(0, NODES, (EDGES,))
    edge_dst = (edge_src + torch.randint(1, NODES, (EDGES,))) % NODES
    rotation = o3.rand_matrix(3)
    alpha, beta, gamma = o3.rand_angles(4)
    vectors = torch.randn(10, 3)

    fctp = o3.FullyConnectedTensorProduct("2x0e + 2x1o", "0e + 1o", "2x0e + 2x1o", compile_right=True)
    # A tensor product with explicit "uvu" paths and its own normalisations.
    uvu = o3.TensorProduct(
        "2x0e + 2x1o", "1x0e + 1x1o", "2x0e + 2x1o + 2x1e",
        [(0, 0, 0, "uvu", True), (1, 1, 0, "uvu", True), (1, 1, 2, "uvu", True), (0, 1, 1, "uvu", True)],
        irrep_normalization="norm", path_normalization="path")
    per_sample_linear = o3.Linear("4x0e + 2x1o", "2x0e + 2x1o", shared_weights=False)
    mp = gate_points_message_passing.MessagePassing(
        irreps_node_sequence=["0e", "4x0e + 2x1e", "1e"], irreps_node_attr="0e",
        irreps_edge_attr="0e + 1e", fc_neurons=[NUM_BASIS, 16], num_neighbors=3.0)
    edge_attr = o3.spherical_harmonics([0, 1], pos[edge_src] - pos[edge_dst], True, normalization="component")
    network = gate_points_networks.SimpleNetwork(
        irreps_in="0e", irreps_out="1o", max_radius=MAX_RADIUS, num_neighbors=3.0, num_nodes=NODES,
        mul=4, layers=2, lmax=2)
    attributed = gate_points_networks.NetworkForAGraphWithAttributes(
        "0e", "0e", "0e", "1o", MAX_RADIUS, 3.0, NODES, mul=4, layers=2, lmax=1)
    graph = {"pos": pos, "x": torch.randn(NODES, 1), "node_attr": torch.ones(NODES, 1),
             "edge_index": torch.stack([edge_src, edge_dst]), "edge_attr": torch.ones(EDGES, 1)}
    voxels = voxel_convolution.Convolution("2x0e", "2x0e + 1x1o", irreps_sh="0e + 1o", diameter=3.0,
                                           num_radial_basis=3)
    so3_grid = o3.SO3Grid(2, 6)
    batchnorm = nn.BatchNorm("4x0e + 2x1o + 1x2e")  # training mode: updates the running statistics

    return {
        # Equivariant layers and networks (forward).
        "e3_linear": (o3.Linear(irreps_in, "3x0e + 2x1o + 2x2e").eval(), (x,)),
        "e3_linear_per_sample_weights": (per_sample_linear.eval(),
                                         (torch.randn(5, 10), torch.randn(5, per_sample_linear.weight_numel))),
        "e3_fc_tensor_product": (fctp.eval(), (torch.randn(5, 8), torch.randn(5, 4))),
        "e3_uvu_tensor_product": (uvu.eval(), (torch.randn(5, 8), torch.randn(5, 4))),
        "e3_full_tensor_product_v2": (experimental.FullTensorProductv2("2x0e + 1x1o", "1x0e + 1x1o").eval(),
                                      (torch.randn(5, 5), torch.randn(5, 4))),
        "e3_tensor_square": (o3.TensorSquare("2x0e + 1x1o").eval(), (torch.randn(5, 5),)),
        "e3_gate": (nn.Gate("4x0e", [torch.relu], "2x0e", [torch.sigmoid], "2x1o").eval(),
                    (torch.randn(5, 12),)),
        "e3_norm_activation": (nn.NormActivation(irreps_in, torch.sigmoid).eval(), (x,)),
        "e3_so3_activation": (nn.SO3Activation(1, 1, torch.tanh, 6).eval(), (torch.randn(5, 10),)),
        "e3_batchnorm_train": (batchnorm.train(), (x,)),
        "e3_to_s2_grid": (o3.ToS2Grid(lmax=2, res=(8, 9)).eval(), (torch.randn(5, 9),)),
        "e3_point_convolution": (PointConvolution("2x0e + 1x1o", "2x0e + 1x1o").eval(),
                                 (torch.randn(NODES, 5), pos, edge_src, edge_dst)),
        "e3_message_passing": (mp.eval(), (torch.randn(NODES, 1), torch.ones(NODES, 1), edge_src, edge_dst,
                                           edge_attr, torch.randn(EDGES, NUM_BASIS))),
        "e3_simple_network": (network.eval(), ({"pos": pos, "x": torch.randn(NODES, 1)},)),
        "e3_network_with_attributes": (attributed.eval(), (graph,)),
        "e3_voxel_convolution": (voxels.eval(), (torch.randn(1, 2, 5, 5, 5),)),
        # Functions and methods users call directly.
        "e3_spherical_harmonics": (o3.spherical_harmonics, ([0, 1, 2, 3], vectors, True),
                                   {"normalization": "component"}),
        "e3_spherical_harmonics_alpha_beta": (o3.spherical_harmonics_alpha_beta,
                                              ([0, 1, 2], torch.rand(5), torch.rand(5))),
        "e3_soft_one_hot_smooth": (math.soft_one_hot_linspace, (vectors.norm(dim=1), 0.0, 3.0, NUM_BASIS),
                                   {"basis": "smooth_finite", "cutoff": True}),
        "e3_soft_one_hot_bessel": (math.soft_one_hot_linspace, (vectors.norm(dim=1), 0.0, 3.0, NUM_BASIS),
                                   {"basis": "bessel", "cutoff": False}),
        "e3_bessel": (math.bessel, (torch.rand(10), 4)),
        "e3_wigner_d": (o3.wigner_D, (2, alpha, beta, gamma)),
        "e3_wigner_3j": (o3.wigner_3j, (1, 1, 2)),
        "e3_matrix_to_angles": (o3.matrix_to_angles, (rotation,)),
        "e3_matrix_to_quaternion": (o3.matrix_to_quaternion, (rotation,)),
        "e3_xyz_to_angles": (o3.xyz_to_angles, (vectors,)),
        "e3_angles_to_matrix": (o3.angles_to_matrix, (alpha, beta, gamma)),
        "e3_orthonormalize": (math.orthonormalize, (torch.randn(4, 6),)),
        "e3_complete_basis": (math.complete_basis, (torch.nn.functional.normalize(torch.randn(2, 5), dim=1),)),
        "e3_direct_sum": (math.direct_sum, (torch.randn(2, 3), torch.randn(3, 2))),
        "e3_tp_right": (fctp.right, (torch.randn(5, 4),)),
        "e3_so3_grid_to_grid": (so3_grid.to_grid, (torch.randn(2, 35),)),
        "e3_so3_grid_from_grid": (so3_grid.from_grid, (so3_grid.to_grid(torch.randn(2, 35)),)),
    }


# What a user compiling each target would name in torchlint's `entry-points` setting: the
# dotted path of the function as it is defined (module path, then Class.method or function).
COMPILES = {
    "e3_linear": ["e3nn.o3._linear.Linear.forward"],
    "e3_linear_per_sample_weights": ["e3nn.o3._linear.Linear.forward"],
    "e3_fc_tensor_product": ["e3nn.o3._tensor_product._tensor_product.TensorProduct.forward"],
    "e3_uvu_tensor_product": ["e3nn.o3._tensor_product._tensor_product.TensorProduct.forward"],
    "e3_full_tensor_product_v2": ["e3nn.o3.experimental._full_tp.FullTensorProduct.forward"],
    "e3_tensor_square": ["e3nn.o3._tensor_product._sub.TensorSquare.forward"],
    "e3_gate": ["e3nn.nn._gate.Gate.forward"],
    "e3_norm_activation": ["e3nn.nn._normact.NormActivation.forward"],
    "e3_so3_activation": ["e3nn.nn._so3act.SO3Activation.forward"],
    "e3_batchnorm_train": ["e3nn.nn._batchnorm.BatchNorm.forward"],
    "e3_to_s2_grid": ["e3nn.o3._s2grid.ToS2Grid.forward"],
    "e3_point_convolution": [
        "e3nn.o3._spherical_harmonics.spherical_harmonics",
        "e3nn.math._soft_one_hot_linspace.soft_one_hot_linspace",
        "e3nn.nn._fc._Layer.forward",
        "e3nn.o3._tensor_product._tensor_product.TensorProduct.forward",
    ],
    "e3_message_passing": ["e3nn.nn.models.v2106.gate_points_message_passing.MessagePassing.forward"],
    "e3_simple_network": ["e3nn.nn.models.v2106.gate_points_networks.SimpleNetwork.forward"],
    "e3_network_with_attributes": [
        "e3nn.nn.models.v2106.gate_points_networks.NetworkForAGraphWithAttributes.forward"],
    "e3_voxel_convolution": ["e3nn.nn.models.v2104.voxel_convolution.Convolution.forward"],
    "e3_spherical_harmonics": ["e3nn.o3._spherical_harmonics.spherical_harmonics"],
    "e3_spherical_harmonics_alpha_beta": ["e3nn.o3._angular_spherical_harmonics.spherical_harmonics_alpha_beta"],
    "e3_soft_one_hot_smooth": ["e3nn.math._soft_one_hot_linspace.soft_one_hot_linspace"],
    "e3_soft_one_hot_bessel": ["e3nn.math._soft_one_hot_linspace.soft_one_hot_linspace"],
    "e3_bessel": ["e3nn.math._bessel.bessel"],
    "e3_wigner_d": ["e3nn.o3._wigner.wigner_D"],
    "e3_wigner_3j": ["e3nn.o3._wigner.wigner_3j"],
    "e3_matrix_to_angles": ["e3nn.o3._rotation.matrix_to_angles"],
    "e3_matrix_to_quaternion": ["e3nn.o3._rotation.matrix_to_quaternion"],
    "e3_xyz_to_angles": ["e3nn.o3._rotation.xyz_to_angles"],
    "e3_angles_to_matrix": ["e3nn.o3._rotation.angles_to_matrix"],
    "e3_orthonormalize": ["e3nn.math._linalg.orthonormalize"],
    "e3_complete_basis": ["e3nn.math._linalg.complete_basis"],
    "e3_direct_sum": ["e3nn.math._linalg.direct_sum"],
    "e3_tp_right": ["e3nn.o3._tensor_product._tensor_product.TensorProduct.right"],
    "e3_so3_grid_to_grid": ["e3nn.o3._so3grid.SO3Grid.to_grid"],
    "e3_so3_grid_from_grid": ["e3nn.o3._so3grid.SO3Grid.from_grid"],
}
