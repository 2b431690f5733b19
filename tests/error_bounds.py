"""How far a float32 evaluation of a program can be from its exact value, from its op order.

A program is written once against ``Ops`` (``rounded``, ``dot``, ``sum``, ``tanh``, ``exp``,
``max``): each call names a place where float32 rounds. ``error_bound`` evaluates it exactly
(float64) and differentiates each output with respect to every rounding (jax.jacrev). To
first order in the unit roundoff U = 2^-24 (Higham, "Accuracy and Stability of Numerical
Algorithms", 2nd ed., 2.2 and 3.1):

    y_float32 - y = sum_k c_k d_k,   c_k = (dy / dr_k) * s_k,   |d_k| <= U,

where r_k is the k-th rounded intermediate and s_k its size at that rounding:

- an operation or square root rounds its result once: s = |r| (a division twice, in case a
  compiler multiplies by a rounded reciprocal: sqrt(2) |r| for the two terms);
- a dot product of length n in any order, blocking or FMA use rounds n products and n - 1
  partial sums, each at most S = sum |a_i b_i|: n terms of size S, s = sqrt(n) S;
- a sum of n terms, any order: n - 1 partial sums, each at most sum |x_i|;
- tanh and exp are library approximations within ``ulps`` ulp (an ulp <= 2U |r|): a
  systematic error, added in the worst case, sum_k |dy/dr_k| * 2 ulps |r_k| * U.

The rounding errors d_k are modelled as independent with mean zero (Higham and Mary, "A New
Approach to Probabilistic Rounding Error Analysis", SIAM J. Sci. Comput. 41(5), 2019), so by
Hoeffding's inequality ``|sum_k c_k d_k| <= lam * U * sqrt(sum_k c_k^2)`` fails with
probability at most 2 exp(-lam^2 / 2) per output. The worst case (sum_k |c_k|) also holds
but compounds over layers as if every error had the same sign: on samples/mlp_model it
allows 3 % on the probabilities, tens of thousands of times what either path is off.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import jax
import jax.numpy as jnp
import numpy as np

U = 2.0**-24  # float32's unit roundoff: round to nearest, 24-bit significand


@dataclass
class Ops:
    """The float32 operations of a program, each a rounding site (jnp float64 arrays).

    Without ``perturbations`` the sites' sizes are recorded; with them, the k-th site's
    result is shifted by ``perturbations[k]``, which jax differentiates.
    """

    perturbations: Sequence[jax.Array] | None = None
    random_sizes: list[jax.Array] = field(default_factory=list)  # s_k; 0 where systematic
    systematic_sizes: list[jax.Array] = field(default_factory=list)  # 2 ulps |r_k|; or 0
    sites: int = 0

    def _site(
        self, result: jax.Array, random: jax.Array | float, systematic: jax.Array | float = 0.0
    ) -> jax.Array:
        self.sites += 1
        if self.perturbations is not None:
            return result + self.perturbations[self.sites - 1]
        self.random_sizes.append(jnp.broadcast_to(random, result.shape))
        self.systematic_sizes.append(jnp.broadcast_to(systematic, result.shape))
        return result

    def rounded(self, result: jax.Array, roundings: int = 1) -> jax.Array:
        """An arithmetic operation's result, rounded ``roundings`` times."""
        return self._site(result, math.sqrt(roundings) * jnp.abs(result))

    def dot(self, a: jax.Array, weights: jax.Array) -> jax.Array:
        n = weights.shape[0]
        return self._site(a @ weights, math.sqrt(n) * (jnp.abs(a) @ jnp.abs(weights)))

    def sum(self, x: jax.Array) -> jax.Array:
        """Sum over the last axis, kept."""
        n = x.shape[-1]
        size = math.sqrt(n - 1) * jnp.abs(x).sum(axis=-1, keepdims=True)
        return self._site(x.sum(axis=-1, keepdims=True), size)

    def max(self, x: jax.Array) -> jax.Array:
        """Maximum over the last axis, kept: exact, no rounding."""
        return x.max(axis=-1, keepdims=True)

    def tanh(self, x: jax.Array, ulps: float) -> jax.Array:
        result = jnp.tanh(x)
        return self._site(result, 0.0, 2 * ulps * jnp.abs(result))

    def exp(self, x: jax.Array, ulps: float) -> jax.Array:
        result = jnp.exp(x)
        return self._site(result, 0.0, 2 * ulps * result)


@dataclass(frozen=True)
class Bound:
    value: np.ndarray  # the program's exact result
    error: np.ndarray  # a float32 evaluation is within this of value (see the module doc)


def error_bound(
    program: Callable[..., jax.Array], arguments: Sequence[np.ndarray], lam: float
) -> Bound:
    """The exact value of ``program(ops, *arguments)`` and its float32 error bound."""
    recorded, jacobian_of = _compiled(program)
    with jax.enable_x64(True):
        inputs = [jnp.asarray(argument, dtype=jnp.float64) for argument in arguments]
        value, random_sizes, systematic_sizes = recorded(inputs)
        jacobians = jacobian_of([jnp.zeros_like(size) for size in random_sizes], inputs)
        value = np.asarray(value)
        random = np.zeros(value.shape)
        systematic = np.zeros(value.shape)
        for jacobian, random_size, systematic_size in zip(
            jacobians, random_sizes, systematic_sizes, strict=True
        ):
            jacobian = np.asarray(jacobian)
            site_axes = tuple(range(value.ndim, jacobian.ndim))
            random += ((jacobian * np.asarray(random_size)) ** 2).sum(axis=site_axes)
            systematic += (np.abs(jacobian) * np.asarray(systematic_size)).sum(axis=site_axes)
        return Bound(value, U * (lam * np.sqrt(random) + systematic))


@functools.cache
def _compiled(program: Callable[..., jax.Array]):
    """The recording pass and the Jacobian by every rounding, jitted once per program."""

    def recorded(inputs: list[jax.Array]):
        recorder = Ops()
        value = program(recorder, *inputs)
        return value, recorder.random_sizes, recorder.systematic_sizes

    def perturbed(shifts: list[jax.Array], inputs: list[jax.Array]) -> jax.Array:
        return program(Ops(shifts), *inputs)

    return jax.jit(recorded), jax.jit(jax.jacrev(perturbed))
