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

use crate::rng::SimRng;
use crate::spec::DistSpec;

/// A shipped empirical table: its name and its text (`value cdf` per line).
const SHIPPED: &[(&str, &str)] = &[
    ("http_primary", include_str!("data/http_primary.cdf")),
    ("http_embedded", include_str!("data/http_embedded.cdf")),
];

/// The names of the shipped empirical tables.
pub(crate) fn shipped_names() -> Vec<&'static str> {
    SHIPPED.iter().map(|(n, _)| *n).collect()
}

/// Parse a shipped table into `(value, cdf)` points.
fn shipped(name: &str) -> Option<Vec<(f64, f64)>> {
    let text = SHIPPED.iter().find(|(n, _)| *n == name)?.1;
    let pts = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut it = l.split_whitespace().map(|x| x.parse::<f64>().expect("shipped table parses"));
            (it.next().expect("value"), it.next().expect("cdf"))
        })
        .collect();
    Some(pts)
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
                (Some(name), _) => Dist::Empirical(shipped(name).expect("validated: known table")),
                (None, Some(p)) => Dist::Empirical(p.iter().map(|&[v, c]| (v, c)).collect()),
                (None, None) => unreachable!("validated: table or points"),
            },
            DistSpec::Discrete { values, weights } => {
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
                Dist::Discrete { values: values.clone(), cum }
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

    /// The median (for the lognormal with a Pareto tail, a lower bound of it).
    pub(crate) fn median(&self) -> f64 {
        match self {
            Dist::Constant(v) => *v,
            Dist::Uniform { min, max } => 0.5 * (min + max),
            Dist::Exponential { mean } => mean * std::f64::consts::LN_2,
            Dist::Pareto { shape, scale } => scale * 2f64.powf(1.0 / shape),
            Dist::BoundedPareto { shape, min, max } => {
                let c = 1.0 - (min / max).powf(*shape);
                min / (1.0 - 0.5 * c).powf(1.0 / shape)
            }
            Dist::Lognormal { mu, .. } => mu.exp(),
            Dist::LognormalPareto { mu, cutoff, .. } => mu.exp().min(*cutoff),
            Dist::Empirical(points) => interpolate(points, 0.5),
            Dist::Discrete { values, cum } => values[cum.partition_point(|&c| c < 0.5).min(values.len() - 1)],
        }
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
            Dist::LognormalPareto { .. } => None,
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

/// A standard normal draw (Box-Muller; two uniforms, the second value is discarded
/// so that every draw consumes the stream the same way).
fn normal(rng: &mut SimRng) -> f64 {
    let u1 = 1.0 - rng.uniform(); // (0, 1]
    let u2 = rng.uniform();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
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

    #[test]
    fn shipped_http_tables_have_medians_within_two_segments() {
        // RFC 2415 §3 / STUDIES.md §2: the median primary and embedded object fit in two 1460-byte packets.
        for name in shipped_names() {
            let d = Dist::Empirical(shipped(name).unwrap());
            let v = draws(&d, 50_000, 8);
            let med = quantile(&v, 0.5);
            assert!(med <= 2920.0 && med > 1000.0, "{name}: median {med}");
        }
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
        let d = crate::app::websessions::default_object_size();
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
