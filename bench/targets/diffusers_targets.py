"""Verify targets: diffusers 0.35.2, diffusion models and schedulers. UNet and autoencoder
forward passes, and a few denoising steps of a DDPM and a DDIM scheduler as a pipeline runs
them."""

import torch

BATCH = 2
BLOCKS = dict(block_out_channels=(32, 64), layers_per_block=1, norm_num_groups=8)


def _image(channels=3, size=16):
    return torch.randn(BATCH, channels, size, size)


class SamplingLoop(torch.nn.Module):
    """A few denoising steps, as a diffusers pipeline runs them."""

    def __init__(self, unet, scheduler, steps=3):
        super().__init__()
        self.unet, self.scheduler = unet, scheduler
        scheduler.set_timesteps(steps)

    def forward(self, sample):
        for t in self.scheduler.timesteps:
            sample = self.scheduler.step(self.unet(sample, t).sample, t, sample).prev_sample
        return sample


def _unet2d(df):
    return df.UNet2DModel(
        sample_size=16, in_channels=3, out_channels=3, **BLOCKS,
        down_block_types=("DownBlock2D", "AttnDownBlock2D"),
        up_block_types=("AttnUpBlock2D", "UpBlock2D"))


def torchlint_targets():
    import diffusers as df

    torch.manual_seed(0)
    cond_unet = df.UNet2DConditionModel(
        sample_size=16, in_channels=4, out_channels=4, **BLOCKS,
        down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
        up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"),
        cross_attention_dim=32, attention_head_dim=8)
    vae = df.AutoencoderKL(
        in_channels=3, out_channels=3, latent_channels=4, block_out_channels=(16, 32),
        layers_per_block=1, norm_num_groups=8,
        down_block_types=("DownEncoderBlock2D",) * 2, up_block_types=("UpDecoderBlock2D",) * 2)
    steps = torch.tensor([10] * BATCH)
    return {
        "df_unet2d": (_unet2d(df).eval(), (_image(3), steps)),
        "df_unet2d_condition": (cond_unet.eval(), (_image(4), steps, torch.randn(BATCH, 4, 32))),
        "df_autoencoder_kl": (vae.eval(), (_image(3),)),
        "df_ddpm_sampling": (SamplingLoop(_unet2d(df), df.DDPMScheduler(num_train_timesteps=10)).eval(), (_image(3),)),
        "df_ddim_sampling": (SamplingLoop(_unet2d(df), df.DDIMScheduler(num_train_timesteps=10)).eval(), (_image(3),)),
    }


# What a user compiling each target would name in torchlint's `entry-points` setting: for the
# sampling loops, the model and the scheduler step the loop calls.
COMPILES = {
    "df_unet2d": ["diffusers.models.unets.unet_2d.UNet2DModel.forward"],
    "df_unet2d_condition": ["diffusers.models.unets.unet_2d_condition.UNet2DConditionModel.forward"],
    "df_autoencoder_kl": ["diffusers.models.autoencoders.autoencoder_kl.AutoencoderKL.forward"],
    "df_ddpm_sampling": [
        "diffusers.models.unets.unet_2d.UNet2DModel.forward",
        "diffusers.schedulers.scheduling_ddpm.DDPMScheduler.step",
    ],
    "df_ddim_sampling": [
        "diffusers.models.unets.unet_2d.UNet2DModel.forward",
        "diffusers.schedulers.scheduling_ddim.DDIMScheduler.step",
    ],
}
