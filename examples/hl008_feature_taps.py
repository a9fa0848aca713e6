"""Feature taps and a head mask added with forward hooks (HL008).

- ``setdefault`` returns the stored (detached) tensor, which silently replaces the
  layer's output and cuts the gradient through it;
- ``mask_heads`` rebinds ``output`` but never returns it, so the mask is never applied.
"""

features = {}


def mask_heads(module, args, output):
    output = output * module.head_mask.to(output.dtype)


def install(model):
    model.encoder.register_forward_hook(lambda m, i, o: features.setdefault("encoder", o.detach()))
    for block in model.blocks:
        block.attn.register_forward_hook(mask_heads)
