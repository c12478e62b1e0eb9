//! Random distributions of the workload models, each sampled from a
//! [`SimRng`] by inversion (one uniform draw per sample unless noted), so a
//! run stays a function of its seed.
//!
//! Read first: Law & Kelton, *Simulation Modeling and Analysis* (inversion);
//! Harchol-Balter 1998 (bounded Pareto); Crovella & Bestavros 1997 and
//! Barford & Crovella 1998 (lognormal body with a Pareto tail).
//!
//! Values are plain reals in the unit of the field that uses them: seconds
//! for times, bytes for sizes, a count for counts.

use crate::error::SimError;
use crate::rng::SimRng;
use crate::spec::DistSpec;

/// A shipped empirical table: its name and its text (`value count` per line).
///
/// Every shipped table is measured data with a named source (the header of
/// each file in `src/app/data/` cites it); `docs/models/http.md` describes them.
const SHIPPED: &[(&str, &str)] = &[
    ("mah97_reply", include_str!("data/mah97_reply.counts")),
    ("mah97_request", include_str!("data/mah97_request.counts")),
    ("mah97_connections", include_str!("data/mah97_connections.counts")),
];

/// The names of the shipped empirical tables.
pub(crate) fn shipped_names() -> Vec<&'static str> {
    SHIPPED.iter().map(|(n, _)| *n).collect()
}

/// A shipped table as `(values, counts)`, values strictly increasing.
pub(crate) fn shipped(name: &str) -> Option<(Vec<f64>, Vec<f64>)> {
    let text = SHIPPED.iter().find(|(n, _)| *n == name)?.1;
    let (values, counts) = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut it = l.split_whitespace().map(|x| x.parse::<f64>().expect("shipped table parses"));
            (it.next().expect("value"), it.next().expect("count"))
        })
        .unzip();
    Some((values, counts))
}

/// Cumulative probabilities of `weights` (normalised; the last is exactly 1).
fn cumulative(weights: &[f64]) -> Vec<f64> {
    let total: f64 = weights.iter().sum();
    let mut acc = 0.0;
    let mut cum: Vec<f64> = weights
        .iter()
        .map(|w| {
            acc += w / total;
            acc
        })
        .collect();
    if let Some(last) = cum.last_mut() {
        *last = 1.0;
    }
    cum
}

/// A distribution ready to sample.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Dist {
    /// Always `value`.
    Constant(f64),
    /// Uniform on `[min, max)`.
    Uniform { min: f64, max: f64 },
    /// Exponential with the given mean.
    Exponential { mean: f64 },
    /// Pareto: `P(X > x) = (scale / x)^shape` for `x >= scale`.
    Pareto { shape: f64, scale: f64 },
    /// Pareto truncated to `[min, max]` (Harchol-Balter 1998).
    BoundedPareto { shape: f64, min: f64, max: f64 },
    /// `exp(N(mu, sigma^2))`.
    Lognormal { mu: f64, sigma: f64 },
    /// Lognormal body; a draw above `cutoff` is replaced by a Pareto(shape, cutoff)
    /// draw (Barford & Crovella 1998: lognormal body, Pareto tail).
    LognormalPareto { mu: f64, sigma: f64, cutoff: f64, shape: f64 },
    /// Piecewise-linear CDF through `(value, cdf)` points, cdf from 0 to 1.
    Empirical(Vec<(f64, f64)>),
    /// `values[i]` with probability `cum[i] - cum[i-1]` (cumulative, last = 1).
    Discrete { values: Vec<f64>, cum: Vec<f64> },
}

impl Dist {
    /// The distribution a validated spec describes.
    ///
    /// # Panics
    /// If `spec` names an unknown shipped table (validation rules it out).
    pub(crate) fn from_spec(spec: &DistSpec) -> Dist {
        match spec {
            DistSpec::Constant { value } => Dist::Constant(*value),
            DistSpec::Uniform { min, max } => Dist::Uniform { min: *min, max: *max },
            DistSpec::Exponential { mean } => Dist::Exponential { mean: *mean },
            DistSpec::Pareto { shape, scale } => Dist::Pareto { shape: *shape, scale: *scale },
            DistSpec::BoundedPareto { shape, min, max } => Dist::BoundedPareto { shape: *shape, min: *min, max: *max },
            DistSpec::Lognormal { mu, sigma } => Dist::Lognormal { mu: *mu, sigma: *sigma },
            DistSpec::LognormalPareto { mu, sigma, cutoff, shape } => {
                Dist::LognormalPareto { mu: *mu, sigma: *sigma, cutoff: *cutoff, shape: *shape }
            }
            DistSpec::Empirical { table, points } => match (table, points) {
                // ns-2 `RandomVariable/Empirical` with `interpolation_ 0` (ns-default.tcl), as
                // tcl/http/http-ex.tcl uses Mah's tables: each draw is one of the observed values.
                (Some(name), _) => {
                    let (values, counts) = shipped(name).expect("validated: known table");
                    Dist::Discrete { cum: cumulative(&counts), values }
                }
                (None, Some(p)) => Dist::Empirical(p.iter().map(|&[v, c]| (v, c)).collect()),
                (None, None) => unreachable!("validated: table or points"),
            },
            DistSpec::Discrete { values, weights } => {
                // Sorted by value, so that sampling by inversion is monotone (and `quantile` is one).
                let mut pairs: Vec<(f64, f64)> = values.iter().copied().zip(weights.iter().copied()).collect();
                pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
                let (values, weights): (Vec<f64>, Vec<f64>) = pairs.into_iter().unzip();
                Dist::Discrete { cum: cumulative(&weights), values }
            }
        }
    }

    /// One draw.
    pub(crate) fn sample(&self, rng: &mut SimRng) -> f64 {
        match self {
            Dist::Constant(v) => *v,
            Dist::Uniform { min, max } => rng.uniform_range(*min, *max),
            Dist::Exponential { mean } => rng.exponential(*mean),
            Dist::Pareto { shape, scale } => rng.pareto(*shape, *scale),
            Dist::BoundedPareto { shape, min, max } => {
                // Harchol-Balter 1998: F(x) = (1 - (L/x)^a) / (1 - (L/H)^a); inverted.
                let u = rng.uniform();
                let c = 1.0 - (min / max).powf(*shape);
                min / (1.0 - u * c).powf(1.0 / shape)
            }
            Dist::Lognormal { mu, sigma } => (mu + sigma * normal(rng)).exp(),
            Dist::LognormalPareto { mu, sigma, cutoff, shape } => {
                let x = (mu + sigma * normal(rng)).exp();
                if x > *cutoff {
                    rng.pareto(*shape, *cutoff)
                } else {
                    x
                }
            }
            Dist::Empirical(points) => interpolate(points, rng.uniform()),
            Dist::Discrete { values, cum } => {
                let u = rng.uniform();
                let i = cum.partition_point(|&c| c <= u).min(values.len() - 1);
                values[i]
            }
        }
    }

    /// The quantile function: the smallest `x` with `P(X <= x) >= u`, for `u` in `[0, 1]`.
    ///
    /// Sampling draws `quantile(U)` for the inversion-sampled distributions (all
    /// but the two lognormal ones, which sample by Box-Muller and agree in law).
    pub(crate) fn quantile(&self, u: f64) -> f64 {
        let u = u.clamp(0.0, 1.0);
        match self {
            Dist::Constant(v) => *v,
            Dist::Uniform { min, max } => min + (max - min) * u,
            Dist::Exponential { mean } => -mean * (1.0 - u).ln(),
            Dist::Pareto { shape, scale } => scale / (1.0 - u).powf(1.0 / shape),
            Dist::BoundedPareto { shape, min, max } => {
                let c = 1.0 - (min / max).powf(*shape);
                min / (1.0 - u * c).powf(1.0 / shape)
            }
            Dist::Lognormal { mu, sigma } => (mu + sigma * normal_quantile(u)).exp(),
            Dist::LognormalPareto { mu, sigma, cutoff, shape } => {
                // Mixture: the lognormal body below the cutoff, a Pareto tail from it with the rest of the mass.
                let body = normal_cdf((cutoff.ln() - mu) / sigma);
                if u <= body {
                    (mu + sigma * normal_quantile(u)).exp()
                } else {
                    cutoff / (1.0 - (u - body) / (1.0 - body)).powf(1.0 / shape)
                }
            }
            Dist::Empirical(points) => interpolate(points, u),
            Dist::Discrete { values, cum } => {
                let i = cum.partition_point(|&c| c < u).min(values.len() - 1);
                values[i]
            }
        }
    }

    /// The distribution function `P(X <= x)`.
    pub(crate) fn cdf(&self, x: f64) -> f64 {
        let f = match self {
            Dist::Constant(v) => f64::from(u8::from(x >= *v)),
            Dist::Uniform { min, max } => {
                if max > min {
                    (x - min) / (max - min)
                } else {
                    f64::from(u8::from(x >= *min))
                }
            }
            Dist::Exponential { mean } => 1.0 - (-x.max(0.0) / mean).exp(),
            Dist::Pareto { shape, scale } => {
                if x < *scale {
                    0.0
                } else {
                    1.0 - (scale / x).powf(*shape)
                }
            }
            Dist::BoundedPareto { shape, min, max } => {
                if x < *min {
                    0.0
                } else if x >= *max {
                    1.0
                } else {
                    (1.0 - (min / x).powf(*shape)) / (1.0 - (min / max).powf(*shape))
                }
            }
            Dist::Lognormal { mu, sigma } => {
                if x <= 0.0 {
                    0.0
                } else {
                    normal_cdf((x.ln() - mu) / sigma)
                }
            }
            Dist::LognormalPareto { mu, sigma, cutoff, shape } => {
                let body = normal_cdf((cutoff.ln() - mu) / sigma);
                if x <= 0.0 {
                    0.0
                } else if x <= *cutoff {
                    normal_cdf((x.ln() - mu) / sigma)
                } else {
                    body + (1.0 - body) * (1.0 - (cutoff / x).powf(*shape))
                }
            }
            Dist::Empirical(points) => {
                let i = points.partition_point(|&(v, _)| v <= x);
                if i == 0 {
                    0.0
                } else if i >= points.len() {
                    1.0
                } else {
                    let ((x0, c0), (x1, c1)) = (points[i - 1], points[i]);
                    if x1 > x0 {
                        c0 + (c1 - c0) * (x - x0) / (x1 - x0)
                    } else {
                        c0
                    }
                }
            }
            Dist::Discrete { values, cum } => {
                let i = values.partition_point(|&v| v <= x);
                if i == 0 {
                    0.0
                } else {
                    cum[i - 1]
                }
            }
        };
        f.clamp(0.0, 1.0)
    }

    /// The survival function `P(X > x)`, computed directly (not as `1 - cdf`) so that
    /// heavy tails keep their relative precision.
    pub(crate) fn sf(&self, x: f64) -> f64 {
        let step = |v: f64| f64::from(u8::from(x < v));
        let s = match self {
            Dist::Constant(v) => step(*v),
            Dist::Uniform { min, max } => {
                if max > min {
                    (max - x) / (max - min)
                } else {
                    step(*min)
                }
            }
            Dist::Exponential { mean } => (-x.max(0.0) / mean).exp(),
            Dist::Pareto { shape, scale } => {
                if x < *scale {
                    1.0
                } else {
                    (scale / x).powf(*shape)
                }
            }
            Dist::BoundedPareto { shape, min, max } => {
                if x < *min {
                    1.0
                } else if x >= *max {
                    0.0
                } else {
                    // HarcholBalter98: P(X > x) = ((L/x)^a - (L/H)^a) / (1 - (L/H)^a) on [L, H].
                    ((min / x).powf(*shape) - (min / max).powf(*shape)) / -(shape * (min / max).ln()).exp_m1()
                }
            }
            Dist::Lognormal { mu, sigma } => {
                if x <= 0.0 {
                    1.0
                } else {
                    normal_cdf(-(x.ln() - mu) / sigma)
                }
            }
            Dist::LognormalPareto { mu, sigma, cutoff, shape } => {
                if x <= 0.0 {
                    1.0
                } else if x <= *cutoff {
                    // P(x < body <= c) + P(tail draw) = P(body > x).
                    normal_cdf(-(x.ln() - mu) / sigma)
                } else {
                    normal_cdf(-(cutoff.ln() - mu) / sigma) * (cutoff / x).powf(*shape)
                }
            }
            Dist::Empirical(_) | Dist::Discrete { .. } => 1.0 - self.cdf(x),
        };
        s.clamp(0.0, 1.0)
    }

    /// The partial mean `E[X; X > x]` (the mean restricted to values above `x`; infinite where
    /// it diverges). `mean` is `partial_mean(-inf)` where finite.
    pub(crate) fn partial_mean(&self, x: f64) -> f64 {
        match self {
            Dist::Constant(v) => v * self.sf(x),
            Dist::Uniform { min, max } => {
                if max > min {
                    let lo = x.clamp(*min, *max);
                    (max * max - lo * lo) / (2.0 * (max - min))
                } else {
                    min * self.sf(x)
                }
            }
            Dist::Exponential { mean } => {
                let x = x.max(0.0);
                (x + mean) * (-x / mean).exp()
            }
            Dist::Pareto { shape, scale } => pareto_partial_mean(*shape, *scale, x),
            Dist::BoundedPareto { shape: a, min: l, max: h } => {
                let x = x.clamp(*l, *h);
                let c = -(a * (l / h).ln()).exp_m1();
                if (a - 1.0).abs() < 1e-12 {
                    l * (h / x).ln() / c
                } else {
                    // E[X; X > x] = a L^a (x^(1-a) - H^(1-a)) / ((a - 1)(1 - (L/H)^a)) on [L, H].
                    a * l.powf(*a) * (x.powf(1.0 - a) - h.powf(1.0 - a)) / ((a - 1.0) * c)
                }
            }
            Dist::Lognormal { mu, sigma } => lognormal_partial_mean(*mu, *sigma, x),
            Dist::LognormalPareto { mu, sigma, cutoff, shape } => {
                let p_tail = normal_cdf(-(cutoff.ln() - mu) / sigma);
                if x < *cutoff {
                    let body = lognormal_partial_mean(*mu, *sigma, x) - lognormal_partial_mean(*mu, *sigma, *cutoff);
                    body + p_tail * pareto_partial_mean(*shape, *cutoff, *cutoff)
                } else {
                    p_tail * pareto_partial_mean(*shape, *cutoff, x)
                }
            }
            Dist::Empirical(p) => {
                // The atom at the first value, then each piece: a linear piece has density dc / dv,
                // a vertical one is an atom.
                let mut total = if p[0].0 > x { p[0].0 * p[0].1 } else { 0.0 };
                for w in p.windows(2) {
                    let ((v0, c0), (v1, c1)) = (w[0], w[1]);
                    let dc = c1 - c0;
                    if dc <= 0.0 {
                        continue;
                    }
                    if v1 <= v0 {
                        total += if v0 > x { v0 * dc } else { 0.0 };
                        continue;
                    }
                    let lo = x.clamp(v0, v1);
                    total += dc / (v1 - v0) * 0.5 * (v1 * v1 - lo * lo);
                }
                total
            }
            Dist::Discrete { values, cum } => {
                let mut prev = 0.0;
                let mut total = 0.0;
                for (v, c) in values.iter().zip(cum) {
                    if *v > x {
                        total += v * (c - prev);
                    }
                    prev = *c;
                }
                total
            }
        }
    }

    /// The smallest value a draw can take (the lower end of the support).
    pub(crate) fn lower_bound(&self) -> f64 {
        match self {
            Dist::Constant(v) => *v,
            Dist::Uniform { min, .. } | Dist::BoundedPareto { min, .. } => *min,
            Dist::Pareto { scale, .. } => *scale,
            Dist::Exponential { .. } | Dist::Lognormal { .. } | Dist::LognormalPareto { .. } => 0.0,
            Dist::Empirical(points) => points.first().map_or(0.0, |p| p.0),
            Dist::Discrete { values, cum } => {
                // Values with zero weight are never drawn.
                let mut prev = 0.0;
                values
                    .iter()
                    .zip(cum)
                    .filter_map(|(v, c)| {
                        let p = c - prev;
                        prev = *c;
                        (p > 0.0).then_some(*v)
                    })
                    .fold(f64::INFINITY, f64::min)
            }
        }
    }

    /// The largest value a draw can take, if the support is bounded.
    pub(crate) fn upper_bound(&self) -> Option<f64> {
        match self {
            Dist::Constant(v) => Some(*v),
            Dist::Uniform { max, .. } | Dist::BoundedPareto { max, .. } => Some(*max),
            Dist::Exponential { .. } | Dist::Pareto { .. } | Dist::Lognormal { .. } | Dist::LognormalPareto { .. } => {
                None
            }
            Dist::Empirical(points) => points.last().map(|p| p.0),
            Dist::Discrete { values, .. } => Some(values.iter().copied().fold(0.0, f64::max)),
        }
    }

    /// The median.
    pub(crate) fn median(&self) -> f64 {
        self.quantile(0.5)
    }

    /// The mean, where it is finite and known in closed form (or by summation).
    pub(crate) fn mean(&self) -> Option<f64> {
        match self {
            Dist::Constant(v) => Some(*v),
            Dist::Uniform { min, max } => Some(0.5 * (min + max)),
            Dist::Exponential { mean } => Some(*mean),
            Dist::Pareto { shape, scale } => (*shape > 1.0).then(|| shape * scale / (shape - 1.0)),
            Dist::BoundedPareto { shape: a, min: l, max: h } => {
                let c = 1.0 - (l / h).powf(*a);
                if (a - 1.0).abs() < 1e-12 {
                    Some(l * (h / l).ln() / c)
                } else {
                    Some(l.powf(*a) / c * a / (a - 1.0) * (l.powf(1.0 - a) - h.powf(1.0 - a)))
                }
            }
            Dist::Lognormal { mu, sigma } => Some((mu + 0.5 * sigma * sigma).exp()),
            Dist::LognormalPareto { mu, sigma, cutoff, shape } => {
                // Body: E[X; X <= c] = exp(mu + sigma^2/2) * Phi((ln c - mu - sigma^2) / sigma);
                // tail: P(X > c) * shape * c / (shape - 1), finite only for shape > 1.
                let body = (mu + 0.5 * sigma * sigma).exp() * normal_cdf((cutoff.ln() - mu - sigma * sigma) / sigma);
                let p_tail = 1.0 - normal_cdf((cutoff.ln() - mu) / sigma);
                (*shape > 1.0).then(|| body + p_tail * shape * cutoff / (shape - 1.0))
            }
            Dist::Empirical(p) => {
                // Linear pieces: the mean of each is the midpoint of its values.
                Some(p.windows(2).map(|w| (w[1].1 - w[0].1) * 0.5 * (w[0].0 + w[1].0)).sum::<f64>() + p[0].0 * p[0].1)
            }
            Dist::Discrete { values, cum } => {
                let mut prev = 0.0;
                Some(
                    values
                        .iter()
                        .zip(cum)
                        .map(|(v, c)| {
                            let p = c - prev;
                            prev = *c;
                            v * p
                        })
                        .sum(),
                )
            }
        }
    }
}

/// `E[X; X > x]` of a Pareto(`shape`, `scale`): `shape scale (scale / x)^(shape - 1) / (shape - 1)`
/// for `x >= scale`; infinite for `shape <= 1`.
fn pareto_partial_mean(shape: f64, scale: f64, x: f64) -> f64 {
    if shape <= 1.0 {
        return f64::INFINITY;
    }
    let x = x.max(scale);
    shape * scale * (scale / x).powf(shape - 1.0) / (shape - 1.0)
}

/// `E[X; X > x]` of `exp(N(mu, sigma^2))`: `exp(mu + sigma^2 / 2) P(Z > (ln x - mu - sigma^2) / sigma)`.
fn lognormal_partial_mean(mu: f64, sigma: f64, x: f64) -> f64 {
    let m = (mu + 0.5 * sigma * sigma).exp();
    if x <= 0.0 {
        return m;
    }
    m * normal_cdf(-(x.ln() - mu - sigma * sigma) / sigma)
}

/// A standard normal draw (Box-Muller; two uniforms, the second value is discarded
/// so that every draw consumes the stream the same way).
fn normal(rng: &mut SimRng) -> f64 {
    let u1 = 1.0 - rng.uniform(); // (0, 1]
    let u2 = rng.uniform();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// The standard normal CDF, `Phi(x) = erfc(-x / sqrt 2) / 2`, with Numerical Recipes' `erfcc`
/// (Press et al. 1992, §6.2: Chebyshev fit, fractional error below 1.2e-7 everywhere).
fn normal_cdf(x: f64) -> f64 {
    let z = -x / std::f64::consts::SQRT_2;
    let a = z.abs();
    let t = 1.0 / (1.0 + 0.5 * a);
    let poly = -a * a - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98 + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let erfc = t * poly.exp();
    0.5 * if z >= 0.0 { erfc } else { 2.0 - erfc }
}

/// The standard normal quantile `Phi^-1(u)` (Acklam 2003: rational approximations on
/// three regions, relative error below 1.2e-9); infinite at 0 and 1.
fn normal_quantile(u: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] =
        [7.784_695_709_041_462e-3, 3.224_671_290_700_398e-1, 2.445_134_137_142_996, 3.754_408_661_907_416];
    const LOW: f64 = 0.024_25;
    if u <= 0.0 {
        return f64::NEG_INFINITY;
    }
    if u >= 1.0 {
        return f64::INFINITY;
    }
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    if u < LOW {
        tail((-2.0 * u.ln()).sqrt())
    } else if u > 1.0 - LOW {
        -tail((-2.0 * (1.0 - u).ln()).sqrt())
    } else {
        let q = u - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

/// A distribution of a workload field, for callers outside the simulator
/// (Python's `ecnsim.distributions`, analytic models): the same law a run draws from.
#[derive(Clone, Debug, PartialEq)]
pub struct Distribution(Dist);

impl Distribution {
    /// A checked distribution from its scenario form (`{"type": "pareto", ...}` as JSON).
    ///
    /// # Errors
    /// [`SimError::InvalidSpec`] naming the field (`distribution.<field>`) and the rule it breaks.
    pub fn from_json(text: &str) -> Result<Self, SimError> {
        let spec: DistSpec = serde_json::from_str(text)
            .map_err(|e| SimError::InvalidSpec { path: "distribution".to_owned(), msg: e.to_string() })?;
        check(&spec).map_err(|(f, msg)| SimError::InvalidSpec { path: format!("distribution.{f}"), msg })?;
        Ok(Distribution(Dist::from_spec(&spec)))
    }
    /// The quantile at `u` in `[0, 1]` (the smallest `x` with `P(X <= x) >= u`).
    #[must_use]
    pub fn quantile(&self, u: f64) -> f64 {
        self.0.quantile(u)
    }
    /// The mean, where it is finite and known in closed form.
    #[must_use]
    pub fn mean(&self) -> Option<f64> {
        self.0.mean()
    }
    /// The distribution function `P(X <= x)`.
    #[must_use]
    pub fn cdf(&self, x: f64) -> f64 {
        self.0.cdf(x)
    }
    /// The survival function `P(X > x)`, computed directly (heavy tails keep their precision).
    #[must_use]
    pub fn sf(&self, x: f64) -> f64 {
        self.0.sf(x)
    }
    /// The partial mean `E[X; X > x]` (infinite where it diverges).
    #[must_use]
    pub fn partial_mean(&self, x: f64) -> f64 {
        self.0.partial_mean(x)
    }
    /// `n` draws from the stream a component named `component` gets under `seed`.
    #[must_use]
    pub fn sample(&self, n: usize, seed: u64, component: &str) -> Vec<f64> {
        let mut rng = SimRng::for_component(seed, component);
        (0..n).map(|_| self.0.sample(&mut rng)).collect()
    }
    /// The support points and probabilities of a discrete distribution (`None` otherwise).
    #[must_use]
    pub fn atoms(&self) -> Option<(Vec<f64>, Vec<f64>)> {
        match &self.0 {
            Dist::Discrete { values, cum } => {
                let mut prev = 0.0;
                let probs = cum
                    .iter()
                    .map(|c| {
                        let p = c - prev;
                        prev = *c;
                        p
                    })
                    .collect();
                Some((values.clone(), probs))
            }
            Dist::Constant(v) => Some((vec![*v], vec![1.0])),
            _ => None,
        }
    }
    /// The default distributions of workload model `model` (`"http"`, `"websessions"`) in their
    /// scenario form, as JSON `{field: distribution}`; `None` for a model without any.
    #[must_use]
    pub fn workload_defaults_json(model: &str) -> Option<String> {
        let d = match model {
            "http" => crate::app::http::defaults(),
            "websessions" => crate::app::websessions::defaults(),
            _ => return None,
        };
        let map: serde_json::Map<String, serde_json::Value> = d
            .into_iter()
            .map(|(k, v)| (k.to_owned(), serde_json::to_value(v).expect("a distribution serializes")))
            .collect();
        Some(serde_json::Value::Object(map).to_string())
    }
    /// The names of the shipped empirical tables.
    #[must_use]
    pub fn shipped_tables() -> Vec<&'static str> {
        shipped_names()
    }
    /// A shipped table's `(values, counts)`: the measured data as its source gives it.
    #[must_use]
    pub fn shipped_table(name: &str) -> Option<(Vec<f64>, Vec<f64>)> {
        shipped(name)
    }
}

/// Inverse of a piecewise-linear CDF at `u`.
fn interpolate(points: &[(f64, f64)], u: f64) -> f64 {
    let i = points.partition_point(|&(_, c)| c <= u);
    if i == 0 {
        return points[0].0;
    }
    if i >= points.len() {
        return points[points.len() - 1].0;
    }
    let (x0, c0) = points[i - 1];
    let (x1, c1) = points[i];
    if c1 <= c0 {
        return x1;
    }
    x0 + (x1 - x0) * (u - c0) / (c1 - c0)
}

/// Check a distribution's parameters; `Err(message)` names the field.
pub(crate) fn check(spec: &DistSpec) -> Result<(), (String, String)> {
    let bad = |field: &str, msg: String| Err((field.to_owned(), msg));
    let finite_pos = |v: f64| v.is_finite() && v > 0.0;
    match spec {
        DistSpec::Constant { value } if !(value.is_finite() && *value >= 0.0) => {
            bad("value", format!("must be finite and >= 0, got {value}"))
        }
        DistSpec::Uniform { min, max } if !(min.is_finite() && *min >= 0.0) => {
            bad("min", format!("must be finite and >= 0, got {min}"))
        }
        DistSpec::Uniform { min, max } if !(max.is_finite() && max >= min) => {
            bad("max", format!("must be finite and >= min ({min}), got {max}"))
        }
        DistSpec::Exponential { mean } if !finite_pos(*mean) => bad("mean", format!("must be > 0, got {mean}")),
        DistSpec::Pareto { shape, .. } | DistSpec::BoundedPareto { shape, .. } if !finite_pos(*shape) => {
            bad("shape", format!("must be > 0, got {shape}"))
        }
        DistSpec::Pareto { scale, .. } if !finite_pos(*scale) => bad("scale", format!("must be > 0, got {scale}")),
        DistSpec::BoundedPareto { min, .. } if !finite_pos(*min) => bad("min", format!("must be > 0, got {min}")),
        DistSpec::BoundedPareto { min, max, .. } if !(max.is_finite() && max > min) => {
            bad("max", format!("must be > min ({min}), got {max}"))
        }
        DistSpec::Lognormal { mu, .. } | DistSpec::LognormalPareto { mu, .. } if !mu.is_finite() => {
            bad("mu", format!("must be finite, got {mu}"))
        }
        DistSpec::Lognormal { sigma, .. } | DistSpec::LognormalPareto { sigma, .. } if !finite_pos(*sigma) => {
            bad("sigma", format!("must be > 0, got {sigma}"))
        }
        DistSpec::LognormalPareto { cutoff, .. } if !finite_pos(*cutoff) => {
            bad("cutoff", format!("must be > 0, got {cutoff}"))
        }
        DistSpec::LognormalPareto { shape, .. } if !finite_pos(*shape) => {
            bad("shape", format!("must be > 0, got {shape}"))
        }
        DistSpec::Empirical { table: Some(_), points: Some(_) } => {
            bad("points", "give either table or points, not both".to_owned())
        }
        DistSpec::Empirical { table: None, points: None } => {
            bad("table", format!("give a shipped table ({}) or points", shipped_names().join(", ")))
        }
        DistSpec::Empirical { table: Some(t), .. } if shipped(t).is_none() => {
            bad("table", format!("unknown table {t:?}; shipped tables: {}", shipped_names().join(", ")))
        }
        DistSpec::Empirical { points: Some(p), .. } => check_points(p).or_else(|m| bad("points", m)),
        DistSpec::Discrete { values, weights } => {
            if values.is_empty() || values.len() != weights.len() {
                return bad(
                    "weights",
                    format!(
                        "need one weight per value and at least one value, got {} values and {} weights",
                        values.len(),
                        weights.len()
                    ),
                );
            }
            if let Some(v) = values.iter().find(|v| !(v.is_finite() && **v >= 0.0)) {
                return bad("values", format!("must be finite and >= 0, got {v}"));
            }
            if weights.iter().any(|w| !(w.is_finite() && *w >= 0.0)) || weights.iter().sum::<f64>() <= 0.0 {
                return bad("weights", "must be finite, >= 0 and not all 0".to_owned());
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn check_points(p: &[[f64; 2]]) -> Result<(), String> {
    if p.len() < 2 {
        return Err(format!("need at least 2 points, got {}", p.len()));
    }
    for (i, w) in p.windows(2).enumerate() {
        if !(w[1][0] >= w[0][0] && w[1][1] >= w[0][1]) {
            return Err(format!("values and cdf must be non-decreasing (points {i} and {})", i + 1));
        }
    }
    if p.iter().any(|[v, c]| !(v.is_finite() && *v >= 0.0 && (0.0..=1.0).contains(c))) {
        return Err("every value must be finite and >= 0 and every cdf in [0, 1]".to_owned());
    }
    if (p[p.len() - 1][1] - 1.0).abs() > 1e-9 {
        return Err(format!("the last cdf must be 1, got {}", p[p.len() - 1][1]));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draws(d: &Dist, n: usize, seed: u64) -> Vec<f64> {
        let mut rng = SimRng::for_component(seed, "dist-test");
        (0..n).map(|_| d.sample(&mut rng)).collect()
    }
    fn mean(v: &[f64]) -> f64 {
        v.iter().sum::<f64>() / v.len() as f64
    }
    fn quantile(v: &[f64], q: f64) -> f64 {
        let mut s = v.to_vec();
        s.sort_by(f64::total_cmp);
        s[((s.len() as f64 * q) as usize).min(s.len() - 1)]
    }

    /// Every kind of law, with parameters that exercise its pieces.
    fn every_law() -> Vec<Dist> {
        vec![
            Dist::Constant(3.0),
            Dist::Uniform { min: 1.0, max: 5.0 },
            Dist::Uniform { min: 2.0, max: 2.0 },
            Dist::Exponential { mean: 2.0 },
            Dist::Pareto { shape: 1.5, scale: 2.0 },
            Dist::BoundedPareto { shape: 0.9, min: 760.0, max: 1e6 },
            Dist::BoundedPareto { shape: 1.0, min: 1.0, max: 100.0 },
            Dist::Lognormal { mu: 1.0, sigma: 0.8 },
            Dist::LognormalPareto { mu: 1.0, sigma: 0.8, cutoff: 6.0, shape: 1.7 },
            Dist::Empirical(vec![(1.0, 0.2), (2.0, 0.5), (2.0, 0.6), (4.0, 1.0)]),
            Dist::Discrete { values: vec![1.0, 3.0, 8.0], cum: vec![0.25, 0.75, 1.0] },
        ]
    }

    /// `E[X; X > x] = x P(X > x) + int_x^inf P(X > t) dt`, by the trapezoid rule on a log grid.
    fn partial_mean_by_quadrature(d: &Dist, x: f64) -> f64 {
        let hi = d.quantile(1.0 - 1e-13).max(x) * 50.0;
        let lo = x.max(1e-9);
        let n = 100_000;
        let (a, b) = (lo.ln(), hi.ln());
        let mut total = 0.0;
        let mut prev = (lo, d.sf(lo));
        for i in 1..=n {
            let t = (a + (b - a) * f64::from(i) / f64::from(n)).exp();
            let s = d.sf(t);
            total += 0.5 * (s + prev.1) * (t - prev.0);
            prev = (t, s);
        }
        let below = if x < lo { (lo - x.max(0.0)) * d.sf(x) } else { 0.0 };
        x.max(0.0) * d.sf(x) + below + total
    }

    #[test]
    fn survival_is_one_minus_the_distribution_function() {
        for d in every_law() {
            for &x in &[0.0, 0.5, 1.0, 2.0, 2.5, 3.0, 4.0, 7.0, 50.0, 5000.0, 1e5, 2e6] {
                assert!((d.sf(x) + d.cdf(x) - 1.0).abs() < 1e-12, "{d:?} at {x}: {} {}", d.sf(x), d.cdf(x));
            }
        }
        // Far in a tail the survival function keeps its relative precision (1 - cdf would be 0).
        let p = Dist::Pareto { shape: 2.0, scale: 1.0 };
        assert!((p.sf(1e9) / 1e-18 - 1.0).abs() < 1e-12);
        let ln = Dist::Lognormal { mu: 0.0, sigma: 1.0 };
        // P(Z > 10) = 7.62e-24; Numerical Recipes' erfcc keeps 1.2e-7 relative precision.
        assert!((ln.sf(10f64.exp()) / 7.619_853_024_160_527e-24 - 1.0).abs() < 2e-7);
    }

    #[test]
    fn partial_means_match_quadrature_of_the_survival_function() {
        for d in every_law() {
            let m = d.mean().unwrap();
            assert!((d.partial_mean(f64::NEG_INFINITY) / m - 1.0).abs() < 1e-12, "{d:?}");
            for &x in &[0.0, 1.5, 2.0, 3.5, 6.0, 7.0, 900.0, 5e4] {
                let (exact, quad) = (d.partial_mean(x), partial_mean_by_quadrature(&d, x));
                let tol = 2e-4 * m.max(1.0) + 1e-6;
                assert!((exact - quad).abs() < tol, "{d:?} at {x}: {exact} vs {quad}");
            }
        }
        assert!(Dist::Pareto { shape: 0.9, scale: 1.0 }.partial_mean(5.0).is_infinite());
        assert!(Dist::LognormalPareto { mu: 0.0, sigma: 1.0, cutoff: 2.0, shape: 1.0 }.partial_mean(1.0).is_infinite());
    }

    #[test]
    fn uniform_and_exponential_means() {
        let u = draws(&Dist::Uniform { min: 1.0, max: 5.0 }, 100_000, 1);
        // sd of U[1,5] is 4/sqrt(12) = 1.155; 5 standard errors at n = 1e5 is 0.018.
        assert!((mean(&u) - 3.0).abs() < 0.02, "{}", mean(&u));
        assert!(u.iter().all(|x| (1.0..5.0).contains(x)));
        let e = draws(&Dist::Exponential { mean: 2.0 }, 100_000, 2);
        assert!((mean(&e) - 2.0).abs() < 0.035, "{}", mean(&e));
        assert!((quantile(&e, 0.5) - 2.0 * std::f64::consts::LN_2).abs() < 0.03);
    }

    #[test]
    fn pareto_quantiles_match_the_formula() {
        let d = Dist::Pareto { shape: 1.5, scale: 2.0 };
        let v = draws(&d, 100_000, 3);
        // Median: scale * 2^(1/shape).
        let m = 2.0 * 2f64.powf(1.0 / 1.5);
        assert!((quantile(&v, 0.5) / m - 1.0).abs() < 0.02);
        assert!(v.iter().all(|&x| x >= 2.0));
        assert!((d.mean().unwrap() - 6.0).abs() < 1e-12);
    }

    #[test]
    fn bounded_pareto_mean_matches_closed_form_and_bounds_hold() {
        let d = Dist::BoundedPareto { shape: 1.2, min: 1000.0, max: 100_000.0 };
        let v = draws(&d, 200_000, 4);
        assert!(v.iter().all(|&x| (1000.0..=100_000.0).contains(&x)));
        let m = d.mean().unwrap();
        assert!((mean(&v) / m - 1.0).abs() < 0.02, "{} vs {m}", mean(&v));
    }

    #[test]
    fn lognormal_median_is_exp_mu() {
        let v = draws(&Dist::Lognormal { mu: 8.0, sigma: 1.0 }, 100_000, 5);
        assert!((quantile(&v, 0.5) / 8f64.exp() - 1.0).abs() < 0.02);
        assert!((mean(&v) / (8.5f64).exp() - 1.0).abs() < 0.03);
    }

    #[test]
    fn lognormal_pareto_tail_starts_at_the_cutoff() {
        let d = Dist::LognormalPareto { mu: 8.0, sigma: 1.0, cutoff: 10_000.0, shape: 1.2 };
        let v = draws(&d, 100_000, 6);
        // P(LN > 10000) = P(Z > (ln 1e4 - 8) / 1) = P(Z > 1.21) = 0.113; above the
        // cutoff every draw is Pareto, whose median is cutoff * 2^(1/1.2).
        let above: Vec<f64> = v.iter().copied().filter(|&x| x > 10_000.0).collect();
        let p = above.len() as f64 / v.len() as f64;
        assert!((p - 0.113).abs() < 0.005, "{p}");
        assert!((quantile(&above, 0.5) / (10_000.0 * 2f64.powf(1.0 / 1.2)) - 1.0).abs() < 0.05);
    }

    #[test]
    fn empirical_inverts_the_table() {
        let d = Dist::Empirical(vec![(0.0, 0.0), (10.0, 0.5), (110.0, 1.0)]);
        let v = draws(&d, 100_000, 7);
        assert!((quantile(&v, 0.5) - 10.0).abs() < 0.5);
        assert!((quantile(&v, 0.75) - 60.0).abs() < 1.5);
        assert!((d.mean().unwrap() - (0.5 * 5.0 + 0.5 * 60.0)).abs() < 1e-12);
        assert!((mean(&v) - 32.5).abs() < 0.5);
    }

    /// The source's own cumulative column at a few of its rows (ns-2.35
    /// tcl/http/data/HttpReplyLength.cdf, third column): the transcription of the
    /// counts is checked against it, so a mistyped count shifts every later row.
    const MAH97_REPLY_CHECKPOINTS: &[(f64, f64)] = &[
        (1025.0, 0.343_170_731_707),
        (2112.0, 0.502_439_024_39),
        (3100.0, 0.635_609_756_098),
        (4797.0, 0.75),
        (5001.0, 0.759_268_292_683),
        (10379.0, 0.88),
        (20344.0, 0.94),
        (29274.0, 0.964_146_341_463),
        (67379.0, 0.99),
        (1_636_039.0, 1.0),
    ];

    #[test]
    fn shipped_tables_match_their_source_and_total() {
        let (v, c) = shipped("mah97_reply").unwrap();
        assert_eq!(c.iter().sum::<f64>(), 4100.0);
        assert!(v.windows(2).all(|w| w[0] < w[1]));
        let total: f64 = c.iter().sum();
        let mut acc = 0.0;
        let cdf: Vec<(f64, f64)> = v
            .iter()
            .zip(&c)
            .map(|(x, n)| {
                acc += n;
                (*x, acc / total)
            })
            .collect();
        for &(x, p) in MAH97_REPLY_CHECKPOINTS {
            let got = cdf.iter().find(|(y, _)| *y == x).expect("checkpoint row present").1;
            assert!((got - p).abs() < 1e-9, "F({x}) = {got}, source {p}");
        }
        let (_, c) = shipped("mah97_request").unwrap();
        assert_eq!(c.iter().sum::<f64>(), 4100.0);
        let (v, c) = shipped("mah97_connections").unwrap();
        assert_eq!(c.iter().sum::<f64>(), 1444.0);
        assert_eq!((v[0], c[0]), (1.0, 739.0));
    }

    #[test]
    fn mah97_reply_median_fits_in_two_segments() {
        // RFC 2415 §3: "the median size of both primary and in-line URLs fits completely into
        // two packets" (1460-byte segments: 2920 bytes). Mah's table: median 2112 bytes.
        let d = Dist::from_spec(&DistSpec::Empirical { table: Some("mah97_reply".into()), points: None });
        assert_eq!(d.quantile(0.5), 2112.0);
        assert!(d.quantile(0.5) <= 2.0 * 1460.0);
        // Mean 7231 B (sum of value * count / 4100).
        assert!((d.mean().unwrap() - 7230.97).abs() < 0.01, "{:?}", d.mean());
    }

    #[test]
    fn sampled_quantiles_of_shipped_tables_match_the_source_within_sampling_error() {
        // For each quantile q the sampled q-quantile must lie between the source's
        // (q - e)- and (q + e)-quantiles, e = 4 standard errors of an empirical CDF
        // at n = 100 000 (sqrt(q(1-q)/n) <= 0.0016).
        let n = 100_000;
        for name in shipped_names() {
            let d = Dist::from_spec(&DistSpec::Empirical { table: Some(name.into()), points: None });
            let v = draws(&d, n, 11);
            for q in [0.1, 0.25, 0.5, 0.75, 0.9, 0.99] {
                let e = 4.0 * (q * (1.0 - q) / n as f64).sqrt();
                let got = quantile(&v, q);
                assert!(
                    d.quantile(q - e) <= got && got <= d.quantile(q + e),
                    "{name} q={q}: sampled {got}, source [{}, {}]",
                    d.quantile(q - e),
                    d.quantile(q + e)
                );
            }
        }
    }

    #[test]
    fn quantile_inverts_every_closed_form() {
        let cases = [
            Dist::Uniform { min: 1.0, max: 5.0 },
            Dist::Exponential { mean: 2.0 },
            Dist::Pareto { shape: 1.5, scale: 2.0 },
            Dist::BoundedPareto { shape: 0.9, min: 760.0, max: 1e6 },
            Dist::Lognormal { mu: 8.0, sigma: 1.0 },
            Dist::LognormalPareto { mu: 8.0, sigma: 1.0, cutoff: 10_000.0, shape: 1.2 },
        ];
        for (k, d) in cases.iter().enumerate() {
            let v = draws(d, 100_000, 20 + k as u64);
            for q in [0.1, 0.5, 0.9] {
                let rel = quantile(&v, q) / d.quantile(q) - 1.0;
                assert!(rel.abs() < 0.03, "{d:?} q={q}: {rel}");
            }
        }
        assert!((Dist::Lognormal { mu: 0.0, sigma: 1.0 }.quantile(0.975).ln() - 1.959_964).abs() < 1e-6);
        assert!((normal_cdf(1.959_964) - 0.975).abs() < 1e-7);
    }

    #[test]
    fn cdf_inverts_quantile_and_matches_the_draws() {
        let cases = [
            Dist::Uniform { min: 1.0, max: 5.0 },
            Dist::Exponential { mean: 2.0 },
            Dist::Pareto { shape: 1.5, scale: 2.0 },
            Dist::BoundedPareto { shape: 0.9, min: 760.0, max: 1e6 },
            Dist::Lognormal { mu: 8.0, sigma: 1.0 },
            Dist::LognormalPareto { mu: 8.0, sigma: 1.0, cutoff: 10_000.0, shape: 1.2 },
            Dist::Empirical(vec![(0.0, 0.0), (10.0, 0.5), (110.0, 1.0)]),
        ];
        for (k, d) in cases.iter().enumerate() {
            for u in [0.05, 0.3, 0.5, 0.8, 0.99] {
                assert!((d.cdf(d.quantile(u)) - u).abs() < 1e-6, "{d:?} u={u}");
            }
            let v = draws(d, 50_000, 40 + k as u64);
            let x = d.quantile(0.7);
            let share = v.iter().filter(|&&y| y <= x).count() as f64 / v.len() as f64;
            // Binomial sd at n = 5e4 and p = 0.7 is 0.002; allow 4 sd.
            assert!((share - 0.7).abs() < 0.009, "{d:?}: {share}");
        }
        let d = Dist::from_spec(&DistSpec::Discrete { values: vec![16_000.0, 8_000.0], weights: vec![1.0, 3.0] });
        assert_eq!((d.cdf(7_999.0), d.cdf(8_000.0), d.cdf(15_999.0), d.cdf(16_000.0)), (0.0, 0.75, 0.75, 1.0));
    }

    #[test]
    fn lognormal_pareto_mean_matches_samples() {
        let d = Dist::LognormalPareto { mu: 8.0, sigma: 1.0, cutoff: 10_000.0, shape: 2.5 };
        let v = draws(&d, 400_000, 12);
        let m = d.mean().unwrap();
        assert!((mean(&v) / m - 1.0).abs() < 0.02, "{} vs {m}", mean(&v));
        assert!(Dist::LognormalPareto { mu: 8.0, sigma: 1.0, cutoff: 1e4, shape: 0.9 }.mean().is_none());
    }

    #[test]
    fn distribution_from_json_names_the_field() {
        let e = Distribution::from_json(r#"{"type": "pareto", "shape": -1, "scale": 1}"#).unwrap_err();
        assert!(e.to_string().contains("distribution.shape"), "{e}");
        let e = Distribution::from_json(r#"{"type": "empirical", "table": "nope"}"#).unwrap_err();
        assert!(e.to_string().contains("mah97_reply"), "{e}");
        let d =
            Distribution::from_json(r#"{"type": "discrete", "values": [64000, 8000, 16000], "weights": [45, 35, 20]}"#)
                .unwrap();
        let (v, p) = d.atoms().unwrap();
        assert_eq!(v, vec![8000.0, 16000.0, 64000.0]);
        assert!((p[0] - 0.35).abs() < 1e-12 && (p[2] - 0.45).abs() < 1e-12);
        assert_eq!(d.quantile(0.35), 8000.0);
        assert_eq!(d.quantile(0.36), 16000.0);
    }

    #[test]
    fn discrete_choice_honours_weights() {
        let d = Dist::Discrete { values: vec![8000.0, 16000.0, 64000.0], cum: vec![0.35, 0.55, 1.0] };
        let v = draws(&d, 100_000, 9);
        let share = |x: f64| v.iter().filter(|&&y| y == x).count() as f64 / v.len() as f64;
        // Binomial sd at n = 1e5 is below 0.0016; allow 4 sd.
        assert!((share(8000.0) - 0.35).abs() < 0.006);
        assert!((share(16000.0) - 0.20).abs() < 0.006);
        assert!((share(64000.0) - 0.45).abs() < 0.006);
    }

    #[test]
    fn web_object_default_has_a_mean_near_7_2_kb_and_a_heavy_top() {
        let d = crate::app::websessions::default("object_size");
        let m = d.mean().unwrap();
        assert!((m - 7200.0).abs() < 100.0, "{m}");
        let mut v = draws(&d, 200_000, 10);
        v.sort_by(f64::total_cmp);
        let total: f64 = v.iter().sum();
        let top: f64 = v[(v.len() as f64 * 0.85) as usize..].iter().sum();
        let share = top / total;
        // Smith, Campos, Jeffay & Ott 2001: about 80% of the bytes in the largest 15% of objects.
        assert!((0.72..0.85).contains(&share), "{share}");
    }
}
