"""Building and weights: a spec to a module, safetensors files, atomic saves."""
