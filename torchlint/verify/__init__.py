"""Running code under TorchDynamo to see where it really breaks the graph."""
