"""Recompile cases from diffusers 0.35.2: a scheduler's own `step` (and `scale_model_input`),
compiled and called once per denoising step of a ten-step sampling loop, as a pipeline calls it.

The timestep changes every call; schedulers that count steps keep the count on the scheduler.
"""

import torch

STEPS = 10
SHAPE = (1, 4, 8, 8)


def _steps(scheduler_class, **config):
    """Each timestep of a ten-step schedule with a fresh model output and sample."""
    scheduler = scheduler_class(num_train_timesteps=1000, **config)
    scheduler.set_timesteps(STEPS)
    step = scheduler.step
    for t in scheduler.timesteps[:STEPS]:
        yield step, (torch.randn(SHAPE), t, torch.randn(SHAPE)), {"return_dict": False}


def _int_steps(scheduler_class, **config):
    """The same, with each timestep passed as a Python int, as some pipelines do."""
    scheduler = scheduler_class(num_train_timesteps=1000, **config)
    scheduler.set_timesteps(STEPS)
    step = scheduler.step
    for t in scheduler.timesteps[:STEPS].tolist():
        yield step, (torch.randn(SHAPE), int(t), torch.randn(SHAPE)), {"return_dict": False}


def ddpm_step():
    """DDPMScheduler.step over ten timesteps (a 0-d tensor each)."""
    from diffusers import DDPMScheduler

    yield from _steps(DDPMScheduler)


def ddpm_step_int_timestep():
    """DDPMScheduler.step with the timestep passed as a Python int, new every step."""
    from diffusers import DDPMScheduler

    yield from _int_steps(DDPMScheduler)


def ddim_step():
    """DDIMScheduler.step over ten timesteps (a 0-d tensor each)."""
    from diffusers import DDIMScheduler

    yield from _steps(DDIMScheduler)


def ddim_step_int_timestep():
    """DDIMScheduler.step with the timestep as a Python int, new every step."""
    from diffusers import DDIMScheduler

    yield from _int_steps(DDIMScheduler)


def euler_step():
    """EulerDiscreteScheduler.step: the scheduler's `_step_index` advances by one per call."""
    from diffusers import EulerDiscreteScheduler

    yield from _steps(EulerDiscreteScheduler)


def euler_ancestral_step():
    """EulerAncestralDiscreteScheduler.step: `_step_index` advances and noise is drawn per call."""
    from diffusers import EulerAncestralDiscreteScheduler

    yield from _steps(EulerAncestralDiscreteScheduler)


def euler_scale_model_input():
    """EulerDiscreteScheduler.scale_model_input, then step (eager), per timestep: the step index advances."""
    from diffusers import EulerDiscreteScheduler

    scheduler = EulerDiscreteScheduler(num_train_timesteps=1000)
    scheduler.set_timesteps(STEPS)
    scale = scheduler.scale_model_input
    for t in scheduler.timesteps:
        sample = torch.randn(SHAPE)
        yield scale, (sample, t)
        scheduler.step(torch.randn(SHAPE), t, sample)


def dpm_solver_multistep_step():
    """DPMSolverMultistepScheduler.step: the list of past model outputs and the order count change per call."""
    from diffusers import DPMSolverMultistepScheduler

    yield from _steps(DPMSolverMultistepScheduler)


def pndm_step():
    """PNDMScheduler.step (PLMS): the scheduler's `counter` and list of past outputs grow per call."""
    from diffusers import PNDMScheduler

    yield from _steps(PNDMScheduler, skip_prk_steps=True)


def lms_step():
    """LMSDiscreteScheduler.step: the derivatives list grows up to the order per call."""
    from diffusers import LMSDiscreteScheduler

    yield from _steps(LMSDiscreteScheduler)


def heun_step():
    """HeunDiscreteScheduler.step: alternates first- and second-order steps on the scheduler's state."""
    from diffusers import HeunDiscreteScheduler

    yield from _steps(HeunDiscreteScheduler)


def unipc_step():
    """UniPCMultistepScheduler.step: the corrector's history and order count change per call."""
    from diffusers import UniPCMultistepScheduler

    yield from _steps(UniPCMultistepScheduler)


def add_noise_training():
    """DDPMScheduler.add_noise in training: a new batch of random timesteps every call."""
    from diffusers import DDPMScheduler

    scheduler = DDPMScheduler(num_train_timesteps=1000)
    add_noise = scheduler.add_noise
    for _ in range(STEPS):
        yield add_noise, (torch.randn(SHAPE), torch.randn(SHAPE), torch.randint(0, 1000, (1,)))


def timestep_embedding_growing_batch():
    """`get_timestep_embedding` of a batch of timesteps whose size grows 1..10."""
    from diffusers.models.embeddings import get_timestep_embedding

    for batch in range(1, STEPS + 1):
        yield get_timestep_embedding, (torch.randint(0, 1000, (batch,)), 32)


def torchlint_targets():
    return {
        "ddpm_step": ddpm_step(),
        "ddpm_step_int_timestep": ddpm_step_int_timestep(),
        "ddim_step": ddim_step(),
        "ddim_step_int_timestep": ddim_step_int_timestep(),
        "euler_step": euler_step(),
        "euler_ancestral_step": euler_ancestral_step(),
        "euler_scale_model_input": euler_scale_model_input(),
        "dpm_solver_multistep_step": dpm_solver_multistep_step(),
        "pndm_step": pndm_step(),
        "lms_step": lms_step(),
        "heun_step": heun_step(),
        "unipc_step": unipc_step(),
        "add_noise_training": add_noise_training(),
        "timestep_embedding_growing_batch": timestep_embedding_growing_batch(),
    }
