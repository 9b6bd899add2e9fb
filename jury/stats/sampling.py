"""A stratified sample of records for people to review: allocation and a seeded draw.

The frame is a list of records, each in one stratum (a key the caller builds: the verdict, the
flag, the difficulty, the database, the model, the agreement level, or a tuple of them).
Within each stratum the sample is a simple random sample without replacement, so every record
of stratum h has inclusion probability n_h / N_h and design weight N_h / n_h.

Allocation of a total n (:func:`allocate`):

- ``proportional``: n_h proportional to N_h;
- ``neyman``: n_h proportional to N_h * S_h, S_h the stratum's standard deviation of the
  outcome (given, or estimated from per-record values: their sample SD, ddof 1; a stratum
  with one record has S_h 0). When every S_h is 0, proportional.

Both within bounds lo_h <= n_h <= N_h, lo_h = min(minimum, N_h): the continuous allocation is
x_h = clip(c * w_h, lo_h, N_h) with c found (exactly) so the x_h sum to n, w_h = N_h or
N_h * S_h; then rounded by largest remainder: each
stratum gets floor(x_h), and the strata with the largest fractional parts (ties: first stratum
first) one more until the total is n.

Seed scheme: strata in order of first appearance in the frame; stratum h (0-based) draws its
n_h records with ``numpy.random.default_rng([seed, h]).choice(N_h, n_h, replace=False)``
over its records in frame order.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["allocate", "Stratum", "StratifiedSample", "stratified_sample"]

Method = Literal["proportional", "neyman"]


def _continuous(weights: np.ndarray, lo: np.ndarray, hi: np.ndarray, n: float) -> np.ndarray:
    """x = clip(c * weights, lo, hi) summing to n. The sum is piecewise linear and
    non-decreasing in c, so c is found exactly on the segment between two breakpoints
    (c = lo_h / w_h or hi_h / w_h) where it crosses n. When even c = infinity leaves records
    over (strata of weight 0 stay at lo), the rest goes to the weight-0 strata in proportion
    to their room."""
    pos = weights > 0

    def total(c: float) -> float:
        return float(np.clip(c * weights, lo, hi).sum())

    top = np.where(pos, hi, lo)
    if top.sum() < n:  # the weighted strata are full: spread the rest over the others
        room = np.where(pos, 0.0, hi - lo)
        spread: np.ndarray = top + room * (n - top.sum()) / room.sum()
        return spread
    points = np.unique(np.concatenate([[0.0], lo[pos] / weights[pos], hi[pos] / weights[pos]]))
    values = np.array([total(c) for c in points])
    j = int(np.searchsorted(values, n, side="left"))
    if j == 0:
        at_zero: np.ndarray = np.clip(points[0] * weights, lo, hi)
        return at_zero
    c0, c1, v0, v1 = points[j - 1], points[j], values[j - 1], values[j]
    c = c1 if v1 == v0 else c0 + (n - v0) * (c1 - c0) / (v1 - v0)
    x: np.ndarray = np.clip(c * weights, lo, hi)
    return x


def allocate(
    sizes: ArrayLike,
    n: int,
    *,
    method: Method = "proportional",
    sd: ArrayLike | None = None,
    minimum: int = 1,
) -> np.ndarray:
    """Per-stratum sample sizes summing to ``n`` (the module doc's rule).

    Args:
        sizes: ``(H,)`` the strata's sizes N_h in the frame.
        n: the total sample size, at most sum(N_h).
        method: ``"proportional"`` or ``"neyman"``.
        sd: ``(H,)`` the strata's standard deviations S_h (Neyman only, required there).
        minimum: the least each stratum gets (capped by its size).

    Returns:
        ``(H,)`` integer sizes n_h.

    Raises:
        ValueError: a negative size, n beyond the frame or below the minimums, an unknown
            method, or Neyman without one non-negative SD per stratum.
    """
    N = np.asarray(sizes)
    if N.ndim != 1 or np.any(N < 0) or (N.size and not np.all(np.mod(N, 1) == 0)):
        raise ValueError("sizes must be non-negative integers, one per stratum")
    N = N.astype(np.int64)
    n = int(n)
    if n < 0 or n > N.sum():
        raise ValueError(f"n must be between 0 and the frame's {int(N.sum())} records, got {n}")
    if minimum < 0:
        raise ValueError(f"minimum must be non-negative, got {minimum}")
    lo = np.minimum(int(minimum), N)
    if lo.sum() > n:
        raise ValueError(f"n={n} is below the {int(lo.sum())} records the minimum of {minimum} per stratum needs")
    if method == "proportional":
        weights = N.astype(float)
    elif method == "neyman":
        if sd is None:
            raise ValueError("Neyman allocation needs the strata's standard deviations (sd)")
        s = np.asarray(sd, dtype=float)
        if s.shape != N.shape or np.any(~np.isfinite(s)) or np.any(s < 0):
            raise ValueError("sd must hold one non-negative number per stratum")
        weights = N * s
        if weights.sum() <= 0:
            weights = N.astype(float)
    else:
        raise ValueError(f"method must be 'proportional' or 'neyman', got {method!r}")
    x = _continuous(weights, lo.astype(float), N.astype(float), float(n))
    base = np.clip(np.floor(x + 1e-9), lo, N).astype(np.int64)
    while base.sum() > n:  # x within 1e-9 below an integer on several strata: undo the smallest
        h = int(np.argmin(np.where(base > lo, x - base, np.inf)))
        base[h] -= 1
    frac = np.where(base < N, x - base, -np.inf)
    for h in sorted(range(N.size), key=lambda i: (-frac[i], i))[: n - int(base.sum())]:
        base[h] += 1
    return base


@dataclass(frozen=True)
class Stratum:
    """One stratum of the frame.

    :ivar key: its key.
    :ivar size: N_h, its records in the frame.
    :ivar sample: n_h, its records in the sample.
    :ivar sd: the S_h its Neyman allocation used (None otherwise).
    """

    key: Hashable
    size: int
    sample: int
    sd: float | None

    @property
    def inclusion(self) -> float:
        """n_h / N_h, every one of its records' probability of being in the sample."""
        return self.sample / self.size if self.size else 0.0


@dataclass(frozen=True)
class StratifiedSample:
    """A seeded stratified sample of a frame.

    :ivar indices: ``(n,)`` the sampled records' positions in the frame, ascending.
    :ivar inclusion: ``(n,)`` each sampled record's inclusion probability n_h / N_h.
    :ivar stratum: ``(n,)`` each sampled record's stratum (index into ``strata``).
    :ivar strata: the frame's strata, in order of first appearance.
    :ivar frame_size: N, the records in the frame.
    :ivar method: ``"given"`` (sizes given), ``"proportional"`` or ``"neyman"``.
    :ivar minimum: the minimum per stratum of an allocation.
    :ivar seed: the seed of the draw.
    """

    indices: np.ndarray
    inclusion: np.ndarray
    stratum: np.ndarray
    strata: tuple[Stratum, ...]
    frame_size: int
    method: str
    minimum: int
    seed: int

    @property
    def weights(self) -> np.ndarray:
        """``(n,)`` design weights 1 / inclusion (N_h / n_h)."""
        return 1.0 / self.inclusion


def stratified_sample(
    strata: Sequence[Hashable],
    *,
    n: int | None = None,
    sizes: Mapping[Hashable, int] | None = None,
    method: Method = "proportional",
    sd: Mapping[Hashable, float] | None = None,
    values: ArrayLike | None = None,
    minimum: int = 1,
    seed: int = 0,
) -> StratifiedSample:
    """Draw a stratified sample of the frame (the module doc's allocation and seed scheme).

    Args:
        strata: one stratum key per record of the frame.
        n: the total sample size, allocated by ``method`` (give ``n`` or ``sizes``).
        sizes: the sample size of each stratum, given (a missing stratum gets 0; each at
            most its stratum's size).
        method: ``"proportional"`` or ``"neyman"``.
        sd: Neyman: S_h per stratum key.
        values: Neyman without ``sd``: one number per record (e.g. the panel's 0/1 flag or
            a posterior), whose per-stratum sample SD is S_h.
        minimum: the least each stratum gets from an allocation (capped by its size).
        seed: the draw's seed.

    Raises:
        ValueError: neither or both of n and sizes, a size beyond its stratum, a key in
            sizes or sd that is no stratum, or ``values`` of another length.
    """
    keys = list(dict.fromkeys(strata))
    at = {k: h for h, k in enumerate(keys)}
    code = np.array([at[s] for s in strata], dtype=np.int64)
    N = np.bincount(code, minlength=len(keys)) if code.size else np.zeros(0, dtype=np.int64)
    used_sd: list[float | None] = [None] * len(keys)
    if (n is None) == (sizes is None):
        raise ValueError("give the total n (allocated) or the per-stratum sizes, not both")
    if sizes is not None:
        alloc = _given_sizes(sizes, keys, at, N)
        label = "given"
    else:
        s = _neyman_sd(sd, values, keys, at, code, N) if method == "neyman" else None
        used_sd = [float(x) for x in s] if s is not None else used_sd
        alloc = allocate(N, int(n or 0), method=method, sd=s, minimum=minimum)
        label = method
    indices, inclusion, stratum = _draw_strata(code, alloc, N, seed)
    return StratifiedSample(
        indices=indices,
        inclusion=inclusion,
        stratum=stratum,
        strata=tuple(Stratum(k, int(N[h]), int(alloc[h]), used_sd[h]) for h, k in enumerate(keys)),
        frame_size=int(code.size),
        method=label,
        minimum=int(minimum),
        seed=int(seed),
    )


def _given_sizes(sizes: Mapping[Hashable, int], keys: list[Hashable], at: dict[Hashable, int], N: np.ndarray) -> np.ndarray:
    """The given per-stratum sample sizes, in the order of ``keys``, checked against the frame."""
    unknown = [k for k in sizes if k not in at]
    if unknown:
        raise ValueError(f"sizes name strata not in the frame: {unknown}")
    alloc = np.array([int(sizes.get(k, 0)) for k in keys], dtype=np.int64)
    if np.any(alloc < 0) or np.any(alloc > N):
        raise ValueError("a stratum's sample size is negative or beyond its records")
    return alloc


def _neyman_sd(
    sd: Mapping[Hashable, float] | None,
    values: ArrayLike | None,
    keys: list[Hashable],
    at: dict[Hashable, int],
    code: np.ndarray,
    N: np.ndarray,
) -> np.ndarray | None:
    """Neyman's S_h per stratum: given (``sd``), else the sample SD of ``values`` in each
    stratum (0 with one record), else None."""
    if sd is not None:
        unknown = [k for k in sd if k not in at]
        if unknown or len(sd) != len(keys):
            raise ValueError("sd needs one value per stratum of the frame")
        return np.array([float(sd[k]) for k in keys])
    if values is not None:
        vals = np.asarray(values, dtype=float)
        if vals.shape != (code.size,):
            raise ValueError(f"values must have one entry per record ({code.size})")
        return np.array([float(np.std(vals[code == h], ddof=1)) if N[h] > 1 else 0.0 for h in range(len(N))])
    return None


def _draw_strata(code: np.ndarray, alloc: np.ndarray, N: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Draw ``alloc[h]`` records of each stratum h without replacement (``default_rng([seed, h])``):
    (positions, inclusion probabilities, strata) of the sampled records, by ascending position."""
    chosen, incl, strat = [], [], []
    for h in range(len(N)):
        members = np.flatnonzero(code == h)
        if alloc[h]:
            pick = np.random.default_rng([seed, h]).choice(members.size, int(alloc[h]), replace=False)
            chosen.append(members[pick])
            incl.append(np.full(int(alloc[h]), alloc[h] / N[h]))
            strat.append(np.full(int(alloc[h]), h))
    idx = np.concatenate(chosen) if chosen else np.zeros(0, dtype=np.int64)
    order = np.argsort(idx, kind="stable")
    inclusion = (np.concatenate(incl) if incl else np.zeros(0))[order]
    stratum = (np.concatenate(strat) if strat else np.zeros(0, dtype=np.int64))[order]
    return idx[order], inclusion, stratum
