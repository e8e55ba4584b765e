"""Recompile cases that compile in the user's own code: hooks added after `torch.compile`,
`Module.compile()` on torch.nn modules, and `random.Random` objects in compiled code.

Each case compiles its model itself, naming no backend (a recording's applies), and yields it.
"""

import random

import torch
from torch import nn

CALLS = 10


def _mlp():
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 8))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.mlp = _mlp()

    def forward(self, x):
        return self.mlp(x) + x


def _clip_output(module, inputs, output):
    return output.clamp(-0.1, 0.1)


def _scale_input(module, inputs):
    return (inputs[0] * 10.0,)


def forward_hook_added_after_compile():
    """A forward hook that clips outputs is registered after `torch.compile(model)`, before the calls."""
    model = Block()
    compiled = torch.compile(model)
    compiled(torch.randn(4, 8))
    model.register_forward_hook(_clip_output)
    for _ in range(CALLS):
        yield compiled, (torch.randn(4, 8),)


def forward_hook_on_submodule_after_compile():
    """A hook that clips features is registered on a submodule after `torch.compile(model)` ran once."""
    model = Block()
    compiled = torch.compile(model)
    compiled(torch.randn(4, 8))
    model.mlp.register_forward_hook(_clip_output)
    for _ in range(CALLS):
        yield compiled, (torch.randn(4, 8),)


def pre_hook_added_after_compile():
    """A forward pre-hook on a submodule is registered after `torch.compile(model)` ran once."""
    model = Block()
    compiled = torch.compile(model)
    compiled(torch.randn(4, 8))
    model.mlp[0].register_forward_pre_hook(_scale_input)
    for _ in range(CALLS):
        yield compiled, (torch.randn(4, 8),)


def hook_added_before_compile():
    """The forward hook is registered first, then the model is compiled and called."""
    model = Block()
    model.register_forward_hook(_clip_output)
    compiled = torch.compile(model)
    for _ in range(CALLS):
        yield compiled, (torch.randn(4, 8),)


def hook_removed_after_compile():
    """A hook present at compile time is removed after five calls (Dynamo notices: one recompile)."""
    model = Block()
    handle = model.register_forward_hook(_clip_output)
    compiled = torch.compile(model)
    for step in range(CALLS):
        if step == 5:
            handle.remove()
        yield compiled, (torch.randn(4, 8),)


def sequential_compiled_in_place():
    """`nn.Sequential(...).compile()`: its forward lives in torch.nn, so nothing is compiled."""
    model = _mlp()
    model.compile()
    for _ in range(CALLS):
        yield model, (torch.randn(4, 8),)


def encoder_layer_compiled_in_place():
    """`nn.TransformerEncoderLayer(...).compile()` with batches of new data: nothing is compiled."""
    model = nn.TransformerEncoderLayer(16, 2, 32, batch_first=True, dropout=0.0).eval()
    model.compile()
    for _ in range(CALLS):
        yield model, (torch.randn(2, 6, 16),)


def user_module_compiled_in_place():
    """`Block().compile()`: a user module's forward, compiled in place and called on new data."""
    model = Block()
    model.compile()
    for _ in range(CALLS):
        yield model, (torch.randn(4, 8),)


def sequential_wrapped_by_torch_compile():
    """`torch.compile(nn.Sequential(...))` called on new data: the wrapper compiles it."""
    compiled = torch.compile(_mlp())
    for _ in range(CALLS):
        yield compiled, (torch.randn(4, 8),)


class RandomDropPath(nn.Module):
    def __init__(self, seed=0):
        super().__init__()
        self.rng = random.Random(seed)
        self.linear = nn.Linear(8, 8)

    def forward(self, x):
        if self.rng.random() < 0.5:
            return x
        return self.linear(x)


def random_instance_method_in_forward():
    """`self.rng.random()` of a `random.Random` decides a drop-path per call."""
    model = RandomDropPath()
    for _ in range(CALLS):
        yield model, (torch.randn(4, 8),)


RNG = random.Random(0)


def jittered(x):
    return x * RNG.uniform(0.5, 1.5) + RNG.gauss(0.0, 0.1)


def random_instance_jitter():
    """`RNG.uniform` and `RNG.gauss` of a module-level `random.Random` jitter each batch."""
    RNG.seed(0)
    for _ in range(CALLS):
        yield jittered, (torch.randn(4, 8),)


def module_random_jitter(x):
    return x * random.uniform(0.5, 1.5)


def module_level_random_jitter():
    """`random.uniform` of the `random` module jitters each batch (a graph break, results stay right)."""
    for _ in range(CALLS):
        yield module_random_jitter, (torch.randn(4, 8),)


def torch_rand_jitter(x):
    return x * (0.5 + torch.rand(()))


def torch_random_jitter():
    """`torch.rand(())` jitters each batch inside the graph."""
    for _ in range(CALLS):
        yield torch_rand_jitter, (torch.randn(4, 8),)


def torchlint_targets():
    return {
        "forward_hook_added_after_compile": forward_hook_added_after_compile(),
        "forward_hook_on_submodule_after_compile": forward_hook_on_submodule_after_compile(),
        "pre_hook_added_after_compile": pre_hook_added_after_compile(),
        "hook_added_before_compile": hook_added_before_compile(),
        "hook_removed_after_compile": hook_removed_after_compile(),
        "sequential_compiled_in_place": sequential_compiled_in_place(),
        "encoder_layer_compiled_in_place": encoder_layer_compiled_in_place(),
        "user_module_compiled_in_place": user_module_compiled_in_place(),
        "sequential_wrapped_by_torch_compile": sequential_wrapped_by_torch_compile(),
        "random_instance_method_in_forward": random_instance_method_in_forward(),
        "random_instance_jitter": random_instance_jitter(),
        "module_level_random_jitter": module_level_random_jitter(),
        "torch_random_jitter": torch_random_jitter(),
    }
