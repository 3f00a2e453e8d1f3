//! A conformance case: a frontend graph, the domains its inputs are drawn from, the outputs to
//! compare, and what the suite expects of the engines.

use crate::Tolerance;
use kiln::{DataType, Graph, Tensor};

/// The interval an input's random values are drawn from.
///
/// Values come from [`kiln::HostTensor::random`] (uniform in [-1, 1)) mapped linearly onto
/// `[lo, hi)`, rounded to a multiple of `step` when it is not 0 (so that ties and equalities
/// occur), then rounded to the tensor's data type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Domain {
    /// Lower end (inclusive).
    pub lo: f64,
    /// Upper end (exclusive before rounding to `step`).
    pub hi: f64,
    /// Grid the values are rounded to; 0 for none.
    pub step: f64,
}

impl Domain {
    /// [-1, 1): the default.
    pub const SYMMETRIC: Domain = Domain {
        lo: -1.0,
        hi: 1.0,
        step: 0.0,
    };
    /// [0.5, 2): away from zero, for divisors, logarithms, roots, reciprocals and pow bases.
    pub const POSITIVE: Domain = Domain {
        lo: 0.5,
        hi: 2.0,
        step: 0.0,
    };
    /// [-2, 2): exponents of pow.
    pub const EXPONENT: Domain = Domain {
        lo: -2.0,
        hi: 2.0,
        step: 0.0,
    };
    /// [-3, 3): wide enough to reach the tails of activations and the clips of relu.
    pub const WIDE: Domain = Domain {
        lo: -3.0,
        hi: 3.0,
        step: 0.0,
    };

    /// [-1, 1] in steps of 0.25: few distinct values, for comparisons and ties.
    pub const COARSE: Domain = Domain {
        lo: -1.0,
        hi: 1.0,
        step: 0.25,
    };

    /// An arbitrary interval.
    pub fn new(lo: f64, hi: f64) -> Domain {
        Domain { lo, hi, step: 0.0 }
    }

    /// The same domain with both ends multiplied by `factor`.
    pub fn scaled(self, factor: f64) -> Domain {
        Domain {
            lo: self.lo * factor,
            hi: self.hi * factor,
            step: self.step * factor,
        }
    }

    /// Maps `v` in [-1, 1) onto the domain.
    pub fn map(&self, v: f64) -> f64 {
        let x = self.lo + (v + 1.0) * 0.5 * (self.hi - self.lo);
        if self.step > 0.0 {
            (x / self.step).round() * self.step
        } else {
            x
        }
    }
}

/// One case of the suite. Build it with the frontend [`Graph`] API, declare every bound tensor
/// as an input (with its domain) or an output, then run it with [`crate::check`].
pub struct Case {
    pub(crate) name: String,
    pub(crate) graph: Graph,
    pub(crate) inputs: Vec<(Tensor, Domain)>,
    pub(crate) outputs: Vec<Tensor>,
    pub(crate) terms: usize,
    pub(crate) depth: usize,
    pub(crate) tolerance_factor: f64,
    pub(crate) tolerance_override: Option<Tolerance>,
    pub(crate) expected: Vec<String>,
    pub(crate) allow_non_finite: bool,
}

impl Case {
    /// A case named `name` (used in every failure message) over `graph`.
    pub fn new(name: impl Into<String>, graph: Graph) -> Case {
        Case {
            name: name.into(),
            graph,
            inputs: Vec::new(),
            outputs: Vec::new(),
            terms: 1,
            depth: 1,
            tolerance_factor: 1.0,
            tolerance_override: None,
            expected: Vec::new(),
            allow_non_finite: false,
        }
    }

    /// Declares `t` an input with values drawn from `domain`.
    pub fn input(mut self, t: &Tensor, domain: Domain) -> Case {
        self.inputs.push((t.clone(), domain));
        self
    }

    /// Declares `t` an output to compare (and marks it as a real output of the graph).
    pub fn output(mut self, t: &Tensor) -> Case {
        t.set_output(true);
        self.outputs.push(t.clone());
        self
    }

    /// Sets the number of terms of the longest sum behind the outputs (reduction length of a
    /// convolution, matmul or reduction), which scales the absolute tolerance.
    pub fn terms(mut self, terms: usize) -> Case {
        self.terms = terms.max(1);
        self
    }

    /// Sets the number of nodes an output passes through, which scales the tolerance.
    pub fn depth(mut self, depth: usize) -> Case {
        self.depth = depth.max(1);
        self
    }

    /// Multiplies the tolerance by `factor` (for modes whose conditioning amplifies f32 error).
    pub fn tolerance_factor(mut self, factor: f64) -> Case {
        self.tolerance_factor = factor.max(1.0);
        self
    }

    /// Replaces the computed tolerance of every output by `tolerance`.
    pub fn tolerance(mut self, tolerance: Tolerance) -> Case {
        self.tolerance_override = Some(tolerance);
        self
    }

    /// Requires engine `name` to claim the case (so the suite cannot pass by testing only the
    /// reference).
    pub fn expect_engine(mut self, name: &str) -> Case {
        if !self.expected.iter().any(|e| e == name) {
            self.expected.push(name.to_string());
        }
        self
    }

    /// Allows NaN and infinities in the reference's outputs (for special-value cases); by
    /// default a non-finite reference output fails the case, since it means the inputs left the
    /// domain where comparisons are meaningful.
    pub fn allow_non_finite(mut self) -> Case {
        self.allow_non_finite = true;
        self
    }

    /// The case's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The frontend graph.
    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// The engines the case requires to claim it.
    pub fn expected_engines(&self) -> &[String] {
        &self.expected
    }

    /// The tolerance of an output of type `dt`.
    pub fn tolerance_for(&self, dt: DataType) -> Tolerance {
        self.tolerance_override.unwrap_or_else(|| {
            Tolerance::for_output(dt, self.terms, self.depth).scaled(self.tolerance_factor)
        })
    }
}

impl std::fmt::Debug for Case {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Case")
            .field("name", &self.name)
            .field("inputs", &self.inputs.len())
            .field("outputs", &self.outputs.len())
            .field("expected", &self.expected)
            .finish()
    }
}
