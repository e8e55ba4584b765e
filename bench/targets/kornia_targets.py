"""Verify targets: kornia 0.9.0, differentiable computer vision and augmentation. Random augmentations
(geometric, photometric, weather, mixing) and containers carrying masks, boxes and keypoints, including
their inverse; feature responses, descriptors, local-feature matchers (SNN, MNN, FGINN, AdaLAM), a tiny
LoFTR and DISK keypoint extraction; homography, fundamental and PnP estimation with RANSAC; warps, filters,
losses, metrics, DETR and box-NMS post-processing, k-means, histogram matching and connected components."""

import torch


B, C, H, W = 2, 3, 32, 32

# A LoFTR small enough for a CPU: 32-channel coarse and 16-channel fine transformers, one self/cross pair each.
LOFTR_CONFIG = {
    "backbone_type": "ResNetFPN", "resolution": (8, 2), "fine_window_size": 5, "fine_concat_coarse_feat": True,
    "resnetfpn": {"initial_dim": 16, "block_dims": [16, 24, 32]},
    "coarse": {"d_model": 32, "d_ffn": 32, "nhead": 2, "layer_names": ["self", "cross"], "attention": "linear",
               "temp_bug_fix": False},
    "match_coarse": {"thr": 0.0, "border_rm": 1, "match_type": "dual_softmax", "dsmax_temperature": 0.1,
                     "skh_iters": 3, "skh_init_bin_score": 1.0, "skh_prefilter": True, "train_coarse_percent": 0.4,
                     "train_pad_num_gt_min": 200},
    "fine": {"d_model": 16, "d_ffn": 16, "nhead": 2, "layer_names": ["self", "cross"], "attention": "linear"},
}


def _boxes_and_scores(n=12):
    # Overlapping xyxy boxes with distinct scores, as a detector head would emit them.
    xy = torch.rand(n, 2) * 20
    wh = torch.rand(n, 2) * 10 + 4
    return torch.cat([xy, xy + wh], dim=1), torch.rand(n)


def _lafs(n, scale=4.0, max_angle=0.0):
    import kornia.feature as KF

    return KF.laf_from_center_scale_ori(
        torch.rand(1, n, 2) * 24 + 4, torch.full((1, n, 1, 1), scale), torch.rand(1, n, 1) * max_angle)


def torchlint_targets():
    import kornia.augmentation as K
    import kornia.contrib as KC
    import kornia.feature as KF
    import kornia.filters as KFi
    import kornia.image as KI
    import kornia.losses as KL
    import kornia.metrics as KM
    from kornia.feature.disk.detector import heatmap_to_keypoints
    from kornia.geometry import bbox, calibration, conversions, homography, linalg, ransac, subpix
    from kornia.geometry import transform as KT
    from kornia.models.rt_detr.post_processor import DETRPostProcessor

    torch.manual_seed(0)
    img = torch.rand(B, C, H, W)
    gray = torch.rand(B, 1, H, W)
    mask = (torch.rand(B, 1, H, W) > 0.5).float()
    labels = torch.tensor([0, 1])

    # Masks, boxes and keypoints that travel with the image through a geometric pipeline.
    boxes = torch.tensor([[[2.0, 3.0, 12.0, 14.0], [10.0, 8.0, 25.0, 30.0]]]).repeat(B, 1, 1)
    keypoints = torch.rand(B, 5, 2) * (W - 1)
    pipeline = K.AugmentationSequential(
        K.RandomRotation(15.0, p=1.0),
        K.RandomCrop((24, 24), padding=2),
        K.ColorJitter(0.1, 0.1, 0.1, 0.05, p=1.0),
        data_keys=["input", "mask", "bbox_xyxy", "keypoints"],
    )
    random_apply = K.AugmentationSequential(
        K.RandomAffine(10.0, p=1.0), K.RandomGaussianBlur((3, 3), (0.1, 1.0), p=1.0),
        K.RandomSharpness(p=1.0), random_apply=2)
    # The inverse maps augmented outputs back; it needs the parameters of a forward pass first.
    invertible = K.AugmentationSequential(K.RandomAffine(20.0, p=1.0), K.RandomPerspective(0.2, p=1.0))
    invertible(img)

    # A fixed homography and the points it maps, for DLT and RANSAC.
    true_h = torch.tensor([[1.0, 0.05, 2.0], [-0.03, 0.95, 1.0], [1e-4, 2e-4, 1.0]])
    pts1 = torch.rand(1, 24, 2) * 30
    pts2 = linalg.transform_points(true_h[None], pts1) + 0.01 * torch.randn(1, 24, 2)
    intrinsics = torch.tensor([[[20.0, 0.0, 16.0], [0.0, 20.0, 16.0], [0.0, 0.0, 1.0]]])
    world = torch.rand(1, 8, 3) + torch.tensor([0.0, 0.0, 4.0])
    projected = world[..., :2] / world[..., 2:] * 20.0 + 16.0
    # Local affine frames around a few centres, for patch extraction, descriptors and matching.
    lafs = _lafs(6)
    lafs1, lafs2 = _lafs(20, max_angle=90.0), _lafs(20, max_angle=90.0)
    seg_pred = torch.randn(B, 4, 16, 16)
    seg_target = torch.randint(0, 4, (B, 16, 16))
    det_boxes, det_scores = _boxes_and_scores()
    blobs = (torch.rand(1, 1, 24, 24) > 0.6).float()
    rotations = conversions.axis_angle_to_rotation_matrix(torch.randn(4, 3))
    kmeans = KC.KMeans(3, None, max_iterations=5, seed=0)

    return {
        # Augmentations (training-time image pipelines).
        "kn_random_affine": (K.RandomAffine(degrees=30.0, translate=(0.1, 0.1), scale=(0.8, 1.2),
                                            shear=5.0, p=1.0), (img,)),
        "kn_color_jitter": (K.ColorJitter(0.2, 0.2, 0.2, 0.1, p=1.0), (img,)),
        "kn_random_erasing": (K.RandomErasing(p=1.0), (img,)),
        "kn_random_rain": (K.RandomRain(p=1.0), (img,)),
        "kn_cutmix": (K.RandomCutMixV2(p=1.0), (img, labels)),
        "kn_mosaic": (K.RandomMosaic((32, 32), p=1.0), (img,)),
        "kn_jigsaw": (K.RandomJigsaw((2, 2), p=1.0), (img,)),
        "kn_rand_augment": (K.auto.RandAugment(n=2, m=10), (img,)),
        "kn_aug_sequential_mask_boxes_keypoints": (pipeline, (img, mask, boxes, keypoints)),
        "kn_aug_sequential_random_apply": (random_apply, (img,)),
        "kn_aug_sequential_inverse": (invertible.inverse, (img,)),
        "kn_patch_sequential": (K.PatchSequential(K.ColorJitter(0.1, 0.1, 0.1, 0.1, p=1.0), grid_size=(2, 2),
                                                  patchwise_apply=False), (img,)),
        # Feature responses, descriptors, detectors and matchers.
        "kn_harris_response": (KF.harris_response, (gray,), {"k": 0.04}),
        "kn_nms2d": (subpix.nms2d, (KF.harris_response(gray), (3, 3))),
        "kn_sift_descriptor": (KF.SIFTDescriptor(patch_size=16, num_ang_bins=8, num_spatial_bins=4),
                               (torch.rand(6, 1, 16, 16),)),
        "kn_laf_descriptors": (KF.get_laf_descriptors, (gray[:1], lafs, KF.SIFTDescriptor(patch_size=16)),
                               {"patch_size": 16}),
        "kn_scale_space_detector": (KF.ScaleSpaceDetector(num_features=16), (gray[:1],)),
        "kn_conv_quad_interp3d": (subpix.conv_quad_interp3d, (torch.rand(1, 1, 3, 16, 16),)),
        "kn_heatmap_to_keypoints": (heatmap_to_keypoints, (torch.randn(B, 1, 32, 32),), {"n": 16}),
        "kn_match_snn": (KF.match_snn, (torch.randn(10, 32), torch.randn(12, 32)), {"th": 0.9}),
        "kn_match_smnn": (KF.match_smnn, (torch.randn(10, 32), torch.randn(12, 32)), {"th": 0.95}),
        "kn_match_mnn": (KF.match_mnn, (torch.randn(10, 32), torch.randn(12, 32))),
        "kn_match_fginn": (KF.match_fginn, (torch.randn(6, 32), torch.randn(6, 32), lafs, lafs)),
        "kn_match_adalam": (KF.match_adalam, (torch.randn(20, 16), torch.randn(20, 16), lafs1, lafs2),
                            {"hw1": (32, 32), "hw2": (32, 32)}),
        "kn_loftr": (KF.LoFTR(pretrained=None, config=LOFTR_CONFIG).eval(),
                     ({"image0": torch.rand(1, 1, 32, 32), "image1": torch.rand(1, 1, 32, 32)},)),
        # Geometry: homographies, RANSAC, PnP, warps, conversions.
        "kn_find_homography_dlt": (homography.find_homography_dlt, (pts1, pts2, torch.ones(1, 24))),
        "kn_ransac_homography": (ransac.RANSAC("homography", inl_th=1.0, max_iter=3, seed=0),
                                 (pts1[0], pts2[0])),
        "kn_ransac_fundamental": (ransac.RANSAC("fundamental", inl_th=1.0, max_iter=3, seed=0),
                                  (pts1[0], pts2[0])),
        "kn_solve_pnp_dlt": (calibration.solve_pnp_dlt, (world, projected, intrinsics)),
        "kn_warp_perspective": (KT.warp_perspective, (img, true_h[None].repeat(B, 1, 1), (H, W))),
        "kn_rotation_to_quaternion": (conversions.rotation_matrix_to_quaternion, (rotations,)),
        # Filters and losses (what a training step calls).
        "kn_canny": (KFi.canny, (img,)),
        "kn_ssim_loss": (KL.ssim_loss, (img, torch.rand(B, C, H, W), 5)),
        "kn_focal_loss": (KL.focal_loss, (seg_pred, seg_target), {"alpha": 0.5, "reduction": "mean"}),
        "kn_dice_loss": (KL.dice_loss, (seg_pred, seg_target)),
        # Post-processing, metrics and clustering.
        "kn_detr_postprocess": (DETRPostProcessor(0.3, num_classes=5, num_top_queries=10).eval(),
                                (torch.randn(B, 20, 5), torch.rand(B, 20, 4), torch.tensor([[32, 32], [48, 40]]))),
        "kn_box_nms": (bbox.nms, (det_boxes, det_scores, 0.5)),
        "kn_mean_average_precision": (KM.mean_average_precision, (
            [torch.tensor([[2.0, 2, 10, 10], [5, 5, 20, 20]])], [torch.tensor([1, 2])], [torch.tensor([0.9, 0.6])],
            [torch.tensor([[2.0, 3, 10, 11]])], [torch.tensor([1])], 3)),
        "kn_mean_iou": (KM.mean_iou, (seg_pred.argmax(1), seg_target, 4)),
        "kn_kmeans_fit": (kmeans.fit, (torch.randn(30, 2),)),
        "kn_histogram_matching": (KC.histogram_matching, (gray[0, 0], gray[1, 0])),
        "kn_connected_components": (KC.connected_components, (blobs,), {"num_iterations": 20}),
        "kn_connected_components_union_find": (KC.connected_components_union_find, (blobs,)),
        "kn_extract_tensor_patches": (KC.extract_tensor_patches, (img, 8), {"stride": 8}),
        "kn_draw_rectangle": (KI.draw_rectangle, (img.clone(), boxes.clone()), {"color": torch.tensor([1.0, 0, 0])}),
    }


# What a user compiling each target would name in torchlint's `entry-points` setting: the
# dotted path of the function as it is defined (module path, then Class.method or function).
# Every augmentation's forward is a per-class copy of _BasicAugmentationBase.forward's code.
COMPILES = {
    "kn_random_affine": ["kornia.augmentation.base._BasicAugmentationBase.forward"],
    "kn_color_jitter": ["kornia.augmentation.base._BasicAugmentationBase.forward"],
    "kn_random_erasing": ["kornia.augmentation.base._BasicAugmentationBase.forward"],
    "kn_random_rain": ["kornia.augmentation.base._BasicAugmentationBase.forward"],
    "kn_cutmix": ["kornia.augmentation._2d.mix.base.MixAugmentationBaseV2.forward"],
    "kn_mosaic": ["kornia.augmentation._2d.mix.base.MixAugmentationBaseV2.forward"],
    "kn_jigsaw": ["kornia.augmentation._2d.mix.base.MixAugmentationBaseV2.forward"],
    "kn_rand_augment": ["kornia.augmentation.auto.base.PolicyAugmentBase.forward"],
    "kn_aug_sequential_mask_boxes_keypoints": ["kornia.augmentation.container.augment.AugmentationSequential.forward"],
    "kn_aug_sequential_random_apply": ["kornia.augmentation.container.augment.AugmentationSequential.forward"],
    "kn_aug_sequential_inverse": ["kornia.augmentation.container.augment.AugmentationSequential.inverse"],
    "kn_patch_sequential": ["kornia.augmentation.container.patch.PatchSequential.forward"],
    "kn_harris_response": ["kornia.feature.responses.harris_response"],
    "kn_nms2d": ["kornia.geometry.subpix.nms.nms2d"],
    "kn_sift_descriptor": ["kornia.feature.siftdesc.SIFTDescriptor.forward"],
    "kn_laf_descriptors": ["kornia.feature.integrated.get_laf_descriptors"],
    "kn_scale_space_detector": ["kornia.feature.scale_space_detector.ScaleSpaceDetector.forward"],
    "kn_conv_quad_interp3d": ["kornia.geometry.subpix.spatial_soft_argmax.conv_quad_interp3d"],
    "kn_heatmap_to_keypoints": ["kornia.feature.disk.detector.heatmap_to_keypoints"],
    "kn_match_snn": ["kornia.feature.matching.match_snn"],
    "kn_match_smnn": ["kornia.feature.matching.match_smnn"],
    "kn_match_mnn": ["kornia.feature.matching.match_mnn"],
    "kn_match_fginn": ["kornia.feature.matching.match_fginn"],
    "kn_match_adalam": ["kornia.feature.adalam.adalam.match_adalam"],
    "kn_loftr": ["kornia.feature.loftr.loftr.LoFTR.forward"],
    "kn_find_homography_dlt": ["kornia.geometry.homography.find_homography_dlt"],
    "kn_ransac_homography": ["kornia.geometry.ransac.RANSAC.forward"],
    "kn_ransac_fundamental": ["kornia.geometry.ransac.RANSAC.forward"],
    "kn_solve_pnp_dlt": ["kornia.geometry.calibration.pnp.solve_pnp_dlt"],
    "kn_warp_perspective": ["kornia.geometry.transform.imgwarp.warp_perspective"],
    "kn_rotation_to_quaternion": ["kornia.geometry.conversions.rotation_matrix_to_quaternion"],
    "kn_canny": ["kornia.filters.canny.canny"],
    "kn_ssim_loss": ["kornia.losses.ssim.ssim_loss"],
    "kn_focal_loss": ["kornia.losses.focal.focal_loss"],
    "kn_dice_loss": ["kornia.losses.dice.dice_loss"],
    "kn_detr_postprocess": ["kornia.models.rt_detr.post_processor.DETRPostProcessor.forward"],
    "kn_box_nms": ["kornia.geometry.bbox.nms"],
    "kn_mean_average_precision": ["kornia.metrics.mean_average_precision.mean_average_precision"],
    "kn_mean_iou": ["kornia.metrics.mean_iou.mean_iou"],
    "kn_kmeans_fit": ["kornia.contrib.kmeans.KMeans.fit"],
    "kn_histogram_matching": ["kornia.contrib.histogram_matching.histogram_matching"],
    "kn_connected_components": ["kornia.contrib.connected_components.connected_components"],
    "kn_connected_components_union_find": ["kornia.contrib.connected_components.connected_components_union_find"],
    "kn_extract_tensor_patches": ["kornia.contrib.extract_patches.extract_tensor_patches"],
    "kn_draw_rectangle": ["kornia.image.draw.draw_rectangle"],
}
