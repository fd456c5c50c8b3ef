"""How the golden tests compare a Sinter tensor with PyTorch's.

The rules of sinter/Compare.h (which the C++ tests use), plus a norm check:
  - element k passes when |ours[k] - torch[k]| <= absolute
    + of_largest * max|torch| + of_element * |torch[k]|, the largest taken over
    PyTorch's finite elements only (one infinity must not make every
    tolerance infinite);
  - where PyTorch's element is NaN ours must be NaN, where it is infinite ours
    must be the same infinity, and a NaN or infinity where PyTorch's is finite
    never passes (the test is element by element: a NaN compares false);
  - over the finite elements, ||ours - torch||_2 <= of_norm * ||torch||_2
    + absolute * sqrt(n): an error spread over every element, each within its
    own tolerance, still fails.
test_closeness.py shows each rule failing on a one-element change.
"""
import math
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Tolerance:
    of_largest: float = 0.0
    of_element: float = 0.0
    absolute: float = 0.0
    of_norm: float = 0.0  # 0: no norm check


@dataclass
class Result:
    ok: bool
    line: str


def compare(name, ours, theirs, tol):
    """Compares `ours` with PyTorch's `theirs` (any shapes, any float dtype);
    returns whether it passed and the report's line."""
    ours, theirs = ours.detach().double().flatten(), theirs.detach().double().flatten()
    if ours.shape != theirs.shape:
        return Result(False, f"TENSOR FAIL  {name:<40} {ours.numel()} elements, PyTorch's {theirs.numel()}")
    finite = torch.isfinite(theirs)
    largest = theirs[finite].abs().max().item() if finite.any() else 0.0
    allowed = tol.absolute + tol.of_largest * largest + tol.of_element * theirs.abs()
    allowed = torch.where(finite, allowed, torch.zeros_like(allowed))
    diff = (ours - theirs).abs()
    within = torch.where(finite, diff <= allowed,
                         (ours == theirs) | (torch.isnan(ours) & torch.isnan(theirs)))
    both = finite & torch.isfinite(ours)
    worst = (diff[both] / allowed[both].clamp_min(1e-300)).max().item() if both.any() else 0.0
    if not within.all():
        k = int((~within).nonzero()[0])
        return Result(False, f"TENSOR FAIL  {name:<40} element {k} is {ours[k].item():.9g}, PyTorch's "
                             f"{theirs[k].item():.9g} (allowed {allowed[k].item():.3g}); "
                             f"{int((~within).sum())} of {within.numel()} out")
    if tol.of_norm > 0:
        error = (ours[both] - theirs[both]).norm().item()
        bound = tol.of_norm * theirs[both].norm().item() + tol.absolute * math.sqrt(int(both.sum()))
        if error > bound:
            return Result(False, f"TENSOR FAIL  {name:<40} every element within its tolerance, but "
                                 f"||ours - torch|| = {error:.3g} > {bound:.3g} "
                                 f"({tol.of_norm:g} of ||torch||)")
        worst = max(worst, error / bound if bound > 0 else 0.0)
    return Result(True, f"TENSOR OK    {name:<40} max diff {diff[both].max().item() if both.any() else 0.0:.2e}"
                        f"  ({100 * worst:.1f}% of tolerance)")
