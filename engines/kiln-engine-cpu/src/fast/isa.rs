//! The instruction sets the optimized CPU kernels are written for, which one this processor
//! runs, and the `isa` knob that records a plan's choice.
//!
//! A plan built with the knob on "auto" records the best level the build machine has (capped by
//! `KILN_CPU_ISA`), so a saved plan names the kernels it was built and measured with. Preparing a
//! plan (at build and at every load) runs the recorded level where this processor has it, and
//! otherwise the best level below it that it has, with one log line saying so: a plan never
//! executes an instruction its processor lacks.

use kiln_plugin_sdk::KnobDescriptor;
use std::fmt;
use std::sync::OnceLock;

/// Name of the knob that records which instruction set a plan's kernels use.
pub const ISA_KNOB: &str = "isa";
/// Environment variable that caps the instruction set of every CPU kernel in the process:
/// `portable`, `avx2`, `avx512`, `avx512bf16` or `amx` (e.g. to run the AVX2 path on an AVX-512
/// machine).
pub const ISA_ENV: &str = "KILN_CPU_ISA";

/// One level of kernels; each level's processor also runs every level below it. The levels are
/// ordered by [`Isa::ALL`], not by their knob values: `Avx512Bf16` came after `Amx` and took the
/// next free number, so that plans saved before it still mean what they meant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Isa {
    /// Plain Rust, vectorised by the compiler for the target's baseline (SSE2 on x86-64).
    Portable = 1,
    /// AVX2 with FMA (x86-64-v3): 8-lane f32 kernels.
    Avx2 = 2,
    /// AVX-512 F (x86-64-v4): 16-lane f32 kernels.
    Avx512 = 3,
    /// AVX-512 and AMX with bf16 (where the OS grants the tile state): bf16 GEMMs on AMX
    /// tiles; f32 GEMMs as at `Avx512`.
    Amx = 4,
    /// AVX-512 with its BF16 extension (`vdpbf16ps`, two bf16 products summed into each f32
    /// lane): bf16 GEMMs at twice the f32 FMA rate, on processors without AMX (AMD Zen 4 and
    /// later); everything else as at `Avx512`. Ranked between `Avx512` and `Amx`.
    Avx512Bf16 = 5,
}

impl Isa {
    /// Every level, lowest first.
    pub const ALL: [Isa; 5] = [
        Isa::Portable,
        Isa::Avx2,
        Isa::Avx512,
        Isa::Avx512Bf16,
        Isa::Amx,
    ];

    /// The level's place in [`Isa::ALL`], which orders the levels.
    fn rank(self) -> usize {
        match self {
            Isa::Portable => 0,
            Isa::Avx2 => 1,
            Isa::Avx512 => 2,
            Isa::Avx512Bf16 => 3,
            Isa::Amx => 4,
        }
    }

    /// The level a knob value names; `None` for 0 (auto) and for unknown values.
    pub fn from_knob(v: i64) -> Option<Isa> {
        Isa::ALL.into_iter().find(|i| *i as i64 == v)
    }

    /// The name used in logs, `kiln bench` and [`ISA_ENV`].
    pub fn name(self) -> &'static str {
        match self {
            Isa::Portable => "portable",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
            Isa::Avx512Bf16 => "avx512bf16",
            Isa::Amx => "amx",
        }
    }

    /// The level [`ISA_ENV`] spells `s` (case-insensitive).
    pub fn parse(s: &str) -> Option<Isa> {
        Isa::ALL
            .into_iter()
            .find(|i| i.name().eq_ignore_ascii_case(s.trim()))
    }

    /// Whether this processor (and its OS) can run the level's instructions.
    pub fn is_available(self) -> bool {
        match self {
            Isa::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => {
                std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("fma")
            }
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => {
                Isa::Avx2.is_available() && std::arch::is_x86_feature_detected!("avx512f")
            }
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512Bf16 => {
                Isa::Avx512.is_available() && std::arch::is_x86_feature_detected!("avx512bf16")
            }
            #[cfg(target_arch = "x86_64")]
            Isa::Amx => Isa::Avx512Bf16.is_available() && super::amx::available(),
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }
}

impl PartialOrd for Isa {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Isa {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.rank().cmp(&other.rank())
    }
}

impl fmt::Display for Isa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The best level this processor runs, capped by [`ISA_ENV`] when it is set (read once).
pub fn best_available() -> Isa {
    static BEST: OnceLock<Isa> = OnceLock::new();
    *BEST.get_or_init(|| {
        let hw = Isa::ALL
            .into_iter()
            .rev()
            .find(|i| i.is_available())
            .unwrap_or(Isa::Portable);
        match std::env::var(ISA_ENV) {
            Ok(v) => match Isa::parse(&v) {
                Some(cap) => hw.min(cap),
                None => {
                    eprintln!(
                        "kiln-cpu: {ISA_ENV}={v:?} is not one of portable, avx2, avx512, \
                         avx512bf16, amx; ignored"
                    );
                    hw
                }
            },
            Err(_) => hw,
        }
    })
}

/// The `isa` knob with id `id`: 0 (auto: the best level at build time) or a level's number.
pub fn isa_knob(id: i64) -> KnobDescriptor {
    KnobDescriptor {
        id,
        name: ISA_KNOB,
        min: 0,
        max: Isa::ALL.iter().map(|&i| i as i64).max().unwrap_or(0),
        stride: 1,
        default: 0,
    }
}

/// Replaces an auto (0) value of the knob with id `id` in `knobs` by [`best_available`],
/// capped at `useful` (the highest level whose kernels the graph can use: a graph with no bf16
/// GEMM gains nothing from AMX, so its plan should not ask for it). Only the build path calls
/// this, so a saved plan records a concrete level.
pub fn resolve_isa_knob(knobs: &mut [i64], id: i64, useful: Isa) {
    if let Some(v) = usize::try_from(id - 1).ok().and_then(|i| knobs.get_mut(i)) {
        if *v <= 0 {
            *v = best_available().min(useful) as i64;
        }
    }
}

/// The level recorded in `knobs` (knob id `id`); `None` for auto.
pub fn recorded_isa(knobs: &[i64], id: i64) -> Option<Isa> {
    usize::try_from(id - 1)
        .ok()
        .and_then(|i| knobs.get(i))
        .and_then(|&v| Isa::from_knob(v))
}

/// The level a plan prepared with `knobs` runs here: the recorded level when this processor has
/// it, else the best one below it (logged once per plan preparation, naming both), auto (0, a
/// direct `prepare` call) as [`best_available`].
pub fn isa_to_run(engine: &str, knobs: &[i64], id: i64) -> Isa {
    let recorded = recorded_isa(knobs, id);
    let best = best_available();
    match recorded {
        None => best,
        Some(want) if want <= best => want,
        Some(want) => {
            eprintln!(
                "kiln-cpu: {engine}: the plan's kernels are {want}, which this processor \
                 cannot run (or {ISA_ENV} excludes); running {best} instead"
            );
            best
        }
    }
}

/// What a plan's `isa` knob value means here, for descriptions of saved plans:
/// ` (avx512; runs here as avx2)`. The phrase "runs here as" is what `kiln bench` reads.
pub fn describe_knob(value: i64) -> String {
    let best = best_available();
    match Isa::from_knob(value) {
        Some(want) => format!(" ({want}; runs here as {})", want.min(best)),
        None => format!(" (auto; runs here as {best})"),
    }
}

/// Lane masks for the x86 kernels' masked loads and stores of a partial vector.
#[cfg(target_arch = "x86_64")]
pub(crate) mod masks {
    use std::arch::x86_64::*;

    /// Lanes 0..n (n <= 8) set: the mask of AVX2's masked loads and stores.
    #[target_feature(enable = "avx2")]
    pub(crate) fn ymm_lanes(n: usize) -> __m256i {
        _mm256_cmpgt_epi32(
            _mm256_set1_epi32(n as i32),
            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
        )
    }

    /// Lanes 0..n (n <= 16) set: the mask of AVX-512's masked loads and stores.
    #[target_feature(enable = "avx512f")]
    pub(crate) fn zmm_lanes(n: usize) -> __mmask16 {
        ((1u32 << n) - 1) as __mmask16
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_round_trip_through_knob_values_and_names() {
        for i in Isa::ALL {
            assert_eq!(Isa::from_knob(i as i64), Some(i));
            assert_eq!(Isa::parse(i.name()), Some(i));
            assert_eq!(Isa::parse(&i.name().to_uppercase()), Some(i));
        }
        assert_eq!(Isa::from_knob(0), None);
        assert_eq!(Isa::from_knob(99), None);
        assert_eq!(Isa::parse("sse9"), None);
    }

    #[test]
    fn the_best_level_is_available_and_a_recorded_level_never_exceeds_it() {
        let best = best_available();
        assert!(best.is_available());
        for i in Isa::ALL {
            let ran = isa_to_run("test", &[i as i64], 1);
            assert!(ran <= best && ran.is_available());
            assert_eq!(ran, i.min(best));
        }
        assert_eq!(isa_to_run("test", &[0], 1), best);
        let mut knobs = [0, 0];
        resolve_isa_knob(&mut knobs, 2, Isa::Amx);
        assert_eq!(knobs, [0, best as i64]);
        let mut knobs = [0];
        resolve_isa_knob(&mut knobs, 1, Isa::Avx2);
        assert_eq!(knobs, [best.min(Isa::Avx2) as i64]);
        assert_eq!(recorded_isa(&knobs, 1), Some(best.min(Isa::Avx2)));
        assert_eq!(recorded_isa(&[0], 1), None);
    }
}
