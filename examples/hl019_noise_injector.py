"""A noise injector for robustness experiments: each experiment builds one around the
same model, and each one's hooks stay on it, so the noise of every earlier experiment is
still added (and every injector, with what it holds, stays alive)."""

from functools import partial

import torch


class NoiseInjector:
    def __init__(self, model, layer_names, sigma):
        self.sigma = sigma
        self.fired = 0
        for name, module in model.named_modules():
            if name in layer_names:
                module.register_forward_hook(partial(self._add_noise, name))

    def _add_noise(self, name, module, args, output):
        self.fired += 1
        return output + self.sigma * torch.randn_like(output)


def sweep(model, batch, sigmas):
    scores = []
    for sigma in sigmas:
        NoiseInjector(model, {"encoder"}, sigma)
        with torch.no_grad():
            scores.append(model(batch).mean().item())
    return scores
