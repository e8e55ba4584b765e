"""torchlint: find torch.compile graph breaks before the code runs."""

__version__ = "0.1.0"
