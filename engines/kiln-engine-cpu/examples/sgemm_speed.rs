//! Times the CPU engine's GEMMs on random matrices: f32 at every instruction-set level this
//! processor has (the `gemm` crate, which the AVX-512 level runs on most shapes, also timed
//! directly), and bf16 on AMX tiles and with AVX-512 BF16 where the processor has them (square
//! products only). Best of 25 runs, all rayon threads:
//! `cargo run --release -p kiln-engine-cpu --example sgemm_speed [N | MxNxK] [gemm|avx2|...]`.

#[cfg(target_arch = "x86_64")]
use kiln_engine_cpu::fast::amx;
use kiln_engine_cpu::fast::isa::Isa;
use kiln_engine_cpu::fast::sgemm::sgemm;
use std::time::Instant;

fn main() {
    let arg = std::env::args().nth(1).unwrap_or_else(|| "1024".into());
    let dims: Vec<usize> = arg.split('x').filter_map(|d| d.parse().ok()).collect();
    let (m, n, k) = match dims[..] {
        [n] => (n, n, n),
        [m, n, k] => (m, n, k),
        _ => panic!("sgemm_speed: the size is N or MxNxK, not {arg}"),
    };
    let square = m == n && n == k;
    let only = std::env::args().nth(2);
    let wanted = |name: &str| only.as_deref().is_none_or(|o| o == name);
    let mut seed = 1u64;
    let mut rnd = || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
        (seed >> 40) as f32 / (1u64 << 24) as f32 - 0.5
    };
    let a: Vec<f32> = (0..m * k).map(|_| rnd()).collect();
    let b: Vec<f32> = (0..k * n).map(|_| rnd()).collect();
    let mut c = vec![0.0f32; m * n];
    let threads = rayon::current_num_threads();
    let flops = 2.0 * (m * n * k) as f64;
    let time = |f: &mut dyn FnMut()| {
        f();
        let mut best = f64::MAX;
        for _ in 0..25 {
            let t = Instant::now();
            f();
            best = best.min(t.elapsed().as_secs_f64());
        }
        best
    };
    let (k_i, n_i) = (k as isize, n as isize);
    if wanted("gemm") {
        // SAFETY: a is m×k, b k×n and c m×n, row-major (the crate takes column then row strides).
        let t = time(&mut || unsafe {
            gemm::gemm(
                m,
                n,
                k,
                c.as_mut_ptr(),
                1,
                n_i,
                false,
                a.as_ptr(),
                1,
                k_i,
                b.as_ptr(),
                1,
                n_i,
                0.0f32,
                1.0f32,
                false,
                false,
                false,
                gemm::Parallelism::Rayon(threads),
            )
        });
        println!("gemm crate   {arg}: {:.1} GFLOP/s", flops / t / 1e9);
    }
    for isa in Isa::ALL
        .into_iter()
        .filter(|i| i.is_available() && wanted(i.name()))
    {
        // SAFETY: as above; the level is available.
        let t = time(&mut || unsafe {
            sgemm(
                isa,
                m,
                n,
                k,
                (c.as_mut_ptr(), n_i, 1),
                (a.as_ptr(), k_i, 1),
                (b.as_ptr(), n_i, 1),
                false,
                threads,
            )
        });
        println!(
            "kiln {:8} {arg}: {:.1} GFLOP/s",
            isa.name(),
            flops / t / 1e9
        );
    }
    if !square {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    for kernel in [amx::Kernel::Tiles, amx::Kernel::Dot] {
        if !kernel.available() || !wanted("bf16") {
            continue;
        }
        use half::bf16;
        let ah: Vec<bf16> = a.iter().map(|&v| bf16::from_f32(v)).collect();
        let bh: Vec<bf16> = b.iter().map(|&v| bf16::from_f32(v)).collect();
        // The packed operands 64-byte aligned, as the engine's workspace lays them out: a tile
        // row that straddles two cache lines loads at about half the rate.
        #[derive(Clone, Copy)]
        #[repr(C, align(64))]
        struct Line([bf16; 32]);
        let lines = |len: usize| vec![Line([bf16::ZERO; 32]); len.div_ceil(32)];
        let (mut pa, mut pb) = (
            lines(amx::packed_a_len(n, n)),
            lines(amx::packed_b_len(n, n)),
        );
        let (pa_len, pb_len) = (amx::packed_a_len(n, n), amx::packed_b_len(n, n));
        let (pa_at, pb_at, c_at) = (
            pa.as_mut_ptr().cast::<bf16>(),
            pb.as_mut_ptr().cast::<bf16>(),
            c.as_mut_ptr(),
        );
        // SAFETY: pa and pb hold the packed forms of a and b (packed below before any
        // multiply is timed); c is n×n row-major; the kernel is available (checked above).
        let multiply = || unsafe {
            amx::gemm(
                kernel,
                amx::Left::Packed(pa_at),
                pb_at,
                n,
                0,
                n,
                0,
                n,
                (c_at, n_i, 1),
            )
        };
        let t = time(&mut || {
            // SAFETY: a and b are n×n row-major; pa and pb have room for their packed forms.
            unsafe {
                amx::pack_a(
                    ah.as_ptr(),
                    n,
                    n,
                    n_i,
                    1,
                    std::slice::from_raw_parts_mut(pa_at, pa_len),
                );
                amx::pack_b(
                    bh.as_ptr(),
                    n,
                    n,
                    n_i,
                    1,
                    std::slice::from_raw_parts_mut(pb_at, pb_len),
                );
            }
            multiply();
        });
        println!(
            "kiln bf16 {kernel:?} (1 thread, packing included) {n}^3: {:.1} GFLOP/s",
            flops / t / 1e9
        );
        let t = time(&mut || multiply());
        println!(
            "kiln bf16 {kernel:?} (1 thread, kernel only)      {n}^3: {:.1} GFLOP/s",
            flops / t / 1e9
        );
    }
}
