class Saliency:
    """Installs the hooks its subclasses' attribution needs; ``_clear`` removes them."""

    def __init__(self, model):
        self.model = model
        self.handles = []
        self.grads = {}

    def _keep_grad(self, module, grad_in, grad_out):
        self.grads[module] = grad_out[0].detach()

    def _attach(self, module):
        handle = module.register_full_backward_hook(self._keep_grad)
        self.handles.append(handle)

    def _scale_inputs(self):
        def scale(module, args):
            return tuple(a * 0.5 for a in args)

        return self.model.register_forward_pre_hook(scale)

    def _clear(self):
        for handle in self.handles:
            handle.remove()
        self.handles = []
