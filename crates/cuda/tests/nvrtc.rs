//! Compiles every kernel file with NVRTC for sm_90 (the H200's architecture; sm_90a for
//! the file of Hopper-only instructions). Needs no
//! GPU, only libnvrtc: `.ci/run` installs it from PyPI. This test fails, rather than
//! skips, when NVRTC is missing, so that CI cannot pass without checking the kernels.

use ndgpu_cuda_runtime::kernels::{self, KernelFile};

#[test]
fn every_kernel_file_compiles_for_sm_90_and_no_default_kernel_spills() {
    assert!(
        kernels::nvrtc_present(),
        "libnvrtc.so.13 not found: install it with `pip install --target DIR nvidia-cuda-nvrtc==13.0.88` \
         and put DIR/nvidia/cu13/lib on LD_LIBRARY_PATH (.ci/run does this)"
    );
    let mut all = Vec::new();
    for file in KernelFile::ALL {
        let compiled =
            kernels::compile(file, &file.target("sm_90")).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            !compiled.cubin.is_empty(),
            "{} produced no machine code",
            file.file_name()
        );
        let res = kernels::parse_resources(&compiled.log);
        assert!(
            !res.is_empty(),
            "no ptxas report parsed from the NVRTC log of {} (NVRTC {:?}); the log begins:\n{}",
            file.file_name(),
            kernels::nvrtc_version(),
            compiled.log.chars().take(800).collect::<String>()
        );
        for r in &res {
            println!(
                "{:<12} {:<44} {:>3} registers {:>5} B stack {:>5} B spilled",
                file.file_name(),
                r.name,
                r.registers,
                r.stack_bytes,
                r.spill_bytes
            );
        }
        all.extend(res);
    }
    for name in ndgpu_cuda::default_kernels() {
        let r = all.iter().find(|r| r.name == name).unwrap_or_else(|| {
            panic!("default kernel {name} is not in any kernel file (is it extern \"C\"?)")
        });
        assert!(r.registers > 0, "no ptxas report for {name}");
        assert_eq!(
            r.spill_bytes, 0,
            "default kernel {name} spills {} bytes",
            r.spill_bytes
        );
    }
}

#[test]
fn ptxas_report_is_parsed() {
    let log = "ptxas info    : Compiling entry function 'k_f32' for 'sm_90'\n\
               ptxas info    : Function properties for k_f32\n\
               \x20   16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n\
               ptxas info    : Used 40 registers, used 1 barriers, 4096 bytes smem\n";
    let r = kernels::parse_resources(log);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].name, "k_f32");
    assert_eq!(
        (r[0].registers, r[0].stack_bytes, r[0].spill_bytes),
        (40, 16, 12)
    );
}
