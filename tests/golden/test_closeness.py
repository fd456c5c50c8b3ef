"""The golden comparisons shown to fail (ctest golden.comparators).

Each tolerance the golden tests use (compare_with_torch.py's for whole
models, compare_ops_with_torch.py's for single ops) must pass a tensor that
differs from PyTorch's by f32 rounding, and must fail:
  - a 1% change of one element of median magnitude;
  - the same change beside an infinity in PyTorch's tensor (the largest
    magnitude is taken over finite elements);
  - a NaN where PyTorch's element is finite, and an infinity of the other
    sign;
  - every element off by 0.8 of its own relative term (each within its
    tolerance, the norm of the difference not);
  - a different number of elements.
"""
import sys
import unittest

import torch

import compare_ops_with_torch
import compare_with_torch
from closeness import compare

TOLERANCES = {"models": compare_with_torch.TOLERANCE, "ops": compare_ops_with_torch.TOLERANCE}


def reference():
    """PyTorch's tensor: 4096 normal values in double, as a gradient would be."""
    return torch.randn(4096, generator=torch.Generator().manual_seed(7), dtype=torch.float64)


def median_element(t):
    finite = torch.isfinite(t)
    magnitudes = torch.where(finite, t.abs(), torch.zeros_like(t))
    order = magnitudes.argsort()
    return int(order[len(order) // 2 + int((~finite).sum()) // 2])


class Comparators(unittest.TestCase):
    def check(self, ours, theirs, passes, what, names=None):
        """`names`: the element the failure must name (found by the element
        check, not only by the norm check)."""
        for name, tol in TOLERANCES.items():
            with self.subTest(tolerance=name, case=what):
                result = compare(what, ours, theirs, tol)
                self.assertEqual(result.ok, passes, result.line)
                self.assertTrue(result.line.startswith("TENSOR OK" if passes else "TENSOR FAIL"))
                if names is not None:
                    self.assertIn(f" element {names} is ", result.line)

    def test_f32_rounding_passes(self):
        t = reference()
        self.check(t.float(), t, True, "rounded to f32")

    def test_one_element_changed_by_one_percent_fails(self):
        t = reference()
        ours, k = t.clone(), median_element(t)
        ours[k] *= 1.01
        self.check(ours, t, False, "one element 1% off", names=k)

    def test_an_infinity_does_not_widen_the_tolerance(self):
        t = reference()
        t[10], t[20] = float("inf"), float("-inf")
        self.check(t.float(), t, True, "infinities kept")
        ours, k = t.clone(), median_element(t)
        ours[k] *= 1.01
        self.check(ours, t, False, "one element 1% off beside infinities", names=k)

    def test_nan_and_the_wrong_infinity_fail(self):
        t = reference()
        ours = t.clone()
        ours[100] = float("nan")
        self.check(ours, t, False, "a NaN where PyTorch's is finite", names=100)
        theirs = t.clone()
        theirs[5], theirs[6] = float("nan"), float("inf")
        ours = theirs.clone()
        self.check(ours, theirs, True, "NaN and infinity where PyTorch's are")
        ours[6] = float("-inf")
        self.check(ours, theirs, False, "the other infinity", names=6)
        ours[6] = float("inf")
        ours[5] = 0.0
        self.check(ours, theirs, False, "a number where PyTorch's is NaN", names=5)

    def test_an_error_spread_over_every_element_fails_the_norm(self):
        t = reference()
        for name, tol in TOLERANCES.items():
            with self.subTest(tolerance=name):
                # Each element within its own relative term, the whole tensor
                # too far off in norm.
                self.assertLess(tol.of_norm, 0.8 * tol.of_element)
                ours = t * (1 + 0.8 * tol.of_element)
                result = compare("scaled", ours, t, tol)
                self.assertFalse(result.ok, result.line)
                self.assertIn("||ours - torch||", result.line)

    def test_sizes_must_agree(self):
        t = reference()
        self.check(t[:-1], t, False, "one element short")


if __name__ == "__main__":
    sys.exit(0 if unittest.main(exit=False, verbosity=2).result.wasSuccessful() else 1)
