"""The language server (`torchlint server`): the findings of `torchlint check` as the editor's
buffers change, with quick fixes, fix-all and hover. Needs pygls (`torchlint[server]`)."""
