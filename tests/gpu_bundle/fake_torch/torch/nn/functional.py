"""tests/gpu_bundle/fake_torch: torch.nn.functional, empty (no attention here)."""
