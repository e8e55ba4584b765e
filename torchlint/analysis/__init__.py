"""What torchlint knows about the code: scopes, structure, compiled regions, guards."""
