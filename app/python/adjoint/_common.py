"""What the torch operations share: tensors to numpy, and the refusal of second-order gradients."""
import functools

import torch as _torch


def _to_numpy(t):
    return t.detach().to("cpu", _torch.float32).contiguous().numpy()


def _first_order(name):
    """Wraps an autograd.Function's backward: the engine's backward passes are not differentiable themselves, so a
    backward run with grad mode on (create_graph=True, a second derivative on its way) raises instead of handing
    torch gradients whose own derivative would silently be 0."""
    def wrap(backward):
        @functools.wraps(backward)
        def checked(ctx, *grads):
            if _torch.is_grad_enabled():
                raise RuntimeError(f"adjoint.torch.{name}: second-order gradients (create_graph=True) are not "
                                   "supported: its backward pass is not differentiable")
            return backward(ctx, *grads)
        return checked
    return wrap
